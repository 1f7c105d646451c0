"""Every job ends: with real `manage.py db_worker` processes forking matcher processes, a
no-op re-import and a file refused inside the pool end; a worker killed with -9 has its
job failed, naming it, within the stale limit (and the reference's CI loop ends); a running
job cancels within seconds; the API lists, cancels and retries jobs."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from audit import services
from audit.models import Answer, AuditSet, Claim, Job, JudgeRun, JudgeVerdict, Membership, Workspace
from audit.selectors.jobs import PROGRESS_KEY
from audit.services.imports import CHUNK
from audit.services.judges import judge_create, judge_run_start, judge_threshold_set
from tests.conftest import ROOT, _worker_env, api_client, queue_import, refund_set_with_gold
from tests.factories import UserFactory, default_workspace
from tests.formats.helpers import jsonl, native_line

# A short stale limit for the worker and this test process alike, and a heartbeat well
# inside it, so a lost worker is noticed in seconds rather than the default two minutes.
STALE = 4
WORKER_ENV = {
    "CITEAUDIT_IMPORT_WORKERS": "2",
    "CITEAUDIT_JOB_STALE_SECONDS": str(STALE),
    "CITEAUDIT_JOB_HEARTBEAT_SECONDS": "0.5",
}
# The stale limit of the silent-job test: two seconds of no progress.
SILENT_STALE = 2
# The bound: a job whose worker died ends within two minutes.
ENDS_WITHIN = 120


@pytest.fixture
def stale_limit(settings):
    settings.JOB_STALE_SECONDS = STALE


@contextlib.contextmanager
def matcher_workers(folder: Path) -> Iterator[Callable[..., subprocess.Popen]]:
    """Start `manage.py db_worker` with matcher processes (WORKER_ENV) in a session of its
    own, so the end of the block kills it and anything it forked, whatever the code does.
    Its stderr goes to a file in `folder` (`process.log`)."""
    started: list[subprocess.Popen] = []

    def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        log = folder / f"worker-{len(started)}.log"
        with open(log, "w") as errors:
            process = subprocess.Popen(
                [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--interval=0.1"]
                + list(args),
                cwd=ROOT,
                env={**_worker_env(), **WORKER_ENV, **(env or {})},
                stdout=subprocess.DEVNULL,
                stderr=errors,
                start_new_session=True,
            )
        process.log = log  # type: ignore[attr-defined]
        started.append(process)
        return process

    try:
        yield start
    finally:
        for process in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


@pytest.fixture
def worker(transactional_db, tmp_path):
    with matcher_workers(tmp_path) as start:
        yield start


def _api(user):
    """An API client whose token has been used once: on SQLite its first use writes (the
    token's last use), which would wait for a running import's transaction to commit."""
    client = api_client(user)
    assert client.get("/api/v1/me").status_code == 200
    return client


def _many(n: int, prefix: str = "a") -> bytes:
    return jsonl(*(native_line(question_id=f"q{i}", answer_id=f"{prefix}{i}") for i in range(n)))


def _finish(process: subprocess.Popen, timeout: float = ENDS_WITHIN) -> None:
    """Wait for a --batch worker to run out of jobs and exit 0 (TimeoutExpired if it hangs)."""
    process.wait(timeout=timeout)
    assert process.returncode == 0, process.log.read_text()


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue
        if parent == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _wait_for(predicate, seconds: float, step: float = 0.1):
    """The predicate's first true value, asked every `step` seconds for about `seconds`."""
    for _ in range(int(seconds / step)):
        if value := predicate():
            return value
        time.sleep(step)
    return predicate()


def _part_way(job: Job, total: int, process: subprocess.Popen) -> None:
    from django.core.cache import cache

    def started() -> bool:
        assert process.poll() is None, process.log.read_text()
        entry = cache.get(PROGRESS_KEY.format(token=job.token)) or {}
        return 0 < entry.get("done", 0) < total

    assert _wait_for(started, ENDS_WITHIN, step=0.02), "the worker never reported progress"


# ---------------------------------------------------------------- the pool ends its jobs


@pytest.mark.usefixtures("role_groups")
def test_a_no_op_re_import_with_matching_processes_ends_and_the_next_job_runs(lead, worker):
    data = _many(8 * CHUNK + 10)
    first = queue_import(lead, data)
    again = queue_import(lead, data)
    after = queue_import(lead, _many(3, prefix="new"), name="next.jsonl", set_name="Next")

    _finish(worker("--batch"))

    for job in (first, again, after):
        job.refresh_from_db()
    assert (first.status, first.result["answers"]) == ("succeeded", 8 * CHUNK + 10)
    assert (again.status, again.result["answers"], again.result["skipped"]) == (
        "succeeded",
        0,
        8 * CHUNK + 10,
    )
    assert (after.status, after.result["answers"]) == ("succeeded", 3)


@pytest.mark.usefixtures("role_groups")
def test_a_line_refused_inside_the_pool_fails_the_job_naming_file_line_and_field(lead, worker):
    # Refused in the first batch of lines while the matcher processes are busy with the
    # batches after it: the pool is ended with work in flight.
    bad = jsonl(native_line(question_id="early", answer_id="early", answer=7))
    refused = queue_import(
        lead, _many(20) + bad + _many(8 * CHUNK, prefix="b"), name="nightly.jsonl"
    )
    after = queue_import(lead, _many(3, prefix="new"), name="next.jsonl", set_name="Next")

    _finish(worker("--batch"))

    refused.refresh_from_db()
    after.refresh_from_db()
    assert refused.status == "failed"
    assert re.match(r"nightly\.jsonl: line 21: answer: ", refused.error), refused.error
    assert not AuditSet.objects.filter(name="Uploaded").exists()
    assert (after.status, after.result["answers"]) == ("succeeded", 3)


# ---------------------------------------------------------- a worker killed mid-import


@pytest.mark.usefixtures("role_groups", "stale_limit")
def test_kill_9_mid_import_fails_the_job_naming_its_worker_and_a_retry_imports_it_all(lead, worker):
    n = 8 * CHUNK
    job = queue_import(lead, _many(n))
    client = _api(lead)
    process = worker()
    _part_way(job, n, process)
    children = _children(process.pid)
    assert children, "the import forked no matcher processes"

    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)

    # No matcher process outlives the worker that forked it.
    assert _wait_for(lambda: not any(_alive(pid) for pid in children), 10)

    body = _ended(client, job)
    assert body is not None, "the job still runs two minutes after its worker died"
    assert body["status"] == "failed"
    assert body["worker"].endswith(f" pid {process.pid}")
    assert body["error"] == (
        f"Its worker ({body['worker']}) stopped answering: no heartbeat for over {STALE} s "
        "(killed, or its machine lost). Nothing of it was kept; running it again starts from "
        "the beginning."
    )
    assert not AuditSet.objects.filter(name="Uploaded").exists()
    assert Answer.objects.count() == Claim.objects.count() == 0

    retried = client.post(f"/api/v1/jobs/{job.pk}/retry")
    assert (retried.status_code, retried.json()["status"]) == (202, "queued")
    _finish(worker("--batch"), timeout=300)

    job.refresh_from_db()
    assert (job.status, job.attempts, job.result["answers"], job.error) == (
        "succeeded",
        2,
        n,
        "",
    )


