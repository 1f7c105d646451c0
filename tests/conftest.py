from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import cache
from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH, CSRF_SESSION_KEY
from django.utils.crypto import get_random_string
from hypothesis import settings as hypothesis_settings

from audit import services
from audit.formats import parse_file
from audit.models import Answer, AuditSet, ClaimCheck
from tests.factories import AuditSetFactory, UserFactory

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

# A per-example deadline is a wall-clock assertion: on a loaded machine with several workers
# it fails property tests whose code is correct, so no property test has one.
hypothesis_settings.register_profile("citeaudit", deadline=None)
hypothesis_settings.load_profile("citeaudit")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory):
    """On SQLite, a test database in a file (one per xdist worker), as the server uses: an
    in-memory database shared between threads locks whole tables instead, so threaded race
    tests would not meet the file locking (WAL, busy timeout) that production meets."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        path = tmp_path_factory.mktemp("sqlite") / "test.sqlite3"
        database.setdefault("TEST", {})["NAME"] = str(path)


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory):
    """A cache folder of this test process's own: xdist workers clear their cache between
    tests, and a job's progress must not be cleared by another worker's test."""
    from django.test import override_settings

    location = tmp_path_factory.mktemp("cache")
    with override_settings(
        CACHES={
            "default": {
                "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                "LOCATION": str(location),
            }
        }
    ):
        yield location


@pytest.fixture(autouse=True)
def jobs_dir(settings, tmp_path):
    # Uploaded files waiting for their job, per test; matching in this process, as a
    # worker thread in the test server could not fork.
    settings.JOBS_DIR = tmp_path / "jobs"
    settings.IMPORT_WORKERS = 0
    return settings.JOBS_DIR


@pytest.fixture(autouse=True)
def empty_cache():
    # Ids repeat between tests that roll back; a cached release overview must not leak across.
    cache.clear()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # The default hasher is slow on purpose; every test creates users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _worker_env() -> dict[str, str]:
    """The environment of a worker process that uses this test's database, cache and files."""
    from django.conf import settings
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        url = f"sqlite:///{db['NAME']}"
    else:
        url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    # Without REDIS_URL, so the worker's cache is this test's cache folder.
    inherited = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    return {
        **inherited,
        "DATABASE_URL": url,
        "CITEAUDIT_CACHE_DIR": settings.CACHES["default"]["LOCATION"],
        "CITEAUDIT_JOBS_DIR": str(settings.JOBS_DIR),
        "CITEAUDIT_IMPORT_WORKERS": "0",
        "CITEAUDIT_WEBHOOK_RETRY_SECONDS": str(settings.WEBHOOK_RETRY_SECONDS),
        "DB_CONN_MAX_AGE": "0",
        # Without DEBUG the worker runs in this process, not under an autoreloader's child.
        "DJANGO_DEBUG": "0",
    }


def kill_worker_part_way(worker: subprocess.Popen, job, total: int) -> None:
    """SIGKILL the worker once its job reports some of `total` rows done but not all (polled
    for about two minutes at most), as a crash mid-job would stop it."""
    import signal
    import time

    from django.core.cache import cache

    from audit.selectors.jobs import PROGRESS_KEY

    try:
        for _ in range(6000):
            entry = cache.get(PROGRESS_KEY.format(token=job.token)) or {}
            if 0 < entry.get("done", 0) < total:
                break
            assert worker.poll() is None, worker.stderr.read()
            time.sleep(0.02)
        else:
            pytest.fail("the worker never reported progress part-way")
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()


@pytest.fixture
def start_worker(transactional_db):
    """Start `manage.py db_worker` processes on this test's database; stopped at the end.
    Only a transactional test's writes (the queued job) are visible to another process."""
    started: list[subprocess.Popen] = []

    def start(*args: str) -> subprocess.Popen:
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--interval=0.1"]
            + list(args),
            cwd=ROOT,
            env=_worker_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(worker)
        return worker

    yield start
    for worker in started:
        if worker.poll() is None:
            worker.kill()
            worker.wait(timeout=30)


