"""Runs and idempotent pushes through the API: POST /imports with system, run and an
Idempotency-Key; the decision of a named run or of the latest."""

from __future__ import annotations

import threading
from functools import partial

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection

from audit import roles, services
from audit.models import Answer, IdempotencyKey, ImportBatch, Job
from tests.conftest import api_client, run_queued_jobs
from tests.factories import AuditSetFactory, UserFactory
from tests.formats.helpers import jsonl, native_line


def _file(*texts: str) -> bytes:
    return jsonl(
        *(
            native_line(question_id=f"q{i}", answer_id=f"a{i}", answer=text)
            for i, text in enumerate(texts, start=1)
        )
    )


def _push(client, audit_set, data: bytes, key: str = "", **fields: str):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    upload = SimpleUploadedFile("run.jsonl", data)
    return client.post(
        "/api/v1/imports", {"file": upload, "set": audit_set.pk, **fields}, **headers
    )


@pytest.mark.django_db
def test_a_pushed_run_s_job_result_names_what_changed(lead, audit_set):
    client = api_client(lead)
    first = _push(client, audit_set, _file("One [1].", "Two [1]."), system="rag", run="n1")
    assert first.status_code == 202
    run_queued_jobs()

    again = _push(client, audit_set, _file("One [1].", "Two, again [1]."), system="rag", run="n1")
    run_queued_jobs()

    job = client.get(f"/api/v1/jobs/{again.json()['id']}").json()
    assert job["status"] == "succeeded"
    assert (job["result"]["system"], job["result"]["run"]) == ("rag", "n1")
    assert job["result"]["changes"]["ids"] == {
        "added": [],
        "changed": ["a2"],
        "unchanged": ["a1"],
        "retired": [],
    }
    batch = ImportBatch.objects.get(pk=job["result"]["batch_id"])
    assert batch.changes == job["result"]["changes"]


@pytest.mark.django_db
def test_a_run_without_a_system_is_422_naming_the_field_and_queues_nothing(lead, audit_set):
    response = _push(api_client(lead), audit_set, _file("One [1]."), run="n1")

    assert response.status_code == 422
    assert response.json()["detail"] == (
        "Invalid request: system: a run belongs to a system: name the system too."
    )
    assert Job.objects.count() == 0


@pytest.mark.django_db
def test_a_retry_with_the_same_key_and_body_answers_the_first_job(lead, audit_set):
    client = api_client(lead)
    data = _file("One [1].")

    first = _push(client, audit_set, data, key="nightly-1", system="rag", run="n1")
    retry = _push(client, audit_set, data, key="nightly-1", system="rag", run="n1")
    run_queued_jobs()

    assert (first.status_code, retry.status_code) == (202, 202)
    assert retry.json()["id"] == first.json()["id"]
    assert Job.objects.count() == 1
    assert Answer.objects.filter(audit_set=audit_set).count() == 1


@pytest.mark.django_db
def test_the_same_key_with_another_body_is_409_and_queues_nothing(lead, audit_set):
    client = api_client(lead)
    _push(client, audit_set, _file("One [1]."), key="nightly-1", system="rag", run="n1")

    other_file = _push(
        client, audit_set, _file("Two [1]."), key="nightly-1", system="rag", run="n1"
    )
    other_run = _push(client, audit_set, _file("One [1]."), key="nightly-1", system="rag", run="n2")

    assert (other_file.status_code, other_run.status_code) == (409, 409)
    assert "Idempotency-Key" in other_file.json()["detail"]
    assert Job.objects.count() == 1


@pytest.mark.django_db
def test_a_key_past_its_hours_is_free_for_a_new_push_and_expired_keys_are_removed(
    lead, audit_set, settings
):
    from datetime import timedelta

    from django.utils import timezone

    client = api_client(lead)
    first = _push(client, audit_set, _file("One [1]."), key="nightly", system="rag", run="n1")
    stale = _push(client, audit_set, _file("Old [1]."), key="old", system="rag", run="n0")
    # A day and a minute later: both keys were made before the key's hours.
    IdempotencyKey.objects.update(
        created_at=timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_HOURS, minutes=1)
    )

    tonight = _push(client, audit_set, _file("Two [1]."), key="nightly", system="rag", run="n2")
    again = _push(client, audit_set, _file("Two [1]."), key="nightly", system="rag", run="n2")

    assert (first.status_code, stale.status_code, tonight.status_code) == (202, 202, 202)
    assert tonight.json()["id"] != first.json()["id"]  # a new job, not last night's
    assert again.json()["id"] == tonight.json()["id"]  # and the key holds for tonight's
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["nightly"]
    assert Job.objects.count() == 3