def test_a_matching_process_killed_mid_import_fails_the_job_and_the_worker_goes_on(lead, worker):
    n = 16 * CHUNK
    job = queue_import(lead, _many(n))
    client = _api(lead)
    process = worker()
    _part_way(job, n, process)
    children = _children(process.pid)
    assert children, "the import forked no matcher processes"

    os.kill(children[0], signal.SIGKILL)  # as the kernel's out-of-memory killer would

    body = _ended(client, job)
    assert body is not None, "the job still runs two minutes after a matcher process died"
    assert body["status"] == "failed"
    assert body["error"].startswith("A matching process stopped in the middle of the import")
    assert not AuditSet.objects.filter(name="Uploaded").exists()
    assert process.poll() is None  # the worker itself goes on to the next job
    after = queue_import(lead, _many(3, prefix="new"), name="next.jsonl", set_name="Next")
    assert _wait_for(lambda: Job.objects.get(pk=after.pk).status == "succeeded", ENDS_WITHIN)


@pytest.mark.usefixtures("role_groups")
def test_a_silent_job_is_kept_alive_by_its_heartbeat_and_names_its_worker(lead, worker, settings):
    # A no-op re-import reports no progress until it ends: only its heartbeat shows that
    # its worker is alive, while the API is asked (and ends lost jobs) throughout. Here it
    # is silent for longer than the (short) stale limit; the heartbeat beats forty times as
    # often, so a busy machine that delays a beat or two does not lose the job. The file is
    # big enough that its no-op re-import outlasts the limit on an idle machine too.
    data = _many(48 * CHUNK)
    first = queue_import(lead, data)
    again = queue_import(lead, data)
    client = _api(lead)
    process = worker("--batch", env={"CITEAUDIT_JOB_HEARTBEAT_SECONDS": "0.05"})
    assert _wait_for(lambda: Job.objects.get(pk=first.pk).status == "succeeded", 300)
    settings.JOB_STALE_SECONDS = SILENT_STALE
    seen = []
    for _ in range(ENDS_WITHIN * 10):
        if process.poll() is not None:
            break
        body = client.get(f"/api/v1/jobs/{again.pk}").json()
        seen.append((body["status"], body["worker"]))
        time.sleep(0.1)

    _finish(process, timeout=1)
    again.refresh_from_db()
    assert (again.status, again.result["skipped"]) == ("succeeded", 48 * CHUNK), again.error
    assert {status for status, _ in seen} <= {"queued", "running", "succeeded"}
    # It was silent for longer than the stale limit: the heartbeat is what kept it alive.
    assert sum(status == "running" for status, _ in seen) * 0.1 > SILENT_STALE, seen
    assert {w for status, w in seen if status == "running"} == {
        f"{again.worker}"
    } and again.worker.endswith(f" pid {process.pid}")


