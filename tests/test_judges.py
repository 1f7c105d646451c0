"""Automatic judges run by the app, against the local fake endpoint (tests/fake_llm.py):
verdicts, stored errors for every fault, tokens, cancel and resume, calibration, acceptance."""

from __future__ import annotations

import socket

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.urls import reverse

from audit import services
from audit.models import (
    Adjudication,
    Assignment,
    Job,
    JudgeAcceptance,
    JudgeRun,
    JudgeVerdict,
    Rater,
    RaterLabel,
)
from audit.selectors.decision import decision_report
from audit.selectors.jobs import CANCEL_KEY
from audit.selectors.judges import judge_calibration, release_provenance, run_cost
from audit.services import judges
from tests import fake_llm as fake
from tests.conftest import api_client, refund_set_with_gold, run_queued_jobs
from tests.factories import submitted_sheet

# The refund set has three gold claims: below the operator's floor (30 by default).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("egress_loopback", "small_gold_floor")]

# Verdicts that agree with the refund example's gold, sentence numbers as the prompt shows
# them: S1 consumers' 30 days, S2 business 14 days, S3 refunds, S4 software.
AGREE = [
    {
        "judgment": "partially_supported",
        "evidence": [1],
        "unsupported_spans": ["Customers"],
        "rationale": "Business customers get 14 days.",
    },
    {"judgment": "supported", "evidence": [3], "rationale": "Stated in [2]."},
    {"judgment": "wrong_citation", "wrong_citation_passage": 3, "rationale": "[3] says it."},
]


def _judge(audit_set, lead, base_url, **extra):
    fields = {
        "name": "house",
        "base_url": base_url,
        "model": "fake-1",
        "max_concurrency": 2,
        "timeout_seconds": 5.0,
        "min_kappa": 0.0,
        "min_gold": 3,
        **extra,
    }
    return judges.judge_create(audit_set=audit_set, fields=fields, user=lead)


def _run(judge, lead, subset=JudgeRun.Subset.ALL) -> JudgeRun:
    run = judges.judge_run_start(judge=judge, subset=subset, user=lead)
    (job,) = run_queued_jobs()
    assert job.status == Job.Status.SUCCEEDED, job.error
    run.refresh_from_db()
    return run


@pytest.fixture
def refund(lead):
    return refund_set_with_gold(lead)


def test_a_run_stores_checked_verdicts_as_the_versions_rater_labels(refund, lead, fake_llm):
    audit_set, claims = refund
    for claim, reply in zip(claims, AGREE, strict=True):
        fake_llm.behaviour[claim.text] = reply
    judge = _judge(audit_set, lead, fake_llm.base_url)

    run = _run(judge, lead)

    verdicts = {v.claim_id: v for v in JudgeVerdict.objects.filter(run=run)}
    assert [verdicts[c.pk].judgment for c in claims] == [
        "partially_supported",
        "supported",
        "wrong_citation",
    ]
    assert [verdicts[c.pk].error for c in claims] == ["", "", ""]
    first = verdicts[claims[0].pk]
    consumers = "Consumers can return hardware within 30 days of delivery."
    assert first.evidence == [
        {"sentence": 1, "passage": 1, "start": 0, "end": len(consumers), "text": consumers}
    ]
    assert first.unsupported_spans == [{"text": "Customers", "start": 0, "end": 9}]
    assert verdicts[claims[2].pk].wrong_citation_passage == 3
    labels = RaterLabel.objects.filter(rater=run.version.rater).order_by("claim_id")
    assert [label.judgment for label in labels] == [v["judgment"] for v in AGREE]
    assert labels[0].note == f"judge house; model fake-1; prompt v1; run {run.pk}"
    cost = run_cost(run=run)
    assert (cost.judged, cost.errors, cost.prompt_tokens, cost.completion_tokens) == (
        3,
        0,
        300,
        60,
    )
    assert cost.tokens_per_1000 == 120_000
    assert cost.money_per_1000 is None


