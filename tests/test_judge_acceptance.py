"""Judge acceptance stands on enough gold and on the interval, not the point: a lead writes
down at least the operator's floor of gold claims before the first run, acceptance is
refused below it, κ's interval widens for small samples and its low end must clear the
threshold, and after the first run a threshold may only tighten."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.judge_calibration import GoldPair, Threshold, calibrate, meets
from audit.models import Judge, JudgeAcceptance, JudgeRun, JudgeThresholdChange
from audit.selectors.decision import decision_report
from audit.selectors.judges import accepted_version
from audit.services import judges
from tests.conftest import refund_set_with_gold, run_queued_jobs
from tests.test_judges import AGREE

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("egress_loopback")]


@pytest.fixture
def refund(lead, fake_llm):
    audit_set, claims = refund_set_with_gold(lead)
    for claim, reply in zip(claims, AGREE, strict=True):
        fake_llm.behaviour[claim.text] = reply
    return audit_set


def _judge(audit_set, lead, base_url, **threshold) -> Judge:
    fields = {"name": "house", "base_url": base_url, "model": "fake-1", "timeout_seconds": 5.0}
    judge = judges.judge_create(audit_set=audit_set, fields=fields, user=lead)
    if threshold:
        judges.judge_threshold_set(judge=judge, user=lead, **threshold)
        judge.refresh_from_db()
    return judge


def _run(judge, lead) -> JudgeRun:
    run = judges.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
    run_queued_jobs()
    run.refresh_from_db()
    return run


def _agreeing(n: int) -> list[GoldPair]:
    labels = ["supported", "not_supported", "partially_supported"]
    return [
        GoldPair(
            claim_id=i,
            gold=labels[i % 3],
            judge=labels[i % 3],
            system="s",
            topics=(),
            trust="",
            has_numbers=False,
        )
        for i in range(n)
    ]


# ---------------------------------------------------------------- the interval, not the point


def test_three_agreeing_gold_claims_do_not_make_kappa_certain():
    result = calibrate(_agreeing(3))

    assert result.report.kappa == pytest.approx(1.0)
    assert result.kappa_ci.high == pytest.approx(1.0)
    assert result.kappa_ci.low < 0.2
    assert result.accuracy_ci.low < 0.5
    ok, why = meets(Threshold(min_kappa=0.6, min_gold=3), result)
    assert ok is False
    assert why == f"κ’s interval starts at {result.kappa_ci.low:.2f}, below the threshold 0.60."


def test_the_interval_narrows_with_more_gold_and_then_clears_the_threshold():
    result = calibrate(_agreeing(60))

    assert 0.85 < result.kappa_ci.low < 1.0
    assert meets(Threshold(min_kappa=0.6, min_gold=30, floor=30), result)[0] is True


def test_the_floor_refuses_fewer_gold_claims_whatever_the_threshold_says():
    result = calibrate(_agreeing(29))

    assert meets(Threshold(min_kappa=-1.0, min_gold=1, floor=30), result) == (
        False,
        "29 gold claims; no judge is accepted on fewer than 30.",
    )


# ----------------------------------------------------- the floor, before the first run


def test_a_threshold_below_the_floor_is_refused(refund, lead, fake_llm, settings):
    assert settings.JUDGE_MIN_GOLD_FLOOR == 30  # the default an operator gets
    judge = _judge(refund, lead, fake_llm.base_url)

    with pytest.raises(judges.JudgeError, match="at least 30 gold claims"):
        judges.judge_threshold_set(judge=judge, min_kappa=0.6, min_gold=3, user=lead)

    judge.refresh_from_db()
    assert judge.has_threshold is False
    with pytest.raises(judges.JudgeError, match="threshold before the first run"):
        judges.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)


def test_the_threshold_form_refuses_below_the_floor(refund, lead, fake_llm, client_for):
    judge = _judge(refund, lead, fake_llm.base_url)

    response = client_for(lead).post(
        reverse("audit:judge-threshold", args=[judge.pk]), {"min_kappa": "0.6", "min_gold": "3"}
    )

    assert response.status_code == 400
    assert response.context["threshold_form"].errors == {
        "min_gold": ["Ensure this value is greater than or equal to 30."]
    }
    assert 'min="30"' in response.text
    assert JudgeThresholdChange.objects.count() == 0


def test_a_threshold_written_below_a_raised_floor_cannot_run(refund, lead, fake_llm, settings):
    settings.JUDGE_MIN_GOLD_FLOOR = 3
    judge = _judge(refund, lead, fake_llm.base_url, min_kappa=0.0, min_gold=3)
    settings.JUDGE_MIN_GOLD_FLOOR = 30

    with pytest.raises(judges.JudgeError, match="write down at least 30"):
        judges.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
    assert JudgeRun.objects.count() == 0


def test_a_judge_on_three_gold_claims_is_not_accepted(refund, lead, fake_llm, client_for):
    judge = _judge(refund, lead, fake_llm.base_url, min_kappa=0.6, min_gold=30)
    run = _run(judge, lead)

    with pytest.raises(judges.JudgeError, match="3 gold claims; no judge is accepted on fewer"):
        judges.judge_accept(version=run.version, user=lead)

    page = client_for(lead).get(reverse("audit:judge-calibration", args=[judge.pk]))
    assert page.context["meets"] is False
    assert "Does not meet its threshold." in page.text
    assert "no judge is accepted on fewer than 30" in page.text
    assert page.context["overall"]  # the figures are shown, with their interval
    assert JudgeAcceptance.objects.count() == 0


def test_acceptance_reads_the_low_end_of_the_interval(refund, lead, fake_llm, settings):
    # The point κ is 1.00 on these three claims; the interval's low end is what counts.
    settings.JUDGE_MIN_GOLD_FLOOR = 3
    judge = _judge(refund, lead, fake_llm.base_url, min_kappa=0.6, min_gold=3)
    run = _run(judge, lead)

    with pytest.raises(judges.JudgeError, match="interval starts at 0.16, below the threshold"):
        judges.judge_accept(version=run.version, user=lead)
    assert JudgeAcceptance.objects.count() == 0


# --------------------------------------------- after the first run: only tighter


def test_after_the_first_run_a_threshold_may_only_tighten(refund, lead, fake_llm, client_for):
    judge = _judge(refund, lead, fake_llm.base_url, min_kappa=0.6, min_gold=40)
    _run(judge, lead)

    for looser in ({"min_kappa": 0.5, "min_gold": 40}, {"min_kappa": 0.6, "min_gold": 31}):
        with pytest.raises(judges.JudgeError, match="may only tighten"):
            judges.judge_threshold_set(judge=judge, user=lead, **looser)
    response = client_for(lead).post(
        reverse("audit:judge-threshold", args=[judge.pk]), {"min_kappa": "0.2", "min_gold": "40"}
    )
    assert response.status_code == 400
    assert "may only tighten" in response.text

    judges.judge_threshold_set(judge=judge, min_kappa=0.7, min_gold=45, user=lead)
    judge.refresh_from_db()
    assert (judge.min_kappa, judge.min_gold) == (0.7, 45)
    change = JudgeThresholdChange.objects.get(after_lock=True)
    assert change.after == {"min_kappa": 0.7, "min_gold": 45}


def test_an_acceptance_on_fewer_gold_claims_than_the_floor_stands_for_nobody(
    refund, lead, fake_llm, settings
):
    # Accepted under a floor of 3 (as every judge could be before the floor existed).
    settings.JUDGE_MIN_GOLD_FLOOR = 3
    judge = _judge(refund, lead, fake_llm.base_url, min_kappa=0.0, min_gold=3)
    judges.judge_accept(version=_run(judge, lead).version, user=lead)
    assert accepted_version(audit_set=refund) is not None

    settings.JUDGE_MIN_GOLD_FLOOR = 30

    assert accepted_version(audit_set=refund) is None
    decision = decision_report(audit_set=refund, system="rag-v1", with_judge=True)
    assert decision["judge"] is None