@pytest.mark.django_db
def test_keys_are_each_user_s_own(lead, audit_set):
    other = UserFactory(username="lead2", role="lead")
    data = _file("One [1].")

    mine = _push(api_client(lead), audit_set, data, key="k", system="rag", run="n1")
    theirs = _push(api_client(other), audit_set, data, key="k", system="rag", run="n1")

    assert (mine.status_code, theirs.status_code) == (202, 202)
    assert theirs.json()["id"] != mine.json()["id"]


@pytest.mark.django_db
def test_the_decision_names_a_run_or_reads_the_latest(lead, audit_set):
    client = api_client(lead)
    _push(client, audit_set, _file("One [1]."), system="rag", run="n1")
    _push(client, audit_set, _file("One [1].", "Two [1]."), system="rag", run="n2")
    run_queued_jobs()
    url = f"/api/v1/sets/{audit_set.pk}/decision"

    latest = client.get(url, {"system": "rag"}).json()
    older = client.get(url, {"system": "rag", "run": "n1"}).json()
    missing = client.get(url, {"system": "rag", "run": "n9"})

    assert (latest["system"], latest["run"]) == ("rag@n2", "n2")
    assert (older["system"], older["run"]) == ("rag@n1", "n1")
    assert missing.status_code == 404
    assert missing.json()["detail"] == "No run “n9” of system “rag” in this set."


@pytest.mark.django_db
def test_the_gate_command_decides_a_named_run(lead, audit_set, capsys):
    client = api_client(lead)
    _push(client, audit_set, _file("One [1]."), system="rag", run="n1")
    run_queued_jobs()
    services.criteria_update(audit_set=audit_set, criteria=[{"kind": "no_contradicted"}], by=lead)

    with pytest.raises(SystemExit) as exit_:
        call_command("gate", "--set", audit_set.name, "--system", "rag", "--run", "n1")
    # Nothing judged yet: provisional.
    assert exit_.value.code == 2
    assert capsys.readouterr().out.startswith("rag@n1: PROVISIONAL")
    with pytest.raises(SystemExit) as exit_:
        call_command("gate", "--set", audit_set.name, "--system", "rag", "--run", "n9")
    assert exit_.value.code == 3
    assert capsys.readouterr().err == (
        f"gate: no run 'n9' of system 'rag' in set {audit_set.name!r}\n"
    )


def _at_once(*sends):
    """Send every request at the same moment, each from its own thread; their responses."""
    barrier = threading.Barrier(len(sends))
    answers: list = [None] * len(sends)

    def run(index: int) -> None:
        try:
            barrier.wait()
            answers[index] = sends[index]()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(sends))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("role_groups")
def test_two_identical_pushes_at_once_queue_one_job():
    lead = UserFactory(username="lead", role=roles.LEAD)
    audit_set = AuditSetFactory(name="Nightly")
    client = api_client(lead)
    data = _file("One [1].")
    for round_ in range(5):
        key = f"nightly-{round_}"
        answers = _at_once(
            *(partial(_push, client, audit_set, data, key=key, system="rag", run="n1"),) * 2
        )

        assert [answer.status_code for answer in answers] == [202, 202]
        assert answers[0].json()["id"] == answers[1].json()["id"]
        assert IdempotencyKey.objects.filter(key=key).count() == 1
    assert Job.objects.count() == 5


@pytest.mark.django_db
def test_the_job_page_says_what_a_pushed_run_changed(lead, audit_set, client_for):
    client = api_client(lead)
    _push(client, audit_set, _file("One [1].", "Two [1]."), system="rag", run="n1")
    job = _push(client, audit_set, _file("One, again [1]."), system="rag", run="n1").json()
    run_queued_jobs()

    page = client_for(lead).get(f"/jobs/{job['id']}/").content.decode()

    assert "<dt>Run</dt><dd>rag@n1: 0 added, 1 changed, 0 unchanged, 1 retired</dd>" in page