def test_the_prompt_holds_guidelines_question_marked_claim_and_numbered_sentences(
    refund, lead, fake_llm
):
    audit_set, claims = refund
    judge = _judge(audit_set, lead, fake_llm.base_url)

    _run(judge, lead)

    (request,) = [r for r in fake_llm.requests if r["claim"] == claims[1].text]
    prompt = request["body"]["messages"][0]["content"]
    assert "Judge only what is cited." in prompt
    assert "Can business customers return opened hardware?" in prompt
    assert "⟦Refunds go back to the original payment method. [2]⟧" in prompt or (
        "⟦Refunds go back to the original payment method.⟧" in prompt
    )
    assert "  S3: Refunds go back to the original payment method within 5 working days." in prompt
    assert "[2] Refunds (cited by the claim)" in prompt
    assert request["body"]["model"] == "fake-1"
    assert request["body"]["temperature"] == 0.0


def test_each_fault_is_a_clear_stored_error_and_the_run_goes_on(refund, lead, fake_llm):
    audit_set, claims = refund
    fake_llm.behaviour[claims[0].text] = fake.NOT_JSON
    fake_llm.behaviour[claims[1].text] = {"judgment": "mostly_true", "evidence": [1]}
    fake_llm.behaviour[claims[2].text] = {"judgment": "supported", "evidence": [9]}
    judge = _judge(audit_set, lead, fake_llm.base_url)

    run = _run(judge, lead)

    errors = dict(JudgeVerdict.objects.filter(run=run).values_list("claim_id", "error"))
    assert errors[claims[0].pk].startswith("Invalid reply (asked twice): The reply is not JSON")
    assert errors[claims[1].pk].startswith("Invalid reply (asked twice): judgment 'mostly_true'")
    assert errors[claims[2].pk] == (
        "Invalid reply (asked twice): evidence sentence 9 is out of range: the passages "
        "have 4 sentences."
    )
    # Asked once more each, then stored as an error: never guessed, no label written.
    assert [fake_llm.asked(c.text) for c in claims] == [2, 2, 2]
    assert not RaterLabel.objects.filter(rater=run.version.rater).exists()
    assert JudgeVerdict.objects.get(run=run, claim=claims[0]).attempts == 2


def test_an_invalid_reply_asked_again_once_can_still_become_a_verdict(refund, lead, fake_llm):
    audit_set, claims = refund
    fake_llm.behaviour[claims[1].text] = ["Sure! It is supported.", AGREE[1]]
    judge = _judge(audit_set, lead, fake_llm.base_url)

    run = _run(judge, lead)

    verdict = JudgeVerdict.objects.get(run=run, claim=claims[1])
    assert (verdict.judgment, verdict.error, verdict.attempts) == ("supported", "", 2)
    assert (verdict.prompt_tokens, verdict.completion_tokens) == (200, 40)


def test_429_500_and_timeouts_are_stored_errors(refund, lead, fake_llm):
    audit_set, claims = refund
    fake_llm.behaviour[claims[0].text] = fake.RATE_LIMITED
    fake_llm.behaviour[claims[1].text] = fake.SERVER_ERROR
    fake_llm.behaviour[claims[2].text] = fake.SLOW
    judge = _judge(audit_set, lead, fake_llm.base_url, timeout_seconds=0.5)

    run = _run(judge, lead)

    errors = dict(JudgeVerdict.objects.filter(run=run).values_list("claim_id", "error"))
    assert errors[claims[0].pk] == (
        "Rate limited: the endpoint answered 429 again (Retry-After '0')."
    )
    assert errors[claims[1].pk].startswith("The endpoint answered HTTP 500:")
    assert errors[claims[2].pk] == "Timeout: no reply within 0.5 s."
    assert fake_llm.asked(claims[0].text) == 2  # waited Retry-After once


def test_a_429_then_a_reply_is_a_verdict(refund, lead, fake_llm):
    audit_set, claims = refund
    fake_llm.behaviour[claims[1].text] = [fake.RATE_LIMITED, AGREE[1]]
    judge = _judge(audit_set, lead, fake_llm.base_url)

    run = _run(judge, lead)

    assert JudgeVerdict.objects.get(run=run, claim=claims[1]).judgment == "supported"