@pytest.fixture
def role_groups(transactional_db):
    # A transactional test starts after earlier ones flushed the default workspace the
    # migration made; the factories make it again, this makes it before anything else.
    from tests.factories import default_workspace

    default_workspace()


@pytest.fixture
def reviewer_a(db):
    return UserFactory(username="rev_a", role="reviewer")


@pytest.fixture
def reviewer_b(db):
    return UserFactory(username="rev_b", role="reviewer")


@pytest.fixture
def lead(db):
    return UserFactory(username="lead", role="lead")


@pytest.fixture
def audit_set(db, reviewer_a, reviewer_b):
    audit_set = AuditSetFactory(name="Calibration")
    audit_set.reviewers.add(reviewer_a, reviewer_b)
    return audit_set


def is_word_char(char: str) -> bool:
    """A character of a word, as \\w counts it: offsets the matcher gives never cut one."""
    return char.isalnum() or char == "_"


def run_queued_jobs() -> list:
    """Run every queued job here, in order, as a worker process would; return them."""
    from audit.models import Job

    jobs = list(Job.objects.filter(status=Job.Status.QUEUED).order_by("pk"))
    for job in jobs:
        services.job_run(job_id=job.pk)
        job.refresh_from_db()
    return jobs


def import_file(audit_set, path: Path, fmt: str = "auto"):
    data = path.read_bytes()
    return services.answers_import(
        audit_set=audit_set,
        parsed=parse_file(data, path.name, fmt=fmt),
        filename=path.name,
        sha256=hashlib.sha256(data).hexdigest(),
    )


@pytest.fixture
def handmade(audit_set):
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    return audit_set


@pytest.fixture
def opened(handmade, reviewer_a, reviewer_b, lead):
    """The hand-made set open for review: every claim assigned to both reviewers."""
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    return handmade


def log_in(client, user):
    """force_login, plus the CSRF secret a real login stores in the session: without it the
    first page would store one, and count that session write among its own queries."""
    client.force_login(user)
    session = client.session
    session[CSRF_SESSION_KEY] = get_random_string(CSRF_SECRET_LENGTH, CSRF_ALLOWED_CHARS)
    session.save()
    return client


@pytest.fixture
def client_for(client):
    def login(user):
        return log_in(client, user)

    return login


@pytest.fixture
def fake_llm():
    """A local OpenAI-compatible endpoint (tests/fake_llm.py), stopped at the end."""
    from tests.fake_llm import FakeLLM

    server = FakeLLM().start()
    yield server
    server.stop()


