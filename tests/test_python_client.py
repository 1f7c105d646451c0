"""The Python client (clients/python) against a live server with a worker process: the
nightly CI loop of its README, its errors per status, and, over a transport that answers
as told, its retries on a busy server and its progress reports."""

from __future__ import annotations

import email.utils
import io
import json
import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import httpx2
import pytest

from audit import services
from audit.models import Claim, Webhook, WebhookDelivery
from audit.services.webhooks import webhook_deliver
from tests.conftest import FIXTURES, ROOT, gold_by_agreement, import_file
from tests.factories import AuditSetFactory, UserFactory, submit_sheet
from tests.test_webhooks import receiver  # noqa: F401  (the loopback receiver)

# This checkout's client, whether or not `.ci/setup` installed it.
sys.path.insert(0, str(ROOT / "clients" / "python" / "src"))

from citeaudit_client import (  # noqa: E402
    AuthError,
    CiteauditError,
    Client,
    Conflict,
    ConnectionFailed,
    Forbidden,
    Invalid,
    NotFound,
    TooLarge,
)

HANDMADE = FIXTURES / "demo" / "handmade.jsonl"


def _run_of(system: str) -> list[dict]:
    """The handmade answers as another system's run, with answer ids of their own."""
    records = [json.loads(line) for line in HANDMADE.read_text().splitlines() if line.strip()]
    for record in records:
        record["system"] = system
        record["answer_id"] = f"{system}-{record['answer_id']}"
    return records