def test_an_unreachable_endpoint_is_a_stored_error_on_every_claim(refund, lead):
    audit_set, claims = refund
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    judge = _judge(audit_set, lead, f"http://127.0.0.1:{port}/v1")

    run = _run(judge, lead)

    errors = list(JudgeVerdict.objects.filter(run=run).values_list("error", flat=True))
    assert len(errors) == 3
    assert all(
        e.startswith(f"Unreachable: could not connect to http://127.0.0.1:{port}/v1")
        for e in errors
    )


def test_a_missing_key_variable_fails_the_job_naming_it(refund, lead, fake_llm, monkeypatch):
    audit_set, _claims = refund
    monkeypatch.delenv("CITEAUDIT_JUDGE_KEY_TEST", raising=False)
    judge = _judge(audit_set, lead, fake_llm.base_url, api_key_env="CITEAUDIT_JUDGE_KEY_TEST")
    judges.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)

    (job,) = run_queued_jobs()

    assert job.status == Job.Status.FAILED
    assert job.error == (
        "The environment variable CITEAUDIT_JUDGE_KEY_TEST is not set where the worker runs."
    )
    assert fake_llm.requests == []


def test_a_run_needs_a_written_threshold(refund, lead, fake_llm):
    audit_set, _claims = refund
    judge = _judge(audit_set, lead, fake_llm.base_url, min_kappa=None, min_gold=None)

    with pytest.raises(judges.JudgeError, match="threshold before the first run"):
        judges.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
    assert not Job.objects.exists()


def test_a_cancelled_run_keeps_its_verdicts_and_resuming_asks_only_the_rest(refund, lead, fake_llm):
    audit_set, claims = refund
    judge = _judge(audit_set, lead, fake_llm.base_url, max_concurrency=1)
    run = judges.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
    # The lead cancels while claim 1 is asked about; claim 2 is in flight (slow) when the
    # worker sees it, and claim 3 not yet sent.
    cancel = CANCEL_KEY.format(token=run.job.token)
    fake_llm.on_request = lambda claim: claim == claims[0].text and cache.set(cancel, True)
    fake_llm.behaviour[claims[1].text] = fake.SLOW
    fake_llm.slow_seconds = 0.5

    (job,) = run_queued_jobs()

    assert job.status == Job.Status.CANCELLED
    kept = set(JudgeVerdict.objects.filter(run=run).values_list("claim_id", flat=True))
    assert kept == {claims[0].pk, claims[1].pk}

    fake_llm.on_request = lambda claim: None
    judges.judge_run_resume(run=run, user=lead)
    (again,) = run_queued_jobs()

    assert again.status == Job.Status.SUCCEEDED
    assert JudgeVerdict.objects.filter(run=run).count() == 3
    assert [fake_llm.asked(c.text) for c in claims] == [1, 1, 1]


def test_a_judge_calling_refund_claim_1_supported_disagrees_with_gold_on_exactly_it(
    refund, lead, fake_llm
):
    audit_set, claims = refund
    for claim, reply in zip(claims, AGREE, strict=True):
        fake_llm.behaviour[claim.text] = reply
    fake_llm.behaviour[claims[0].text] = {"judgment": "supported", "evidence": [1]}
    judge = _judge(audit_set, lead, fake_llm.base_url)
    run = _run(judge, lead)

    overall, by = judge_calibration(version=run.version)

    assert overall.n == 3
    assert overall.report.disagreements == (claims[0].pk,)
    assert overall.report.accuracy == pytest.approx(2 / 3)
    gold_row = overall.report.confusion.labels.index("partially_supported")
    judge_col = overall.report.confusion.labels.index("supported")
    assert overall.report.confusion.counts[gold_row][judge_col] == 1
    assert [s.by for s in by] == [
        "System",
        "Topic",
        "Machine trust label",
        "Claim has numbers",
    ]
    numbers = {g.name: g.n for g in by[3].groups}
    assert numbers == {"has numbers": 1, "no numbers": 2}


