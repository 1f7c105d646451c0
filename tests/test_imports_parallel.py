"""Runs of several systems pushed into one set at the same moment, as a nightly CI pushes
them: each is imported by its own `manage.py db_worker` process, all of them succeed, every
answer is there and the questions they share are stored once."""

from __future__ import annotations

import gc
import sqlite3
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from audit import services
from audit.formats import parse_path
from audit.models import Answer, Job, Question
from audit.services import imports
from tests.conftest import ROOT, _worker_env, api_client
from tests.factories import AuditSetFactory, UserFactory
from tests.formats.helpers import jsonl, native_line

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("role_groups")]

SYSTEMS = ("system-a", "system-b", "system-c")
# Enough answers that the three imports overlap for a while once their workers start.
QUESTIONS = 600


def _run(system: str) -> bytes:
    """A run of one system: one answer to each shared question, each citing its passage."""
    return jsonl(
        *(
            native_line(
                question_id=f"q{i}",
                question=f"How long is warranty {i}?",
                answer_id=f"{system}-{i}",
                system=system,
                answer=f"Warranty {i} lasts {i % 7 + 1} years [1].",
                passages=[{"title": "W", "url": "", "text": f"Warranty {i}: {i % 7 + 1} years."}],
            )
            for i in range(QUESTIONS)
        )
    )


