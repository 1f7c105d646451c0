"""Automatic judges through the API: each endpoint calls the judge pages' own service or
selector, so a page action and the same API action store the same thing; only the set's
leads may act, a token limited elsewhere finds nothing, and a key's value is never shown."""

from __future__ import annotations

import json
import time

import httpx2
import pytest
from django.test import Client
from django.urls import reverse

from audit import services
from audit.models import (
    Adjudication,
    Claim,
    Judge,
    JudgeAcceptance,
    JudgeRun,
    JudgeThresholdChange,
    JudgeVerdict,
    Membership,
    Workspace,
)
from audit.selectors.decision import decision_report
from audit.services import judges as judge_services
from citeaudit_client import Client as CiteauditClient
from citeaudit_client import Conflict
from tests.conftest import api_client, refund_set_with_gold, run_queued_jobs
from tests.factories import AuditSetFactory, UserFactory
from tests.test_judges import AGREE
from tests.test_python_client import _answers

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("egress_loopback", "small_gold_floor")]


@pytest.fixture
def refunds(lead):
    """The refund example with gold on its three claims: a judge agreeing with AGREE."""
    return refund_set_with_gold(lead)


def _fields(base_url: str, name: str = "house") -> dict:
    return {
        "name": name,
        "base_url": base_url,
        "model": "fake-1",
        "api_key_env": "",
        "temperature": 0.0,
        "max_concurrency": 2,
        "timeout_seconds": 5.0,
    }


def _stored(judge: Judge) -> tuple:
    """What a judge set-up stores, the same whichever door wrote it."""
    versions = [
        (v.number, v.model, v.temperature, v.template) for v in judge.versions.order_by("number")
    ]
    return (
        judge.base_url,
        judge.model,
        judge.api_key_env,
        judge.temperature,
        judge.max_concurrency,
        judge.timeout_seconds,
        judge.min_kappa,
        judge.min_gold,
        versions,
    )


def _judge(audit_set, lead, base_url, name="house", **extra) -> Judge:
    return judge_services.judge_create(
        audit_set=audit_set,
        fields={**_fields(base_url, name), "min_kappa": 0.0, "min_gold": 3, **extra},
        user=lead,
    )


def _agree(fake_llm, claims) -> None:
    for claim, reply in zip(claims, AGREE, strict=True):
        fake_llm.behaviour[claim.text] = reply


# ------------------------------------------------------------------------------ parity