def test_a_judge_is_accepted_only_when_it_meets_its_written_threshold(refund, lead, fake_llm):
    audit_set, claims = refund
    for claim, reply in zip(claims, AGREE, strict=True):
        fake_llm.behaviour[claim.text] = reply
    judge = _judge(audit_set, lead, fake_llm.base_url, min_gold=4)
    run = _run(judge, lead)

    with pytest.raises(judges.JudgeError, match="3 gold claims; the threshold needs 4"):
        judges.judge_accept(version=run.version, user=lead)
    # After the first run the threshold may only tighten (tests/test_judge_acceptance.py).
    with pytest.raises(judges.JudgeError, match="only tighten"):
        judges.judge_threshold_set(judge=judge, min_kappa=0.0, min_gold=3, user=lead)
    judges.judge_threshold_set(judge=judge, min_kappa=0.1, min_gold=4, user=lead)
    (change,) = judge.threshold_changes.all()
    assert change.after_lock is True

    other = _judge(audit_set, lead, fake_llm.base_url, name="house-3")
    acceptance = judges.judge_accept(version=_run(other, lead).version, user=lead)

    assert acceptance.n_gold == 3 and acceptance.kappa == pytest.approx(1.0)
    assert acceptance.kappa_low < 1.0  # three agreeing claims do not make κ certain
    assert acceptance.threshold == {"min_kappa": 0.0, "min_gold": 3, "changed_after_lock": False}
    assert JudgeAcceptance.objects.count() == 1


def test_a_new_template_makes_a_new_version_and_rater(refund, lead, fake_llm):
    audit_set, _claims = refund
    judge = _judge(audit_set, lead, fake_llm.base_url)
    first = judges.judge_current_version(judge)

    same = judges.judge_update(
        judge=judge, fields={"max_concurrency": 3}, template=first.template, user=lead
    )
    second = judges.judge_update(
        judge=judge, fields={}, template=first.template + "\nBe brief.", user=lead
    )

    assert same == first
    assert second.number == 2 and second.rater != first.rater


def test_accepted_verdicts_fill_only_claims_no_human_judged(refund, lead, fake_llm):
    audit_set, _claims, _judge_ = _accepted_with_two_claims_unjudged(refund, lead, fake_llm)

    (row,) = release_provenance(audit_set=audit_set)

    assert (row.claims, row.gold, row.provisional, row.unjudged) == (3, 1, 0, 2)
    assert (row.judge_filled, row.judge_supported) == (2, 1)


def test_a_run_over_controls_asks_about_the_control_claims_only(refund, lead, fake_llm):
    audit_set, claims = refund
    services.controls_mark(audit_set=audit_set, claim_ids=[claims[1].pk], by=lead)

    assert judges.subset_claims(audit_set=audit_set, subset=JudgeRun.Subset.CONTROLS) == [
        claims[1].pk
    ]
    run = judges.judge_run_start(
        judge=_judge(audit_set, lead, fake_llm.base_url), subset=JudgeRun.Subset.CONTROLS, user=lead
    )
    assert run.claim_ids == [claims[1].pk]


# ------------------------------------------- accepted judge on the report, API and gate


def _accepted_with_two_claims_unjudged(refund, lead, fake_llm):
    """The refund set with a judge that agrees with gold, accepted; then claims 2 and 3 lose
    their gold, so no human has judged them and the judge's verdicts may stand for them."""
    audit_set, claims = refund
    for claim, reply in zip(claims, AGREE, strict=True):
        fake_llm.behaviour[claim.text] = reply
    judge = _judge(audit_set, lead, fake_llm.base_url)
    run = _run(judge, lead)
    judges.judge_accept(version=run.version, user=lead)
    Adjudication.objects.filter(claim__in=claims[1:]).delete()
    services.claims_changed(claim_ids=[c.pk for c in claims], audit_set_id=audit_set.pk)
    services.criteria_update(
        audit_set=audit_set,
        criteria=[
            {"kind": "min_supported_share", "percent": 30},
            {"kind": "max_wrong_citations", "limit": 0},
        ],
        by=lead,
    )
    return audit_set, claims, judge