def _workers(count: int, **env: str) -> list[subprocess.Popen]:
    """Worker processes on this test's database, returned once each polls for jobs."""
    started = []
    for _ in range(count):
        started.append(
            subprocess.Popen(
                [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--interval=0.1"],
                cwd=ROOT,
                env={**_worker_env(), **env},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    for worker in started:
        # Its first log line says it polls from now on.
        line = worker.stdout.readline()
        assert "Starting worker" in line, line + worker.stdout.read()
    return started


def _stop(workers: list[subprocess.Popen]) -> str:
    output = []
    for worker in workers:
        if worker.poll() is None:
            worker.kill()
        out, _ = worker.communicate(timeout=30)
        output.append(out or "")
    return "\n".join(output)


def _push_at_once(lead, set_id: int) -> list[int]:
    """POST each system's run to /api/v1/imports from its own thread at the same moment;
    the ids of the jobs queued."""
    barrier = threading.Barrier(len(SYSTEMS))
    answers: dict[str, tuple[int, dict]] = {}
    clients = {system: api_client(lead) for system in SYSTEMS}

    def push(system: str) -> None:
        try:
            upload = SimpleUploadedFile(f"{system}.jsonl", _run(system))
            barrier.wait()
            response = clients[system].post("/api/v1/imports", {"file": upload, "set": set_id})
            answers[system] = (response.status_code, response.json())
        finally:
            connection.close()

    threads = [threading.Thread(target=push, args=(system,)) for system in SYSTEMS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(status for status, _ in answers.values()) == [202, 202, 202], answers
    return [body["id"] for _, body in answers.values()]


def _wait_for_end(job_ids: list[int], seconds: float) -> list[Job]:
    # Bounded by the number of waits, not by reading the clock.
    for _ in range(int(seconds / 0.2)):
        jobs = list(Job.objects.filter(pk__in=job_ids).order_by("pk"))
        if all(job.finished_at is not None for job in jobs):
            return jobs
        time.sleep(0.2)
    return list(Job.objects.filter(pk__in=job_ids).order_by("pk"))


def _three_runs_pushed_at_once_all_succeed(**worker_env: str) -> None:
    lead = UserFactory(username="lead", role="lead")
    audit_set = AuditSetFactory(name="Nightly")
    workers = _workers(len(SYSTEMS), **worker_env)
    try:
        job_ids = _push_at_once(lead, audit_set.pk)
        jobs = _wait_for_end(job_ids, seconds=120)
    finally:
        output = _stop(workers)

    assert [(job.status, job.error) for job in jobs] == [("succeeded", "")] * 3, output
    assert sorted(job.result["answers"] for job in jobs) == [QUESTIONS] * 3
    assert Question.objects.filter(audit_set=audit_set).count() == QUESTIONS
    per_system = {
        system: Answer.objects.filter(audit_set=audit_set, system=system).count()
        for system in SYSTEMS
    }
    assert per_system == dict.fromkeys(SYSTEMS, QUESTIONS)
    # Each question holds one answer of each system, not a copy of the question per run.
    assert set(
        Answer.objects.filter(audit_set=audit_set).values_list("question__external_id", flat=True)
    ) == {f"q{i}" for i in range(QUESTIONS)}


def test_three_runs_sharing_question_ids_pushed_at_once_all_succeed():
    _three_runs_pushed_at_once_all_succeed()


def _holding_the_write_lock(seconds: float) -> threading.Thread:
    """Another process's write transaction on SQLite for `seconds`, from its own connection;
    returned once it holds the lock."""
    held = threading.Event()

    def hold() -> None:
        other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            held.set()
            time.sleep(seconds)
            other.execute("ROLLBACK")
        finally:
            other.close()

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(30)
    return thread


@contextmanager
def _request_busy_timeout(seconds: int) -> Iterator[None]:
    """This process's connection waits `seconds` for the write lock, as SQLITE_BUSY_TIMEOUT
    sets it for a web request."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        before = cursor.fetchone()[0]
        cursor.execute(f"PRAGMA busy_timeout = {seconds * 1000}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {before}")


SQLITE_ONLY = pytest.mark.skipif(
    connection.vendor != "sqlite",
    reason="SQLite only: its one write lock is what a job or command waits for; PostgreSQL "
    "writers wait on rows",
)


@SQLITE_ONLY
def test_a_worker_runs_an_import_job_that_waits_for_the_write_lock_past_a_requests_wait():
    lead = UserFactory(username="lead", role="lead")
    audit_set = AuditSetFactory(name="Nightly")
    job = services.job_import_create(
        upload=SimpleUploadedFile("run.jsonl", _run("system-a")),
        audit_set=audit_set,
        new_set_name="",
        fmt="auto",
        user=lead,
    )
    task = DBTaskResult.objects.get()
    worker = Worker(
        queue_names=["default"],
        interval=0.1,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="test",
        excluded_queue_names=[],
    )

    # Another import holds the write lock for three seconds; a request would give up after one.
    holder = _holding_the_write_lock(3)
    with _request_busy_timeout(1):
        worker.run_task(task)
    holder.join()

    job.refresh_from_db()
    assert (job.status, job.error) == ("succeeded", "")
    assert job.result["answers"] == Answer.objects.filter(audit_set=audit_set).count() > 0


@SQLITE_ONLY
def test_the_import_command_waits_for_the_write_lock_past_a_requests_wait(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(_run("system-a"))

    holder = _holding_the_write_lock(3)
    with _request_busy_timeout(1):
        call_command("import_answers", str(path), "--set", "Nightly", "--workers", "0")
    holder.join()

    assert Answer.objects.filter(audit_set__name="Nightly").count() == QUESTIONS


# ------------------------------------------------------------------------ memory by size


def test_an_import_holds_no_more_memory_after_many_chunks_than_after_a_few(tmp_path, monkeypatch):
    # Small chunks, so two thousand answers are forty of them: whatever the import keeps per
    # answer of the file shows between chunks, beside the working set of one chunk.
    monkeypatch.setattr(imports, "CHUNK", 50)
    answers = 2000
    path = tmp_path / "run.jsonl"
    with open(path, "wb") as out:
        for i in range(answers):
            # The same words in every answer: the matcher's word caches (bounded) stay put.
            line = native_line(question_id=f"question-{i}", answer_id=f"answer-{i}")
            out.write(jsonl(line))
    audit_set = AuditSetFactory(name="Sizes")
    parsed, check = parse_path(path, path.name)
    held: list[int] = []

    def after_each_chunk(done: int) -> None:
        # What is still referenced, not what the collector has yet to free.
        gc.collect()
        held.append(tracemalloc.get_traced_memory()[0])

    tracemalloc.start()
    try:
        summary = services.answers_import(
            audit_set=audit_set,
            parsed=parsed,
            filename=path.name,
            sha256=check.sha256,
            progress=after_each_chunk,
        )
    finally:
        tracemalloc.stop()

    assert (summary.answers, len(held)) == (answers, answers // 50)
    # From the 5th chunk to the 40th: 1,750 answers, which kept ~450 bytes each (~790 KB)
    # when the import remembered every answer and question of the file. What moves now
    # (~40 KB, up and down) is bounded caches: SQLite's statements, the regex module's.
    assert held[-1] - held[4] < 1750 * 64, held
