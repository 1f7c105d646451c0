"""Answer.no_citation_verifies as imports, claims_changed and the migration write it."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from audit import services
from audit.formats import parse_file
from audit.models import Answer, ClaimCheck
from tests.conftest import FIXTURES, import_file
from tests.formats.helpers import jsonl, native_line

pytestmark = pytest.mark.django_db

PASSAGES = [
    {"title": "Filing", "url": "", "text": "Revenue rose to 5 million in 2025."},
    {"title": "Staff", "url": "", "text": "Headcount grew by a tenth over the year."},
]
ANSWERS = {
    # [1] grounds neither number; [0] and [7] name passages never supplied.
    "every-check-fails": "Revenue rose to 9 million in 2031 [1]. Headcount grew [0]. Pay rose [7].",
    "one-verifies": "Revenue rose to 5 million in 2025 [1]. Pay rose [7].",
    "uncited": "Revenue rose. Headcount grew.",
}


def _import(audit_set, answers: dict[str, str] = ANSWERS) -> None:
    data = jsonl(
        *(
            native_line(answer_id=key, answer=text, passages=PASSAGES)
            for key, text in answers.items()
        )
    )
    services.answers_import(
        audit_set=audit_set, parsed=parse_file(data, "a.jsonl"), filename="a.jsonl", sha256="x"
    )


def _flags() -> dict[str, bool]:
    return dict(Answer.objects.values_list("external_id", "no_citation_verifies"))


def test_import_flags_the_answer_whose_every_citation_fails(audit_set):
    _import(audit_set)

    assert _flags() == {"every-check-fails": True, "one-verifies": False, "uncited": False}


def test_claims_changed_refreshes_the_flag_when_a_check_changes(audit_set):
    _import(audit_set)
    answer = Answer.objects.get(external_id="one-verifies")
    passing = ClaimCheck.objects.get(claim__answer=answer, claim__order=0)
    ClaimCheck.objects.filter(pk=passing.pk).update(label=ClaimCheck.Label.UNKNOWN)

    services.claims_changed(claim_ids=[passing.claim_id])

    assert _flags()["one-verifies"] is True
    ClaimCheck.objects.filter(pk=passing.pk).update(label=passing.label)
    services.set_changed(audit_set_id=audit_set.pk)
    assert _flags()["one-verifies"] is False


def test_backfill_writes_what_the_services_write(audit_set):
    migration = importlib.import_module("audit.migrations.0018_answer_no_citation_verifies")
    _import(audit_set)
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    import_file(audit_set, FIXTURES / "expertqa" / "expertqa_slice15.jsonl")
    written = _flags()
    Answer.objects.update(no_citation_verifies=False)

    migration.backfill(apps, None)

    assert _flags() == written
    assert sum(written.values()) >= 2