def refund_set_with_gold(lead, name: str = "Refunds"):
    """The refund example (tests/test_release_reasons.py) as a set whose three claims have
    gold: claim 1 partially supported, claim 2 supported, claim 3 a wrong citation.
    Returns the set and its claims in order."""
    import json
    import tempfile

    from audit.models import Adjudication, AuditSet, Claim, Passage
    from tests.factories import default_workspace
    from tests.test_release_reasons import ANSWER, PASSAGES, QUESTION

    audit_set = AuditSet.objects.create(
        workspace=default_workspace(), name=name, guidelines="Judge only what is cited."
    )
    line = {
        "question_id": "refund-1",
        "question": QUESTION,
        "system": "rag-v1",
        "answer_id": "a1",
        "answer": ANSWER,
        "passages": PASSAGES,
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "refund.jsonl"
        path.write_text(json.dumps(line) + "\n")
        import_file(audit_set, path)
    claims = list(Claim.objects.filter(answer__audit_set=audit_set).order_by("order"))
    third = Passage.objects.get(answer=claims[0].answer, position=3)
    for claim, judgment in zip(
        claims, ["partially_supported", "supported", "wrong_citation"], strict=True
    ):
        Adjudication.objects.create(
            claim=claim,
            judgment=judgment,
            source="edited",
            lead=lead,
            wrong_citation_passage=third if judgment == "wrong_citation" else None,
        )
    services.claims_changed(claim_ids=[c.pk for c in claims], audit_set_id=audit_set.pk)
    return audit_set, claims


def api_client(user, scope: str = "write"):
    """A test client whose requests carry a new API token of the user's (no session)."""
    from django.test import Client

    _token, text = services.token_create(user=user, name="tests", scope=scope)
    return Client(HTTP_AUTHORIZATION=f"Bearer {text}")


def gold_by_agreement(reviewers, claim, judgment: str = "not_supported") -> None:
    """Both reviewers submit the same judgment on the claim: unanimous gold (auto_gold)."""
    from tests.factories import submit_sheet

    for reviewer in reviewers:
        submit_sheet(reviewer, claim, judgment)


@pytest.fixture
def claim():
    """The first claim of the handmade fixture's first answer (tests that import it)."""
    from audit.models import Claim

    return Claim.objects.get(answer__external_id="hm-1-a", order=0)


CHECK_FIELDS = ("matcher_version", "label", "best_score", "highlights", "numbers", "wrong_citation")


def stored_import_rows(audit_set: AuditSet) -> list:
    """Everything an import stored for the set, with ids replaced by positions."""
    rows = []
    answers = Answer.objects.filter(audit_set=audit_set).order_by("pk")
    for answer in answers.select_related("question"):
        rows.append(
            (
                answer.question.external_id,
                answer.question.text,
                answer.external_id,
                answer.system,
                answer.text,
                answer.content_hash,
                answer.is_partial,
                answer.metadata,
                [
                    (p.position, p.title, p.url, p.text, p.is_cited)
                    for p in answer.passages.order_by("position")
                ],
            )
        )
        for claim in answer.claims.order_by("order").prefetch_related("citations"):
            check = ClaimCheck.objects.get(claim=claim)
            rows.append(
                (
                    claim.order,
                    claim.text,
                    claim.start,
                    claim.end,
                    claim.location,
                    claim.cited_unknown,
                    claim.is_uncited,
                    claim.parent_id,
                    claim.review_status,
                    claim.severity,
                    sorted(p.position for p in claim.citations.all()),
                    [getattr(check, f) for f in CHECK_FIELDS],
                )
            )
    return rows


@pytest.fixture
def egress_loopback(settings, monkeypatch):
    """Let outgoing requests reach this test's own receivers on loopback, as an operator with
    a model server on the same machine would (the server refuses loopback otherwise), and
    let the test judge key CITEAUDIT_JUDGE_KEY_TEST go there; in this process and in the
    worker processes it starts (which read the environment)."""
    settings.EGRESS_ALLOW = ["127.0.0.1", "::1", "localhost"]
    settings.JUDGE_KEY_HOSTS = ["CITEAUDIT_JUDGE_KEY_TEST=127.0.0.1"]
    monkeypatch.setenv("CITEAUDIT_EGRESS_ALLOW", ",".join(settings.EGRESS_ALLOW))
    monkeypatch.setenv("CITEAUDIT_JUDGE_KEY_HOSTS", ",".join(settings.JUDGE_KEY_HOSTS))


@pytest.fixture
def small_gold_floor(settings):
    """Judges accepted on a few gold claims (the refund set has three): the operator's floor,
    30 by default, is tested in tests/test_judge_acceptance.py."""
    settings.JUDGE_MIN_GOLD_FLOOR = 1


def queue_import(lead, data: bytes, name: str = "answers.jsonl", set_name: str = "Uploaded"):
    """Queue an import job of `data` into a new set of the default workspace."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.factories import default_workspace

    return services.job_import_create(
        upload=SimpleUploadedFile(name, data),
        audit_set=None,
        new_set_name=set_name,
        fmt="auto",
        user=lead,
        workspace=default_workspace(),
    )