def test_the_report_shows_the_judges_figures_and_decision_beside_the_humans(
    refund, lead, fake_llm, client
):
    audit_set, claims, _judge_ = _accepted_with_two_claims_unjudged(refund, lead, fake_llm)
    client.force_login(lead)

    html = client.get(reverse("audit:set-report", args=[audit_set.pk])).content.decode()

    # The human headline is untouched: claim 2 has no human verdict, so nothing is supported.
    assert "Claims fully supported by their own citations: 0 of 3" in html
    card = html.split('class="judge-figure"')[1].split("</p>")[0]
    assert "standing for 2 claims no human judged: fully supported 1 of 3" in card
    assert "FAIL" in card
    table = html.split('id="with-judge-table"')[1].split("</table>")[0]
    assert "PROVISIONAL" in table and "FAIL" in table
    # The failing claim under the judge's decision is named and tagged as the judge's.
    failing = html.split("with the judge:</strong>")[1].split("</ul>")[0]
    assert '<span class="provenance-tag">judge</span>' in failing
    assert "Opened software licences cannot be returned." in failing


def test_the_api_decision_and_report_keep_human_and_judge_apart(refund, lead, fake_llm):
    audit_set, claims, _judge_ = _accepted_with_two_claims_unjudged(refund, lead, fake_llm)
    client = api_client(lead)
    url = f"/api/v1/sets/{audit_set.pk}/decision"

    human = client.get(url, {"system": "rag-v1"}).json()
    judged = client.get(url, {"system": "rag-v1", "with_judge": "true"}).json()

    assert (human["decision"], human["judge"]) == ("provisional", None)
    assert judged["decision"] == "fail"
    assert judged["judge"]["claims_filled"] == 2
    assert judged["judge"]["name"] == "house" and judged["judge"]["gold_claims"] == 3
    (failed,) = judged["failed"]
    assert failed["kind"] == "max_wrong_citations"
    assert [(c["id"], c["verdict_by"]) for c in failed["claims"]] == [(claims[2].pk, "judge")]
    (system,) = client.get(f"/api/v1/sets/{audit_set.pk}/report").json()["systems"]
    assert system["decision"] == "provisional"
    assert system["with_accepted_judge"]["decision"] == "fail"
    assert system["with_accepted_judge"]["claims_filled"] == 2


def test_the_gate_counts_the_judge_only_when_asked(refund, lead, fake_llm, capsys):
    _accepted_with_two_claims_unjudged(refund, lead, fake_llm)

    with pytest.raises(SystemExit) as human:
        call_command("gate", "--set", "Refunds", "--system", "rag-v1")
    with pytest.raises(SystemExit) as judged:
        call_command("gate", "--set", "Refunds", "--system", "rag-v1", "--with-judge")

    assert (human.value.code, judged.value.code) == (2, 1)
    out = capsys.readouterr().out
    assert "with accepted judge house v1 (fake-1, kappa 1.00 on 3 gold claims)" in out
    assert "[judge]: Opened software licences cannot be returned." in out


def test_without_an_accepted_judge_asking_for_it_changes_nothing(refund, lead, fake_llm, client):
    audit_set, claims = refund
    for claim, reply in zip(claims, AGREE, strict=True):
        fake_llm.behaviour[claim.text] = reply
    _run(_judge(audit_set, lead, fake_llm.base_url), lead)
    Adjudication.objects.filter(claim=claims[1]).delete()
    services.claims_changed(claim_ids=[claims[1].pk], audit_set_id=audit_set.pk)
    services.criteria_update(audit_set=audit_set, criteria=[{"kind": "no_contradicted"}], by=lead)

    answer = api_client(lead).get(
        f"/api/v1/sets/{audit_set.pk}/decision", {"system": "rag-v1", "with_judge": "1"}
    )
    client.force_login(lead)
    html = client.get(reverse("audit:set-report", args=[audit_set.pk])).content.decode()

    assert (answer.json()["decision"], answer.json()["judge"]) == ("provisional", None)
    assert 'id="with-judge-table"' not in html and 'class="judge-figure"' not in html