def test_creating_a_judge_through_the_page_or_the_api_stores_the_same(
    refunds, lead, client_for, fake_llm
):
    audit_set, _claims = refunds
    page = client_for(lead).post(
        reverse("audit:judge-list", args=[audit_set.pk]),
        {**_fields(fake_llm.base_url, "by-page"), "template": "Judge $claim.\n$reply_format"},
    )
    assert page.status_code == 302

    response = api_client(lead).post(
        f"/api/v1/sets/{audit_set.pk}/judges",
        {**_fields(fake_llm.base_url, "by-api"), "template": "Judge $claim.\n$reply_format"},
        content_type="application/json",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "by-api" and body["current_version"] == 1
    by_page, by_api = Judge.objects.get(name="by-page"), Judge.objects.get(name="by-api")
    assert _stored(by_api) == _stored(by_page)
    listed = api_client(lead).get(f"/api/v1/sets/{audit_set.pk}/judges").json()
    assert sorted(j["name"] for j in listed) == ["by-api", "by-page"]


def test_a_new_version_and_a_threshold_through_both_doors_store_the_same(
    refunds, lead, client_for, fake_llm
):
    audit_set, _claims = refunds
    by_page = _judge(audit_set, lead, fake_llm.base_url, "by-page", min_kappa=None, min_gold=None)
    by_api = _judge(audit_set, lead, fake_llm.base_url, "by-api", min_kappa=None, min_gold=None)
    template = judge_services.judge_current_version(by_page).template + "\nBe brief."
    client = client_for(lead)
    client.post(
        reverse("audit:judge-detail", args=[by_page.pk]),
        {**_fields(fake_llm.base_url, "by-page"), "model": "fake-2", "template": template},
    )
    client.post(
        reverse("audit:judge-threshold", args=[by_page.pk]), {"min_kappa": 0.4, "min_gold": 3}
    )

    version = api_client(lead).post(
        f"/api/v1/judges/{by_api.pk}/versions",
        {"model": "fake-2", "template": template},
        content_type="application/json",
    )
    threshold = api_client(lead).put(
        f"/api/v1/judges/{by_api.pk}/threshold",
        {"min_kappa": 0.4, "min_gold": 3},
        content_type="application/json",
    )

    assert version.status_code == 200 and version.json()["current_version"] == 2
    assert threshold.status_code == 200 and threshold.json()["min_kappa"] == 0.4
    by_page.refresh_from_db()
    by_api.refresh_from_db()
    assert _stored(by_api) == _stored(by_page)
    changes = [
        list(JudgeThresholdChange.objects.filter(judge=j).values_list("before", "after"))
        for j in (by_page, by_api)
    ]
    assert changes[0] == changes[1] == [({}, {"min_kappa": 0.4, "min_gold": 3})]


def test_a_run_through_the_api_is_a_job_whose_verdicts_the_run_read_pages(
    refunds, lead, client_for, fake_llm
):
    audit_set, claims = refunds
    _agree(fake_llm, claims)
    judge = _judge(audit_set, lead, fake_llm.base_url)

    started = api_client(lead).post(
        f"/api/v1/judges/{judge.pk}/runs", {"subset": "all"}, content_type="application/json"
    )
    assert started.status_code == 202, started.content
    assert started.json()["status"] == "queued" and started.json()["claims"] == 3
    (job,) = run_queued_jobs()
    run_id = started.json()["id"]

    body = api_client(lead).get(f"/api/v1/judge-runs/{run_id}?limit=2&offset=1").json()
    page = client_for(lead).get(reverse("audit:judge-run-detail", args=[run_id]))

    assert body["job"] == job.pk and body["status"] == "succeeded"
    assert (body["verdicts"], body["errors"]) == (3, 0)
    assert (body["verdicts"], body["errors"]) == (
        page.context["cost"].judged,
        page.context["cost"].errors,
    )
    stored = list(JudgeVerdict.objects.filter(run_id=run_id).order_by("pk"))
    assert [v["claim"] for v in body["items"]] == [v.claim_id for v in stored[1:3]]
    assert [v["judgment"] for v in body["items"]] == [v.judgment for v in stored[1:3]]


def test_calibration_and_accept_give_the_pages_figures_and_store_the_same_acceptance(
    refunds, lead, client_for, fake_llm
):
    audit_set, claims = refunds
    _agree(fake_llm, claims)
    judge = _judge(audit_set, lead, fake_llm.base_url)
    run = judge_services.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
    run_queued_jobs()

    figures = api_client(lead).get(f"/api/v1/judges/{judge.pk}/calibration").json()
    page = client_for(lead).get(reverse("audit:judge-calibration", args=[judge.pk]))

    overall = page.context["overall"]
    assert figures["n_gold"] == overall["n"] == 3
    assert figures["kappa"] == pytest.approx(overall["kappa"])
    assert figures["accuracy"] == pytest.approx(overall["accuracy"])
    assert f"{figures['kappa_low']:.2f}–{figures['kappa_high']:.2f}" == overall["kappa_ci"]
    assert figures["meets_threshold"] is page.context["meets"] is True
    assert figures["accepted"] is False

    client_for(lead).post(reverse("audit:judge-accept", args=[judge.pk]), {"version": 1})
    by_page = JudgeAcceptance.objects.get(version=run.version)
    page_row = (by_page.n_gold, by_page.kappa, by_page.kappa_low, by_page.kappa_high)
    by_page.delete()
    accepted = api_client(lead).post(
        f"/api/v1/judges/{judge.pk}/accept", {"version": 1}, content_type="application/json"
    )

    assert accepted.status_code == 200, accepted.content
    by_api = JudgeAcceptance.objects.get(version=run.version)
    assert (by_api.n_gold, by_api.kappa, by_api.kappa_low, by_api.kappa_high) == page_row
    assert by_api.by == lead


def test_calibration_hides_its_figures_until_a_threshold_is_written(refunds, lead, fake_llm):
    audit_set, _claims = refunds
    judge = _judge(audit_set, lead, fake_llm.base_url, min_kappa=None, min_gold=None)

    body = api_client(lead).get(f"/api/v1/judges/{judge.pk}/calibration").json()

    assert body["threshold_set"] is False
    assert body["kappa"] is None and body["n_gold"] is None and body["meets_threshold"] is None


def test_accepting_a_judge_below_its_threshold_is_a_409(refunds, lead, fake_llm):
    audit_set, claims = refunds
    _agree(fake_llm, claims)
    judge = _judge(audit_set, lead, fake_llm.base_url, min_gold=4)
    judge_services.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
    run_queued_jobs()

    response = api_client(lead).post(
        f"/api/v1/judges/{judge.pk}/accept", {}, content_type="application/json"
    )

    assert response.status_code == 409
    assert "the threshold needs 4" in response.json()["detail"]
    assert not JudgeAcceptance.objects.exists()


# ------------------------------------------------------------------------------ secrets


def test_the_key_variable_must_be_a_judge_key_name_and_its_value_is_never_shown(
    refunds, lead, fake_llm, monkeypatch
):
    audit_set, _claims = refunds
    monkeypatch.setenv("CITEAUDIT_JUDGE_KEY_TEST", "sk-very-secret")
    url = f"/api/v1/sets/{audit_set.pk}/judges"
    client = api_client(lead)

    wrong = client.post(
        url,
        {**_fields(fake_llm.base_url), "api_key_env": "DATABASE_URL"},
        content_type="application/json",
    )
    right = client.post(
        url,
        {**_fields(fake_llm.base_url), "api_key_env": "CITEAUDIT_JUDGE_KEY_TEST"},
        content_type="application/json",
    )

    assert wrong.status_code == 422 and "body.api_key_env" in wrong.json()["detail"]
    assert right.status_code == 201, right.content
    assert right.json()["api_key_env"] == "CITEAUDIT_JUDGE_KEY_TEST"
    listed = client.get(url)
    assert b"sk-very-secret" not in right.content + listed.content
    assert Judge.objects.count() == 1


def test_a_url_the_egress_rules_refuse_is_a_422_naming_base_url(refunds, lead, settings):
    audit_set, _claims = refunds
    settings.EGRESS_ALLOW = []

    response = api_client(lead).post(
        f"/api/v1/sets/{audit_set.pk}/judges",
        _fields("http://169.254.169.254/v1"),
        content_type="application/json",
    )

    assert response.status_code == 422
    assert "body.base_url" in response.json()["detail"]
    assert not Judge.objects.exists()


# ------------------------------------------------------------------------------ who may act


def _statuses(client: Client, audit_set, judge: Judge, run: JudgeRun) -> list[int]:
    json = "application/json"
    return [
        client.get(f"/api/v1/sets/{audit_set.pk}/judges").status_code,
        client.get(f"/api/v1/judges/{judge.pk}").status_code,
        client.get(f"/api/v1/judge-runs/{run.pk}").status_code,
        client.get(f"/api/v1/judges/{judge.pk}/calibration").status_code,
        client.post(
            f"/api/v1/sets/{audit_set.pk}/judges", _fields("http://127.0.0.1:9/v1", "x"), json
        ).status_code,
        client.post(f"/api/v1/judges/{judge.pk}/versions", {"model": "m2"}, json).status_code,
        client.put(
            f"/api/v1/judges/{judge.pk}/threshold", {"min_kappa": 0.5, "min_gold": 3}, json
        ).status_code,
        client.post(f"/api/v1/judges/{judge.pk}/runs", {"subset": "all"}, json).status_code,
        client.post(f"/api/v1/judges/{judge.pk}/accept", {}, json).status_code,
    ]


@pytest.fixture
def ran(refunds, lead, fake_llm):
    audit_set, claims = refunds
    _agree(fake_llm, claims)
    judge = _judge(audit_set, lead, fake_llm.base_url)
    run = judge_services.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
    run_queued_jobs()
    return audit_set, judge, run


def _unchanged(judge: Judge) -> tuple:
    judge.refresh_from_db()
    return (_stored(judge), Judge.objects.count(), JudgeRun.objects.count())


def test_a_reviewer_is_refused_and_changes_nothing(ran, reviewer_a):
    audit_set, judge, run = ran
    audit_set.reviewers.add(reviewer_a)
    before = _unchanged(judge)

    assert _statuses(api_client(reviewer_a), audit_set, judge, run) == [403] * 9
    assert _unchanged(judge) == before


def test_a_lead_of_another_workspace_finds_nothing(ran):
    audit_set, judge, run = ran
    other = UserFactory(username="other_lead")
    elsewhere = Workspace.objects.create(name="Elsewhere", slug="elsewhere")
    Membership.objects.create(user=other, workspace=elsewhere, role="lead")
    before = _unchanged(judge)

    assert _statuses(api_client(other), audit_set, judge, run) == [404] * 9
    assert _unchanged(judge) == before


def test_a_token_limited_to_another_set_finds_nothing(ran, lead):
    audit_set, judge, run = ran
    elsewhere = AuditSetFactory(name="Elsewhere", workspace=audit_set.workspace)
    _token, text = services.token_create(user=lead, name="ci", scope="write", audit_set=elsewhere)
    before = _unchanged(judge)

    codes = _statuses(Client(HTTP_AUTHORIZATION=f"Bearer {text}"), audit_set, judge, run)

    assert codes == [404] * 9
    assert _unchanged(judge) == before


def test_a_read_only_token_reads_but_writes_nothing(ran, lead):
    audit_set, judge, run = ran
    before = _unchanged(judge)

    codes = _statuses(api_client(lead, scope="read"), audit_set, judge, run)

    assert codes[:4] == [200] * 4
    assert codes[4:] == [403] * 5
    assert _unchanged(judge) == before


# ------------------------------------------------------------------------------ answering


@pytest.mark.parametrize("marked", [True, False])
def test_a_judge_marking_a_partly_supported_claim_as_answering_fails_the_criterion(
    refunds, lead, fake_llm, marked
):
    audit_set, claims = refunds
    _agree(fake_llm, claims)
    fake_llm.behaviour[claims[0].text] = {**AGREE[0], "answers_question": marked}
    judge = _judge(audit_set, lead, fake_llm.base_url)
    run = judge_services.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
    run_queued_jobs()
    judge_services.judge_accept(version=run.version, user=lead)
    # Claim 1 (partly supported) loses its gold: the accepted judge's verdict stands for it.
    Adjudication.objects.filter(claim=claims[0]).delete()
    services.claims_changed(claim_ids=[c.pk for c in claims], audit_set_id=audit_set.pk)
    services.criteria_update(
        audit_set=audit_set, criteria=[{"kind": "answering_claims_backed"}], by=lead
    )
    audit_set.refresh_from_db()

    judged = decision_report(audit_set=audit_set, system="rag-v1", with_judge=True)

    assert JudgeVerdict.objects.get(run=run, claim=claims[0]).answers_question is marked
    assert judged["judge"]["claims_filled"] == 1
    assert judged["decision"] == ("fail" if marked else "pass")
    shown = api_client(lead).get(f"/api/v1/judge-runs/{run.pk}").json()["items"]
    by_claim = {v["claim"]: v["answers_question"] for v in shown}
    assert [by_claim[c.pk] for c in claims] == [marked, None, None]


def test_a_lead_marks_a_claim_as_answering_through_the_api_as_the_list_does(
    refunds, lead, client_for
):
    audit_set, claims = refunds
    twin_set, twin_claims = refund_set_with_gold(lead, name="Twin refunds")
    client_for(lead).post(
        reverse("audit:claims-mark-answering", args=[twin_set.pk]),
        {"query": "text=Customers", "value": "1"},
    )
    url = f"/api/v1/claims/{claims[0].pk}/answers-question"

    first = api_client(lead).put(url, {"value": True}, content_type="application/json")
    again = api_client(lead).put(url, {"value": True}, content_type="application/json")

    assert first.json() == {"claim": claims[0].pk, "answers_question": True, "changed": True}
    assert again.json()["changed"] is False
    marked = [c.answers_question for c in Claim.objects.filter(pk__in=[c.pk for c in claims])]
    twin = [c.answers_question for c in Claim.objects.filter(pk__in=[c.pk for c in twin_claims])]
    assert marked == twin == [True, False, False]


def test_only_a_lead_of_the_set_may_mark_a_claim_as_answering(refunds, lead, reviewer_a):
    audit_set, claims = refunds
    audit_set.reviewers.add(reviewer_a)
    other = UserFactory(username="other_lead")
    elsewhere = Workspace.objects.create(name="Elsewhere", slug="elsewhere")
    Membership.objects.create(user=other, workspace=elsewhere, role="lead")
    url = f"/api/v1/claims/{claims[0].pk}/answers-question"
    body = {"value": True}

    codes = [
        api_client(user, scope).put(url, body, content_type="application/json").status_code
        for user, scope in [(reviewer_a, "write"), (other, "write"), (lead, "read")]
    ]

    assert codes == [403, 404, 403]
    assert not Claim.objects.filter(answers_question=True).exists()


# ------------------------------------------------------------------------------ the client


def test_the_client_sends_each_judge_call_to_its_endpoint():
    ok = httpx2.Response(200, json={"id": 4})
    transport, calls = _answers(*[ok] * 9)
    with CiteauditClient("http://citeaudit.test", "t", transport=transport) as client:
        client.judges(1)
        client.judge_create(1, "house", "https://llm.example.org/v1", "m", temperature=0.2)
        client.judge_version(4, template="Judge $claim.")
        client.judge_threshold(4, 0.6, 30)
        client.judge_run_read(7, limit=10)
        client.judge_calibration(4, version=2)
        client.judge_accept(4, version=2)
        client.judge_accept(4)
        client.answers_question(12, value=False)

    sent = [(c.method, c.url.path, c.url.query.decode()) for c in calls]
    assert sent == [
        ("GET", "/api/v1/sets/1/judges", ""),
        ("POST", "/api/v1/sets/1/judges", ""),
        ("POST", "/api/v1/judges/4/versions", ""),
        ("PUT", "/api/v1/judges/4/threshold", ""),
        ("GET", "/api/v1/judge-runs/7", "limit=10&offset=0"),
        ("GET", "/api/v1/judges/4/calibration", "version=2"),
        ("POST", "/api/v1/judges/4/accept", ""),
        ("POST", "/api/v1/judges/4/accept", ""),
        ("PUT", "/api/v1/claims/12/answers-question", ""),
    ]
    bodies = [json.loads(c.read() or b"null") for c in calls]
    assert bodies[1] == {
        "name": "house",
        "base_url": "https://llm.example.org/v1",
        "model": "m",
        "temperature": 0.2,
    }
    assert bodies[2] == {"template": "Judge $claim."}
    assert bodies[3] == {"min_kappa": 0.6, "min_gold": 30}
    assert bodies[6:] == [{"version": 2}, {}, {"value": False}]


def test_judge_run_with_wait_polls_its_job_then_reads_the_run_again(monkeypatch):
    pauses: list[float] = []
    monkeypatch.setattr(time, "sleep", pauses.append)
    queued = {"id": 7, "job": 5, "status": "queued", "verdicts": 0}
    done = {"id": 7, "job": 5, "status": "succeeded", "verdicts": 3}
    transport, calls = _answers(
        httpx2.Response(202, json=queued),
        httpx2.Response(200, json={"id": 5, "status": "running", "done": 1, "total": 3}),
        httpx2.Response(200, json={"id": 5, "status": "succeeded", "done": 3, "total": 3}),
        httpx2.Response(200, json=done),
    )
    with CiteauditClient("http://citeaudit.test", "t", transport=transport) as client:
        run = client.judge_run(4, "system", "rag-v1", wait=True, poll=0.5)

    assert run == done
    assert [(c.method, c.url.path) for c in calls] == [
        ("POST", "/api/v1/judges/4/runs"),
        ("GET", "/api/v1/jobs/5"),
        ("GET", "/api/v1/jobs/5"),
        ("GET", "/api/v1/judge-runs/7"),
    ]
    assert json.loads(calls[0].read()) == {"subset": "system", "system": "rag-v1"}
    assert pauses == [0.5]


def test_a_refused_judge_call_raises_the_clients_error_with_the_servers_reason():
    transport, _calls = _answers(
        httpx2.Response(409, json={"detail": "Not accepted: 3 gold claims; the threshold needs 4"})
    )
    client = CiteauditClient("http://citeaudit.test", "t", transport=transport)
    with client, pytest.raises(Conflict, match="the threshold needs 4"):
        client.judge_accept(4)


def test_a_new_version_with_a_null_name_is_a_422_naming_it(refunds, lead, fake_llm):
    audit_set, _claims = refunds
    judge = _judge(audit_set, lead, fake_llm.base_url)

    response = api_client(lead).post(
        f"/api/v1/judges/{judge.pk}/versions", {"name": None}, content_type="application/json"
    )

    assert response.status_code == 422 and "body.name" in response.json()["detail"]
    judge.refresh_from_db()
    assert judge.name == "house"