class CountingTransport(httpx2.HTTPTransport):
    """The real transport, keeping each request's path and query."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[httpx2.URL] = []

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(request.url)
        return super().handle_request(request)


@pytest.fixture
def lead(role_groups, transactional_db):
    return UserFactory(username="lead", role="lead")


def _token(user, scope: str = "write") -> str:
    _token, text = services.token_create(user=user, name="ci", scope=scope)
    return text


def test_the_nightly_loop_through_the_client(lead, live_server, start_worker, tmp_path):
    transport = CountingTransport()
    client = Client(live_server.url, _token(lead), transport=transport, retries=0)
    with client:
        created = client.set_create("Nightly", guidelines="Judge only what is cited.")
        set_id = created["id"]
        settings = client.set_settings_update(set_id, criteria=[{"kind": "no_contradicted"}])
        assert settings["criteria"] == [{"kind": "no_contradicted", "topics": []}]

        run_a = tmp_path / "run-a.jsonl"
        run_a.write_text("".join(json.dumps(r) + "\n" for r in _run_of("sys-a")))
        start_worker()
        seen: dict[str, list[tuple[int, int]]] = {"sys-a": [], "sys-b": []}

        def push_and_wait(system: str, file) -> object:
            job = client.push(set="Nightly", file=file)
            assert (job.status, job.set) == ("queued", set_id)
            return client.job_wait(
                job.id,
                poll=0.1,
                timeout=120,
                progress=lambda done, total: seen[system].append((done, total)),
            )

        with ThreadPoolExecutor(2) as pool:
            waits = [
                pool.submit(push_and_wait, "sys-a", run_a),
                pool.submit(push_and_wait, "sys-b", _run_of("sys-b")),
            ]
            jobs = [wait.result() for wait in waits]

        assert [(job.status, job.ok, job.error) for job in jobs] == [("succeeded", True, "")] * 2
        assert [job.result["answers"] for job in jobs] == [7, 7]
        for progress in seen.values():
            done = [d for d, _total in progress]
            assert done == sorted(done)
            assert progress[-1] == (7, 7)
        assert sorted(j.id for j in client.jobs(status="succeeded", set=set_id)) == sorted(
            j.id for j in jobs
        )

        transport.seen.clear()
        claims = list(client.claims(set_id, page_size=2))
        stored = Claim.objects.filter(answer__audit_set_id=set_id)
        assert [c["id"] for c in claims] == list(stored.order_by("pk").values_list("pk", flat=True))
        pages = [url for url in transport.seen if url.path.endswith("/claims")]
        assert len(pages) == math.ceil(len(claims) / 2) > 2
        assert [url.params.get("limit") for url in pages] == ["2"] * len(pages)
        assert "cursor" not in pages[0].params and all("cursor" in u.params for u in pages[1:])
        sys_a = list(client.claims("Nightly", system="sys-a", page_size=3))
        assert {c["system"] for c in sys_a} == {"sys-a"}
        assert len(sys_a) == stored.filter(answer__system="sys-a").count()
        assert len(list(client.answers(set_id, system="sys-b", page_size=2))) == 7

        assert list(client.gold(set_id)) == []
        reviewers = [UserFactory(username=f"rev_{n}", role="reviewer") for n in "ab"]
        services.review_open(
            audit_set=stored[0].answer.audit_set, reviewers=reviewers, overlap=2, by=lead
        )
        top_a = stored.filter(answer__system="sys-a", parent__isnull=True).order_by("pk")
        for claim in top_a:
            gold_by_agreement(reviewers, claim)

        gold = list(client.gold("Nightly"))
        assert len(gold) == top_a.count()
        assert {record["judgment"] for record in gold} == {"not_supported"}
        log = io.StringIO()
        assert client.gate("Nightly", "sys-a", out=log) == 0
        assert log.getvalue().startswith("sys-a: PASS\n  ok   No contradicted claim.")
        assert client.gate(set_id, "sys-b") == 2
        assert client.gate(str(set_id), "no such system") == 3
        assert client.gate("No such set", "sys-a") == 3

        wrong = top_a.first()
        wrong.adjudication.judgment = "contradicted"
        wrong.adjudication.save()
        services.claims_changed(claim_ids=[wrong.pk])
        log = io.StringIO()
        assert client.gate(set_id, "sys-a", out=log) == 1
        assert (
            f"  FAIL No contradicted claim. 1 contradicted claim.\n       claim {wrong.pk}: "
            in (log.getvalue())
        )
        decision = client.decision(set_id, "sys-a")
        assert decision["decision"] == "fail"
        assert [s["system"] for s in client.report(set_id)["systems"]] == ["sys-a", "sys-b"]

        exported = client.export(set_id, "jsonl", tmp_path / "labels.jsonl")
        lines = list(client.export(set_id, "jsonl"))
        assert exported.read_text().splitlines() == lines
        assert len(lines) > 0

        client.set_settings_update(set_id, criteria=[], criteria_reason="No gate for now.")
        assert client.decision(set_id, "sys-a")["decision"] == "none"
        assert client.gate(set_id, "sys-a") == 3


def test_nightly_runs_pushed_in_parallel_then_a_regenerated_run_replaces_its_old_version(
    lead, live_server, start_worker
):
    with Client(live_server.url, _token(lead), retries=0) as client:
        set_id = client.set_create("Runs")["id"]
        client.set_settings_update(set_id, criteria=[{"kind": "no_contradicted"}])
        start_worker()

        def push_and_wait(run: str, records: list[dict], key: str | None = None):
            job = client.push(set=set_id, file=records, system="rag", run=run, idempotency_key=key)
            return job, client.job_wait(job.id, poll=0.1, timeout=120)

        with ThreadPoolExecutor(2) as pool:
            waits = [pool.submit(push_and_wait, run, _run_of("rag")) for run in ("n1", "n2")]
            ended = [wait.result()[1] for wait in waits]
        assert [
            (job.status, job.result["run"], job.result["changes"]["added"]) for job in ended
        ] == [
            ("succeeded", "n1", 7),
            ("succeeded", "n2", 7),
        ]
        # The run pushed last is the one a decision without a run reads.
        last = max(ended, key=lambda job: job.result["batch_id"]).result["run"]
        assert client.decision(set_id, "rag")["system"] == f"rag@{last}"

        # Gold on every claim of run n2, one of them contradicted: the run fails.
        stored = Claim.objects.filter(answer__audit_set_id=set_id, parent__isnull=True)
        reviewers = [UserFactory(username=f"rev_{n}", role="reviewer") for n in "ab"]
        services.review_open(
            audit_set=stored[0].answer.audit_set, reviewers=reviewers, overlap=2, by=lead
        )
        n2 = stored.filter(answer__system="rag@n2").order_by("pk")
        wrong = n2.first()
        for claim in n2:
            gold_by_agreement(
                reviewers, claim, "contradicted" if claim == wrong else "not_supported"
            )
        assert client.decision(set_id, "rag", run="n2")["decision"] == "fail"
        assert client.decision(set_id, "rag", run="n1")["decision"] == "provisional"

        # Regenerated: the answer holding the contradicted claim says something else now.
        regenerated = _run_of("rag")
        changed = wrong.answer.external_id
        for record in regenerated:
            if record["answer_id"] == changed:
                record["answer"] = "The policy changed; see the handbook [1]."
        job, done = push_and_wait("n2", regenerated, key="regen-n2")
        assert done.result["changes"]["ids"]["changed"] == [changed]
        assert done.result["changes"]["unchanged"] == 6
        # The same key and body again: the first job, nothing imported twice.
        assert (
            client.push(
                set=set_id, file=regenerated, system="rag", run="n2", idempotency_key="regen-n2"
            ).id
            == job.id
        )

        after = client.decision(set_id, "rag")
        assert (after["system"], after["run"], after["decision"]) == ("rag@n2", "n2", "provisional")
        assert client.decision(set_id, "rag", run="n1")["decision"] == "provisional"
        answers = {
            (a["external_id"], a["replaced_by"] is None): a
            for a in client.answers(set_id, system="rag@n2")
        }
        old, new = answers[(changed, False)], answers[(changed, True)]
        assert old["replaced_by"] == new["id"]
        # The old version keeps its reviews.
        assert len(client.claim(wrong.pk)["sheets"]) == 2


def test_a_push_sends_again_after_a_bad_gateway_with_the_same_idempotency_key(pauses):
    gateway = httpx2.Response(502, text="<html>Bad gateway</html>")
    queued = {
        "id": 9,
        "kind": "import",
        "status": "queued",
        "set": 1,
        "filename": "answers.jsonl",
        "done": 0,
        "total": 0,
        "percent": 0,
        "elapsed_seconds": None,
        "stale": False,
        "cancelling": False,
        "attempts": 0,
        "worker": "",
        "error": "",
        "result": {},
        "created_at": "2026-12-05T10:00:00Z",
        "finished_at": None,
    }
    transport, calls = _answers(
        gateway, httpx2.Response(202, json=queued), httpx2.Response(202, json=queued)
    )
    with Client("http://citeaudit.test", "t", transport=transport, retries=3) as client:
        assert client.push(set=1, file=b"{}\n", system="rag", run="n1").id == 9
        client.push(set=1, file=b"{}\n", system="rag", run="n1")
    keys = [call.headers["Idempotency-Key"] for call in calls]
    assert keys[0] == keys[1] != keys[2]
    assert b'name="run"\r\n\r\nn1' in calls[0].read()


def test_errors_map_to_their_classes(lead, live_server, settings):
    token = _token(lead)
    with Client(live_server.url, token, retries=0) as client:
        set_id = client.set_create("Nightly")["id"]
        client.push(set=set_id, file=_run_of("sys-a"))  # queued; no worker needed here

        with pytest.raises(Conflict) as taken:
            client.set_create("Nightly")
        assert (taken.value.status, taken.value.detail) == (409, "A set named “Nightly” exists.")

        with pytest.raises(Invalid) as bad_file:
            client.verdicts_push(
                set_id,
                [{"judge": "nli", "answer_id": "nope", "claim_index": 0, "judgment": "unclear"}],
            )
        assert bad_file.value.status == 422
        assert bad_file.value.detail == (
            "verdicts.jsonl: line 1: answer_id: no answer 'nope' in set 'Nightly'"
        )

        with pytest.raises(Invalid) as bad_field:
            client.set_settings_update(set_id, evidence_jaccard_threshold=2)
        assert [e["field"] for e in bad_field.value.errors] == [
            "body.payload.evidence_jaccard_threshold"
        ]

        with pytest.raises(NotFound) as missing:
            client.set(set_id + 1000)
        assert missing.value.status == 404
        with pytest.raises(NotFound):
            client.set_settings("No such set")

        settings.IMPORT_MAX_BYTES = 10
        with pytest.raises(TooLarge) as too_large:
            client.push(set=set_id, file=b'{"question_id": "q"}\n')
        assert too_large.value.status == 413
        settings.IMPORT_MAX_WHOLE_BYTES = 10
        with pytest.raises(TooLarge) as too_large:
            client.verdicts_push(set_id, b'{"answer_id": "a1"}\n')
        assert too_large.value.status == 413

    with (
        Client(live_server.url, "cit_nope_nope", retries=0) as stranger,
        pytest.raises(AuthError) as refused,
    ):
        stranger.me()
    assert (refused.value.status, refused.value.detail) == (401, "Unknown token.")

    reviewer = UserFactory(username="rev_a", role="reviewer")
    with Client(live_server.url, _token(reviewer), retries=0) as client:
        assert client.me()["lead"] is False
        with pytest.raises(Forbidden) as forbidden:
            client.jobs().__next__()
        assert forbidden.value.status == 403

    with (
        Client(live_server.url, _token(lead, scope="read"), retries=0) as read_only,
        pytest.raises(Forbidden) as writing,
    ):
        read_only.set_create("Another")
    assert writing.value.detail == "This token is read-only; make a read-write token to write."


def test_a_leads_review_round_through_the_client(lead, live_server):
    audit_set = AuditSetFactory(name="Round")
    import_file(audit_set, HANDMADE)
    reviewers = [UserFactory(username=f"rev_{n}", role="reviewer") for n in "abc"]
    claims = Claim.objects.filter(answer__audit_set=audit_set)
    with Client(live_server.url, _token(lead), retries=0) as client:
        # Every member may review, the lead too.
        assert client.reviewers("Round")["candidates"] == ["lead", "rev_a", "rev_b", "rev_c"]
        opened = client.assign("Round", ["rev_a", "rev_b"], 2)
        assert opened["created"] == 2 * opened["claims"] > 0
        assert opened["per_reviewer"] == {"rev_a": opened["claims"], "rev_b": opened["claims"]}
        with pytest.raises(Invalid) as too_many:
            client.assign("Round", ["rev_a", "rev_b"], 3)
        assert too_many.value.status == 422

        first, second, third = claims.order_by("pk")[:3]
        gold_by_agreement(reviewers[:2], first)
        submit_sheet(reviewers[0], second, "not_supported")
        submit_sheet(reviewers[1], second, "contradicted")
        queue = list(client.adjudication_queue("Round", page_size=1))
        assert [(item["claim"], [s["reviewer"] for s in item["sheets"]]) for item in queue] == [
            (second.pk, ["rev_a", "rev_b"])
        ]
        assert list(client.adjudication_queue("Round", judgment="partially_supported")) == []

        moved = client.reviewer_replace("Round", "rev_b", "rev_c")
        assert (moved["kept"], moved["dropped"]) == (2, 0)
        assert moved["moved"] == opened["claims"] - 2
        assert [r["username"] for r in client.reviewers("Round")["reviewers"]] == [
            "rev_a",
            "rev_b",
            "rev_c",
        ]

        assert client.controls("Round")["candidates"][0]["claim"] == first.pk
        assert client.controls_mark("Round", [first.pk, third.pk])["changed"] == 1
        updated = client.controls_update("Round", control_rate=5)
        assert (updated["control_rate"], [c["claim"] for c in updated["controls"]]) == (
            5,
            [first.pk],
        )

        compared = client.compare("Round")
        assert (compared["a"]["key"], compared["b"]["key"]) == (
            "system:handmade v1",
            "system:handmade v2",
        )
        assert compared == client.compare("Round", "system:handmade v1", "system:handmade v2")
        with pytest.raises(NotFound):
            client.compare("Round", "system:handmade v1", "system:none")

    with (
        Client(live_server.url, _token(reviewers[0]), retries=0) as client,
        pytest.raises(Forbidden),
    ):
        client.reviewers(audit_set.pk)


# ---------------------------------------------------------- over a transport told what to say


def _answers(*responses: httpx2.Response | Exception):
    """A transport that answers each request with the next of `responses` (or raises it),
    keeping each request."""
    calls: list[httpx2.Request] = []
    queue = list(responses)

    def handle(request: httpx2.Request) -> httpx2.Response:
        calls.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx2.MockTransport(handle), calls


def _busy(retry_after: str = "0") -> httpx2.Response:
    return httpx2.Response(503, headers={"Retry-After": retry_after}, json={"detail": "busy"})


@pytest.fixture
def pauses(monkeypatch) -> list[float]:
    """The pauses the client asks for, taken instead of slept."""
    asked: list[float] = []
    monkeypatch.setattr(time, "sleep", asked.append)
    return asked


def test_a_busy_server_is_asked_again_after_its_retry_after(pauses):
    me = {"username": "lead", "lead": True, "scope": "write", "token": "ci"}
    in_a_minute = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=60), True)
    transport, calls = _answers(
        _busy("2"), _busy(in_a_minute), httpx2.Response(429), httpx2.Response(200, json=me)
    )
    with Client("http://citeaudit.test", "t", transport=transport, retries=3) as client:
        assert client.me() == me
    assert len(calls) == 4
    assert pauses[0] == 2.0
    assert 55 < pauses[1] <= 60
    # No Retry-After on the third try: 0.5 s doubled twice, with up to a quarter more.
    assert 2.0 <= pauses[2] <= 2.5
    assert str(calls[0].url) == "http://citeaudit.test/api/v1/me"
    assert calls[0].headers["Authorization"] == "Bearer t"


def test_retries_end_with_the_last_error(pauses):
    transport, calls = _answers(*[_busy() for _ in range(3)])
    with (
        Client("http://citeaudit.test", "t", transport=transport, retries=2) as client,
        pytest.raises(CiteauditError) as busy,
    ):
        client.me()
    assert (type(busy.value), busy.value.status, busy.value.detail) == (CiteauditError, 503, "busy")
    assert len(calls) == 3


def test_a_write_is_not_sent_again_after_a_bad_gateway_but_is_after_a_refused_connection(
    pauses,
):
    gateway = httpx2.Response(502, text="<html>Bad gateway</html>")
    created = httpx2.Response(201, json={"id": 4, "name": "N"})
    refused = httpx2.ConnectError("connection refused")
    transport, calls = _answers(gateway, refused, created)
    with Client("http://citeaudit.test", "t", transport=transport, retries=3) as client:
        with pytest.raises(CiteauditError) as bad_gateway:
            client.set_create("N")
        assert (bad_gateway.value.status, bad_gateway.value.detail) == (
            502,
            "<html>Bad gateway</html>",
        )
        assert len(calls) == 1
        assert client.set_create("N") == {"id": 4, "name": "N"}
    assert len(calls) == 3


def test_no_connection_at_all_is_connection_failed_and_gates_as_an_error(pauses):
    transport, calls = _answers(*[httpx2.ConnectError("refused") for _ in range(4)])
    with Client("http://citeaudit.test", "t", transport=transport, retries=1) as client:
        with pytest.raises(ConnectionFailed) as failed:
            client.me()
        assert len(calls) == 2
        assert failed.value.status is None
        log = io.StringIO()
        assert client.gate(1, "rag-v1", out=log) == 3
    assert len(calls) == 4
    assert log.getvalue().startswith("gate: GET http://citeaudit.test/api/v1/sets/1/decision: ")


def test_problem_details_bodies_are_read():
    problem = {
        "type": "https://citeaudit.example/problems/invalid",
        "title": "Invalid request",
        "status": 422,
        "detail": "body.name: the name is empty",
        "errors": [{"field": "body.name", "message": "the name is empty"}],
    }
    body = httpx2.Response(
        422, content=json.dumps(problem), headers={"Content-Type": "application/problem+json"}
    )
    transport, _calls = _answers(body, httpx2.Response(404, json={"title": "Not Found"}))
    with Client("http://citeaudit.test", "t", transport=transport) as client:
        with pytest.raises(Invalid) as invalid:
            client.set_create(" ")
        with pytest.raises(NotFound) as missing:
            client.set(9)
    error = invalid.value
    assert (error.status, error.detail, error.title, error.type, error.errors) == (
        422,
        problem["detail"],
        problem["title"],
        problem["type"],
        problem["errors"],
    )
    assert (missing.value.detail, missing.value.title) == ("Not Found", "Not Found")


def _job(status: str, done: int, total: int) -> httpx2.Response:
    return httpx2.Response(200, json={"id": 5, "status": status, "done": done, "total": total})


def test_job_wait_reports_progress_until_the_job_ends(capsys):
    steps = [("queued", 0, 0), ("running", 2, 6), ("running", 4, 6), ("succeeded", 6, 6)]
    seen: list[tuple[int, int]] = []
    transport, _calls = _answers(*[_job(*step) for step in steps])
    with Client("http://citeaudit.test", "t", transport=transport) as client:
        job = client.job_wait(5, poll=0, progress=lambda done, total: seen.append((done, total)))
    assert (job.ok, job.done, job.total) == (True, 6, 6)
    assert seen == [(0, 0), (2, 6), (4, 6), (6, 6)]

    transport, _calls = _answers(*[_job(*step) for step in steps])
    with Client("http://citeaudit.test", "t", transport=transport) as client:
        client.job_wait(5, poll=0, progress=True)
    bar = capsys.readouterr().err.splitlines()
    assert bar == [
        "job 5 [" + "." * 30 + "] 0/?",
        "job 5 [" + "#" * 10 + "." * 20 + "] 2/6",
        "job 5 [" + "#" * 20 + "." * 10 + "] 4/6",
        "job 5 [" + "#" * 30 + "] 6/6",
    ]


def test_a_push_refused_by_the_rate_limit_is_sent_again_after_its_retry_after(pauses):
    limited = httpx2.Response(
        429, headers={"Retry-After": "7"}, json={"detail": "Too many writes", "retry_after": 7}
    )
    created = httpx2.Response(201, json={"id": 4, "name": "run"})
    transport, calls = _answers(limited, created)
    with Client("http://citeaudit.test", "t", transport=transport, retries=2) as client:
        assert client.set_create("run")["id"] == 4
    assert [call.method for call in calls] == ["POST", "POST"]
    assert pauses == [7.0]


def test_pulls_send_their_filters_and_a_datetime_as_iso(pauses):
    page = httpx2.Response(200, json={"items": [{"id": 1}], "next_cursor": None})
    transport, calls = _answers(page, httpx2.Response(200, text='{"claim": 1}\n'))
    since = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    with Client("http://citeaudit.test", "t", transport=transport) as client:
        assert list(client.sheets(3, updated_since=since, question="q1", batch=7)) == [{"id": 1}]
        assert list(client.gold(3, updated_since="2026-12-01T09:30:00Z", system="v1")) == [
            {"claim": 1}
        ]
    assert dict(calls[0].url.params) == {
        "limit": "100",
        "updated_since": "2026-12-01T09:30:00+00:00",
        "question": "q1",
        "batch": "7",
    }
    assert dict(calls[1].url.params) == {"updated_since": "2026-12-01T09:30:00Z", "system": "v1"}


@pytest.mark.usefixtures("egress_loopback")
def test_a_leads_webhooks_through_the_client(lead, reviewer_a, live_server, receiver):  # noqa: F811
    audit_set = AuditSetFactory(name="Hooked")
    with Client(live_server.url, _token(lead), retries=0) as client:
        made = client.webhook_create("Hooked", receiver.url, ["claim.adjudicated"])
        hook = Webhook.objects.get()
        assert made["secret"] == hook.secret
        assert [h["id"] for h in client.webhooks("Hooked")] == [hook.pk]
        assert "secret" not in client.webhooks("Hooked")[0]
        with pytest.raises(Invalid):
            client.webhook_create("Hooked", "ftp://example.org/", ["claim.adjudicated"])
        slug = audit_set.workspace.slug
        everywhere = client.webhook_create(None, receiver.url, ["set.reviewed"], workspace=slug)
        assert (everywhere["set"], everywhere["workspace"]) == (None, slug)
        assert [h["id"] for h in client.webhooks(workspace=slug)] == [everywhere["id"]]
        client.webhook_delete(everywhere["id"])
        assert client.webhooks(workspace=slug) == []

        delivery = WebhookDelivery(webhook=hook, event="claim.adjudicated")
        delivery.body = json.dumps({"delivery": str(delivery.uuid)})
        delivery.save()
        webhook_deliver(delivery_id=delivery.pk)
        (listed,) = client.deliveries(hook.pk)
        assert (listed["uuid"], listed["status"]) == (str(delivery.uuid), "delivered")
        assert [a["response_code"] for a in listed["attempt_log"]] == [200]
        assert client.redeliver(hook.pk, listed["uuid"])["status"] == "pending"
        webhook_deliver(delivery_id=delivery.pk)
        assert [h["Citeaudit-Delivery"] for h, _ in receiver.received] == [listed["uuid"]] * 2
        with pytest.raises(NotFound):
            client.redeliver(hook.pk, "00000000-0000-0000-0000-000000000000")

    with (
        Client(live_server.url, _token(reviewer_a), retries=0) as reviewer,
        pytest.raises((Forbidden, NotFound)),
    ):
        reviewer.webhook_delete(hook.pk)
    assert Webhook.objects.filter(pk=hook.pk).exists()
    with Client(live_server.url, _token(lead), retries=0) as client:
        client.webhook_delete(hook.pk)
    assert not Webhook.objects.filter(audit_set=audit_set).exists()


def test_a_models_suggestions_round_trip_through_the_client(lead, live_server, start_worker):
    audit_set = AuditSetFactory(name="Suggested")
    import_file(audit_set, HANDMADE)
    claim = Claim.objects.get(
        answer__audit_set=audit_set, answer__external_id="hm-1-a", order=0, parent=None
    )
    records = [
        {
            "claim": "hm-1-a claim 1",
            "judgment": "supported",
            "judgment_score": 0.8,
            "evidence": [{"passage": 1, "start": 13, "end": 40, "score": 0.9}],
            "unsupported": [{"start": 0, "end": 9, "score": 0.4}],
        }
    ]
    with Client(live_server.url, _token(lead), retries=0) as client:
        summary = client.suggestions_push(audit_set.pk, "nli", "1", records)
        key = summary["source"]
        assert (summary["created"], summary["replaced"]) == (1, 0)
        sources = client.suggestion_sources("Suggested")
        assert [(s["key"], s["name"], s["version"]) for s in sources if s["kind"] == "source"] == [
            (key, "nli", "1")
        ]
        (item,) = list(client.suggestions(audit_set.pk, key))
        assert (item["claim"], item["claim_name"], item["judgment"], item["judgment_score"]) == (
            claim.pk,
            "hm-1-a claim 1",
            "supported",
            0.8,
        )
        assert item["evidence"] == [{"passage": 1, "start": 13, "end": 40, "score": 0.9}]
        assert item["unsupported"] == [{"start": 0, "end": 9, "text": "Full-time", "score": 0.4}]

        with pytest.raises(Invalid) as refused:
            client.suggestions_push(audit_set.pk, "nli", "1", [{"claim": "hm-1-a claim 99"}])
        assert refused.value.errors[0]["field"] == "body.suggestions[0].claim"

        start_worker()
        again = [dict(records[0], judgment="contradicted"), {"claim": "hm-2-a claim 1"}]
        job = client.suggestions_push(audit_set.pk, "nli", "1", again, as_job=True, timeout=60)
        assert (job.status, job.result["created"], job.result["replaced"]) == ("succeeded", 1, 1)
        judged = {i["claim_name"]: i["judgment"] for i in client.suggestions(audit_set.pk, key)}
        assert judged == {"hm-1-a claim 1": "contradicted", "hm-2-a claim 1": ""}

        client.suggestion_source_delete("Suggested", key)
        assert [s for s in client.suggestion_sources("Suggested") if s["kind"] == "source"] == []
        with pytest.raises(NotFound):
            client.suggestion_source_delete("Suggested", key)