@pytest.mark.usefixtures("role_groups")
def test_a_worker_stopped_twice_mid_import_exits_and_its_job_fails_saying_so(lead, worker):
    n = 8 * CHUNK
    job = queue_import(lead, _many(n))
    process = worker()
    _part_way(job, n, process)

    # The first asks it to finish the job first; the second, to stop at once.
    process.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)

    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error == (
        f"Its worker ({job.worker}) was stopped while it ran. Nothing of it was kept; running "
        "it again starts from the beginning."
    )
    assert not AuditSet.objects.filter(name="Uploaded").exists()


def test_the_documented_ci_loop_ends_for_a_job_whose_worker_died(
    lead, live_server, stale_limit, transactional_db, role_groups
):
    readme = (ROOT / "docs" / "reference.md").read_text()
    (loop,) = [line for line in readme.splitlines() if line.startswith("until curl")]
    (check,) = [line for line in readme.splitlines() if line.endswith("|| exit 3")]
    job = queue_import(lead, _many(2))
    # As a killed worker leaves it: running, its last heartbeat long gone.
    Job.objects.filter(pk=job.pk).update(
        status="running", started_at=timezone.now() - timedelta(minutes=5), worker="w pid 1"
    )
    _token, text = services.token_create(user=lead, name="ci", scope="write")

    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", f"{loop}\n{check}"],
        env={
            **os.environ,
            "CITEAUDIT_URL": live_server.url,
            "AUTH": f"Authorization: Bearer {text}",
            "JOB": str(job.pk),
        },
        capture_output=True,
        text=True,
        timeout=ENDS_WITHIN,
    )

    assert done.returncode == 3, done.stderr  # the script's "the import did not succeed"
    job.refresh_from_db()
    assert job.status == "failed"


# ------------------------------------------------------------------------------- cancel


@pytest.mark.usefixtures("role_groups")
def test_cancel_of_a_running_import_ends_it_within_seconds_and_the_worker_goes_on(lead, worker):
    n = 40 * CHUNK
    job = queue_import(lead, _many(n))
    client = _api(lead)
    process = worker()
    _part_way(job, n, process)

    asked = client.post(f"/api/v1/jobs/{job.pk}/cancel")

    assert asked.status_code == 202
    assert (asked.json()["status"], asked.json()["cancelling"]) == ("running", True)
    body = _wait_for(
        lambda: (b := client.get(f"/api/v1/jobs/{job.pk}").json())["status"] != "running" and b,
        30,
    )
    assert body and body["status"] == "cancelled", body  # within the 30 s waited
    assert not AuditSet.objects.filter(name="Uploaded").exists()
    # The worker is free again: it takes the next job.
    after = queue_import(lead, _many(3, prefix="new"), name="next.jsonl", set_name="Next")
    assert _wait_for(lambda: Job.objects.get(pk=after.pk).status == "succeeded", ENDS_WITHIN), (
        process.log.read_text()
    )
    assert process.poll() is None


