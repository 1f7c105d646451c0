"""kill -9 the server mid-review: every acknowledged draft and submission survives."""

import sys

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from fault_test import run  # noqa: E402


def test_acknowledged_work_survives_kill_9_of_the_server():
    report = run(reviewers=4, seconds=8)

    assert report.drafts > 0
    assert report.submitted > 0
    assert report.lost == ()
