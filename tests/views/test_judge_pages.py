"""The lead's judge pages end to end against the local fake endpoint: set up, threshold,
run, calibration, acceptance, and the release report's provenance."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from audit.models import Job, Judge, JudgeAcceptance, JudgeRun
from tests import fake_llm as fake
from tests.conftest import refund_set_with_gold, run_queued_jobs
from tests.test_judges import AGREE

# A set of a few gold claims: below the operator's floor (30 by default).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("egress_loopback", "small_gold_floor")]

SECRET = "sk-test-do-not-show-0123456789"


def _setup(client, audit_set, base_url, **extra):
    data = {
        "name": "house",
        "base_url": base_url,
        "model": "fake-1",
        "api_key_env": "CITEAUDIT_JUDGE_KEY_TEST",
        "temperature": "0",
        "max_concurrency": "2",
        "timeout_seconds": "5",
        "price_per_million": "2.50",
        "template": client.get(reverse("audit:judge-list", args=[audit_set.pk]))
        .context["form"]["template"]
        .initial,
        **extra,
    }
    return client.post(reverse("audit:judge-list", args=[audit_set.pk]), data)


def test_a_lead_runs_calibrates_and_accepts_a_judge_through_the_pages(
    client_for, lead, fake_llm, monkeypatch
):
    monkeypatch.setenv("CITEAUDIT_JUDGE_KEY_TEST", SECRET)
    audit_set, claims = refund_set_with_gold(lead)
    for claim, reply in zip(claims, AGREE, strict=True):
        fake_llm.behaviour[claim.text] = reply
    fake_llm.behaviour[claims[0].text] = {"judgment": "supported", "evidence": [1]}
    client = client_for(lead)

    created = _setup(client, audit_set, fake_llm.base_url)
    judge = Judge.objects.get()
    assert created.status_code == 302 and created["Location"] == judge.get_absolute_url()
    detail = client.get(judge.get_absolute_url()).content.decode()
    assert "CITEAUDIT_JUDGE_KEY_TEST" in detail and SECRET not in detail

    # Before a threshold: no run, and the calibration stays hidden.
    refused = client.post(reverse("audit:judge-run", args=[judge.pk]), {"subset": "all"})
    assert refused.status_code == 302 and not JudgeRun.objects.exists()
    hidden = client.get(reverse("audit:judge-calibration", args=[judge.pk]))
    assert "overall" not in hidden.context and "No threshold yet." in hidden.content.decode()

    client.post(
        reverse("audit:judge-threshold", args=[judge.pk]), {"min_kappa": "-1", "min_gold": "3"}
    )
    client.post(reverse("audit:judge-run", args=[judge.pk]), {"subset": "all"})
    (job,) = run_queued_jobs()
    assert job.status == Job.Status.SUCCEEDED, job.error
    # The key reached the endpoint, from the environment only.
    assert {r["auth"] for r in fake_llm.requests} == {f"Bearer {SECRET}"}

    runs = client.get(judge.get_absolute_url()).context["rows"]
    (run, cost, _progress) = runs[0]
    assert (cost.judged, cost.errors, cost.tokens_per_1000) == (3, 0, 120_000)
    assert str(cost.money_per_1000) == "0.3000"

    page = client.get(reverse("audit:judge-calibration", args=[judge.pk]))
    overall = page.context["overall"]
    assert overall["n"] == 3 and overall["differing"] == 1
    assert page.context["meets"] is True
    body = page.content.decode()
    assert "Accept v1 for this set" in body

    accepted = client.post(reverse("audit:judge-accept", args=[judge.pk]), {"version": "1"})
    assert accepted.status_code == 302
    acceptance = JudgeAcceptance.objects.get()
    assert acceptance.version == run.version and acceptance.n_gold == 3

    dashboard = client.get(reverse("audit:agreement", args=[audit_set.pk])).content.decode()
    assert "house v1 (fake-1)" in dashboard

    report = client.get(reverse("audit:set-report", args=[audit_set.pk]))
    (row,) = report.context["provenance"]
    assert (row.gold, row.unjudged, row.judge_filled) == (3, 0, 0)
    assert "Accepted judge: " in report.content.decode()

    export = client.get(reverse("audit:set-export", args=[audit_set.pk, "jsonl"]))
    lines = [json.loads(line) for line in b"".join(export.streaming_content).splitlines()]
    labels = [label for line in lines for label in line.get("rater_labels", [])]
    assert {label["note"] for label in labels} == {
        f"judge house; model fake-1; prompt v1; run {run.pk}"
    }


def test_a_key_in_place_of_its_variable_name_is_refused(client_for, lead, audit_set):
    response = _setup(client_for(lead), audit_set, "http://127.0.0.1:9/v1", api_key_env=SECRET)

    assert response.status_code == 200
    assert response.context["form"].errors["api_key_env"] == [
        "The name of an environment variable (letters, digits, _), not the key itself."
    ]
    assert not Judge.objects.exists()


def test_a_run_page_shows_errors_and_rationales_escaped(client_for, lead, fake_llm):
    audit_set, claims = refund_set_with_gold(lead)
    fake_llm.behaviour[claims[1].text] = {
        "judgment": "unclear",
        "rationale": "<script>alert(1)</script>",
    }
    fake_llm.behaviour[claims[2].text] = "<b>not json</b>"
    client = client_for(lead)
    _setup(client, audit_set, fake_llm.base_url, api_key_env="")
    judge = Judge.objects.get()
    client.post(
        reverse("audit:judge-threshold", args=[judge.pk]), {"min_kappa": "0.5", "min_gold": "1"}
    )
    client.post(reverse("audit:judge-run", args=[judge.pk]), {"subset": "all"})
    run_queued_jobs()
    run = JudgeRun.objects.get()

    body = client.get(reverse("audit:judge-run-detail", args=[run.pk])).content.decode()
    job_page = client.get(run.job.get_absolute_url()).content.decode()

    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "<script>alert" not in body
    assert "Invalid reply (asked twice): The reply is not JSON: &#x27;&lt;b&gt;not json" in body
    assert "2 verdicts, 1 errors." in job_page


def test_a_judge_run_whose_worker_died_runs_again_skipping_claims_it_judged(
    client_for, lead, fake_llm, settings
):
    from django.core.cache import cache

    from audit.selectors.jobs import CANCEL_KEY

    audit_set, claims = refund_set_with_gold(lead)
    client = client_for(lead)
    _setup(client, audit_set, fake_llm.base_url, api_key_env="", max_concurrency="1")
    judge = Judge.objects.get()
    client.post(
        reverse("audit:judge-threshold", args=[judge.pk]), {"min_kappa": "0", "min_gold": "1"}
    )
    client.post(reverse("audit:judge-run", args=[judge.pk]), {"subset": "all"})
    run = JudgeRun.objects.get()
    # Stopped after claim 1's verdict, then left "running" as a killed worker leaves it.
    cancel = CANCEL_KEY.format(token=run.job.token)
    fake_llm.on_request = lambda claim: claim == claims[0].text and cache.set(cancel, True)
    fake_llm.behaviour[claims[1].text] = fake.SLOW  # in flight when the cancel is seen
    fake_llm.slow_seconds = 0.5
    run_queued_jobs()
    Job.objects.filter(pk=run.job.pk).update(status=Job.Status.RUNNING)
    settings.JOB_STALE_SECONDS = 0
    fake_llm.on_request = lambda claim: None
    judged_before = run.verdicts.count()

    response = client.post(reverse("audit:job-retry", args=[run.job.pk]), follow=True)
    (job,) = run_queued_jobs()

    assert "Queued again: claims it has a verdict on are skipped." in response.content.decode()
    assert job.status == Job.Status.SUCCEEDED and judged_before == 2
    assert run.verdicts.count() == 3
    assert [fake_llm.asked(c.text) for c in claims] == [1, 1, 1]