@pytest.mark.django_db
def test_cancel_of_a_job_whose_worker_died_is_immediate(lead, stale_limit):
    job = queue_import(lead, _many(2))
    Job.objects.filter(pk=job.pk).update(
        status="running", started_at=timezone.now() - timedelta(minutes=5), worker="w pid 1"
    )

    response = api_client(lead).post(f"/api/v1/jobs/{job.pk}/cancel")

    assert response.status_code == 202
    assert (response.json()["status"], response.json()["error"]) == (
        "cancelled",
        "Its worker (w pid 1) had stopped answering. Nothing of it was kept; running it "
        "again starts from the beginning.",
    )


# -------------------------------------------------------------------------- judge runs


def _judge_run(lead, claims) -> tuple[JudgeRun, Job]:
    judge = judge_create(
        audit_set=claims[0].answer.audit_set,
        fields={"name": "house", "base_url": "https://judge.example.org/v1", "model": "m"},
        user=lead,
    )
    run = JudgeRun.objects.create(
        judge=judge, version=judge.versions.get(), claim_ids=[c.pk for c in claims]
    )
    job = Job.objects.create(
        kind=Job.Kind.JUDGE,
        audit_set=judge.audit_set,
        created_by=lead,
        token=f"judge-{run.pk}",
        params={"run": run.pk},
        total=len(claims),
        status=Job.Status.RUNNING,
        started_at=timezone.now() - timedelta(minutes=5),
        worker="w pid 2",
    )
    run.job = job
    run.save(update_fields=["job"])
    JudgeVerdict.objects.create(run=run, claim=claims[0], judgment="supported")
    return run, job


@pytest.mark.django_db
def test_a_killed_judge_run_says_its_verdicts_are_kept_and_runs_again(
    client_for, lead, stale_limit
):
    _audit_set, claims = refund_set_with_gold(lead)
    run, job = _judge_run(lead, claims)
    client = client_for(lead)

    page = client.get(reverse("audit:judge-run-detail", args=[run.pk])).content.decode()

    job.refresh_from_db()
    assert job.status == "failed"
    assert (
        "Failed: Its worker (w pid 2) stopped answering: no heartbeat for over 4 s (killed, or "
        "its machine lost). Verdicts stored so far are kept; running it again asks only about "
        "the rest."
    ) in page
    assert "Nothing of it was kept" not in client.get(job.get_absolute_url()).content.decode()
    response = client.post(reverse("audit:job-retry", args=[job.pk]))
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.status == "queued"


@pytest.mark.django_db
def test_cancel_of_a_killed_judge_run_ends_it_at_once(client_for, lead, stale_limit):
    _audit_set, claims = refund_set_with_gold(lead)
    run, job = _judge_run(lead, claims)
    client = client_for(lead)

    response = client.post(reverse("audit:job-cancel", args=[job.pk]), follow=True)

    job.refresh_from_db()
    assert job.status == "cancelled"
    assert "Cancelled: its worker had stopped answering." in response.content.decode()
    page = client.get(reverse("audit:judge-run-detail", args=[run.pk])).content.decode()
    assert "Cancelled: Its worker (w pid 2) had stopped answering. Verdicts stored" in page
    assert run.verdicts.count() == 1


def test_cancel_of_a_judge_run_waiting_on_a_slow_endpoint_ends_within_seconds(
    lead, worker, fake_llm, egress_loopback, small_gold_floor
):
    # Every reply takes longer than the wait below: a run that looked for the cancel only
    # when a reply came would still be running when the wait ends.
    fake_llm.delay_seconds = 60
    audit_set, _claims = refund_set_with_gold(lead)
    judge = judge_create(
        audit_set=audit_set,
        fields={
            "name": "slow",
            "base_url": fake_llm.base_url,
            "model": "fake-1",
            "timeout_seconds": 90.0,
        },
        user=lead,
    )
    judge_threshold_set(judge=judge, min_kappa=0.5, min_gold=1, user=lead)
    judge.refresh_from_db()
    run = judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
    job = Job.objects.get(pk=run.job_id)
    client = _api(lead)
    worker()
    assert _wait_for(lambda: fake_llm.requests, 30), "the run never asked the judge"

    asked = client.post(f"/api/v1/jobs/{job.pk}/cancel")

    assert asked.status_code == 202
    body = _wait_for(
        lambda: (b := client.get(f"/api/v1/jobs/{job.pk}").json())["status"] != "running" and b,
        20,
    )
    assert body and body["status"] == "cancelled", body  # within the 20 s waited
    assert run.verdicts.count() == 0  # no reply had come; resuming asks again