def test_the_judge_never_stands_for_a_claim_with_a_sheet_or_one_the_viewer_reviews(
    refund, lead, fake_llm, reviewer_a
):
    audit_set, claims, _judge_ = _accepted_with_two_claims_unjudged(refund, lead, fake_llm)
    audit_set.reviewers.add(reviewer_a)
    # Claim 2: a reviewer has submitted a sheet (a human verdict, if provisional).
    submitted_sheet(claims[1], reviewer_a, "not_supported")
    services.claims_changed(claim_ids=[claims[1].pk], audit_set_id=audit_set.pk)
    # Claim 3: the lead reviews it too and has not submitted: they must not read the judge.
    Assignment.objects.create(claim=claims[2], reviewer=lead)

    judged = (
        api_client(lead)
        .get(f"/api/v1/sets/{audit_set.pk}/decision", {"system": "rag-v1", "with_judge": "true"})
        .json()
    )
    audit_set.refresh_from_db()
    from_server = decision_report(audit_set=audit_set, system="rag-v1", with_judge=True)

    assert judged["judge"]["claims_filled"] == 0
    assert judged["decision"] == "provisional"
    # The command line sees everything: claim 3 is the judge's there.
    assert from_server["judge"]["claims_filled"] == 1


def test_a_later_runs_verdict_is_the_one_that_stands(refund, lead, fake_llm):
    audit_set, claims, judge = _accepted_with_two_claims_unjudged(refund, lead, fake_llm)
    fake_llm.behaviour[claims[2].text] = {
        "judgment": "supported",
        "evidence": [4],
        "rationale": "Read again.",
    }
    _run(judge, lead, subset=JudgeRun.Subset.UNREVIEWED)
    audit_set.refresh_from_db()

    judged = decision_report(audit_set=audit_set, system="rag-v1", with_judge=True)

    assert judged["decision"] == "pass"
    assert judged["judge"]["claims_filled"] == 2


def test_deleting_a_set_in_the_admin_leaves_none_of_its_judges_raters(
    refund, lead, fake_llm, admin_client
):
    audit_set, claims = refund
    for claim, reply in zip(claims, AGREE, strict=True):
        fake_llm.behaviour[claim.text] = reply
    run = _run(_judge(audit_set, lead, fake_llm.base_url), lead)
    other_set, _other_claims = refund_set_with_gold(lead, name="Other refunds")
    kept = _run(_judge(other_set, lead, fake_llm.base_url), lead)
    rater = run.version.rater

    response = admin_client.post(
        reverse("admin:audit_auditset_delete", args=[audit_set.pk]), {"post": "yes"}
    )

    assert response.status_code == 302
    assert not Rater.objects.filter(pk=rater.pk).exists()
    assert Rater.objects.filter(pk=kept.version.rater_id).exists()
    assert RaterLabel.objects.filter(rater=kept.version.rater).count() == 3


def test_judge_pages_number_runs_per_judge_say_a_run_failed_on_every_claim_and_the_standing(
    refund, lead, fake_llm, client_for
):
    """A run that judged nothing reads as failed, not "Finished"; runs count per judge; the
    judge page says whether its version meets the threshold."""
    audit_set, claims = refund
    for claim in claims:
        fake_llm.behaviour[claim.text] = fake.NOT_JSON
    other = _judge(audit_set, lead, fake_llm.base_url, name="other")
    _run(other, lead)
    judge = _judge(audit_set, lead, fake_llm.base_url)
    failed = _run(judge, lead)
    for claim, reply in zip(claims, AGREE, strict=True):
        fake_llm.behaviour[claim.text] = reply
    good = _run(judge, lead)

    page = client_for(lead)
    failed_page = page.get(reverse("audit:judge-run-detail", args=[failed.pk])).text
    detail = page.get(reverse("audit:judge-detail", args=[judge.pk])).text

    assert "Failed on every claim (3 errors)" in failed_page
    assert "<h1>Run 1 of house" in failed_page
    assert "<h1>Run 2 of house" in page.get(reverse("audit:judge-run-detail", args=[good.pk])).text
    # The other judge's run came first, yet this judge's runs are its 1 and 2.
    assert ">Run 1</a>" in detail and ">Run 2</a>" in detail
    assert ">Run 3</a>" not in detail
    assert 'id="judge-standing"' in detail
    # Three gold claims against a floor of three and min κ 0: the good run meets it.
    assert "v1 meets its threshold</strong>: κ’s interval starts at" in detail