# ---------------------------------------------------------------------------------- API


@pytest.mark.django_db
def test_the_api_lists_a_leads_jobs_and_filters_them(lead):
    mine = queue_import(lead, _many(2))
    services.job_cancel(job=mine)
    other = Workspace.objects.create(name="Legal", slug="legal")
    lead_b = UserFactory(username="lead_b")
    Membership.objects.create(workspace=other, user=lead_b, role="lead")
    theirs = services.job_import_create(
        upload=SimpleUploadedFile("b.jsonl", _many(1)),
        audit_set=None,
        new_set_name="B",
        fmt="auto",
        user=lead_b,
        workspace=other,
    )
    client = api_client(lead)

    listed = client.get("/api/v1/jobs").json()
    cancelled = client.get("/api/v1/jobs", {"status": "cancelled"}).json()
    queued = client.get("/api/v1/jobs", {"status": "queued"}).json()

    assert [j["id"] for j in listed["items"]] == [mine.pk]
    assert listed["next_cursor"] is None
    assert [(j["id"], j["status"]) for j in cancelled["items"]] == [(mine.pk, "cancelled")]
    assert queued["items"] == []
    assert [j["id"] for j in api_client(lead_b).get("/api/v1/jobs").json()["items"]] == [theirs.pk]
    assert client.get(f"/api/v1/jobs/{theirs.pk}").status_code == 404
    assert client.post(f"/api/v1/jobs/{theirs.pk}/cancel").status_code == 404
    assert client.post(f"/api/v1/jobs/{theirs.pk}/retry").status_code == 404
    reviewer = api_client(UserFactory(username="rev", role="reviewer"))
    assert reviewer.get("/api/v1/jobs").status_code == 403
    assert reviewer.post(f"/api/v1/jobs/{mine.pk}/retry").status_code == 403


@pytest.mark.django_db
def test_the_api_retries_a_failed_job_and_refuses_what_cannot_run_again(lead, settings):
    client = api_client(lead)
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="S", created_by=lead)
    rematch = services.job_rematch_create(audit_set=audit_set, user=lead)
    Job.objects.filter(pk=rematch.pk).update(status="failed", error="boom")
    refused = queue_import(lead, b'{"oops": 1}\n', name="bad.jsonl")
    services.job_run(job_id=refused.pk)

    retried = client.post(f"/api/v1/jobs/{rematch.pk}/retry")
    again = client.post(f"/api/v1/jobs/{rematch.pk}/retry")
    gone = client.post(f"/api/v1/jobs/{refused.pk}/retry")
    services.job_run(job_id=rematch.pk)
    done = client.post(f"/api/v1/jobs/{rematch.pk}/retry")
    ended = client.post(f"/api/v1/jobs/{rematch.pk}/cancel")

    assert (retried.status_code, retried.json()["status"], retried.json()["error"]) == (
        202,
        "queued",
        "",
    )
    assert (again.status_code, again.json()["detail"]) == (409, "This job is queued already.")
    assert (gone.status_code, gone.json()["detail"]) == (
        409,
        "Its uploaded file is no longer kept: upload it again.",
    )
    assert (done.status_code, done.json()["detail"]) == (
        409,
        "This job has finished; start a new one instead.",
    )
    assert (ended.status_code, ended.json()["detail"]) == (409, "This job has already finished.")
    assert {again["Content-Type"], ended.json()["type"]} == {
        "application/problem+json",
        "https://citeaudit.example/problems/conflict",
    }


def _ended(client, job: Job) -> dict | None:
    """The job as the API shows it once it no longer runs; None if it still runs after
    ENDS_WITHIN seconds."""

    def ended() -> dict | None:
        response = client.get(f"/api/v1/jobs/{job.pk}")
        if response.status_code == 503:
            # The database was busy for a moment (the worker writing): ask again, as any
            # client told Retry-After does. A problem body's `status` is 503, not the job's.
            return None
        body = response.json()
        return body if body["status"] != "running" else None

    return _wait_for(ended, ENDS_WITHIN, step=0.5)
