"""Side by side: Citeaudit against Label Studio 1.23.2 on the same synthetic ALCE-shaped tasks
(a question, an answer of one cited claim, three ~100-word passages). Run by hand, never in CI:

    .venv/bin/python bench/side_by_side.py [--tasks 10000 50000] [--db sqlite postgres]
                                           [--skip-ls] [--skip-web] [--requests 40]

Label Studio is installed into bench/.ls-venv (git-ignored) on the first run, then started
with `label-studio start` on 127.0.0.1 only, analytics and Sentry switched off, its data in
a scratch folder; PostgreSQL runs use a scratch database `ls_bench` (Citeaudit's is
`citeaudit_side`) on 127.0.0.1:5432 as user postgres, dropped afterwards. Each system is
timed alone: its server is stopped before the other starts. Prints one table per database
and task count, with the date and the load average when each part ran.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_import import _sentence  # noqa: E402

LS_VERSION = "1.23.2"
LS_VENV = ROOT / "bench" / ".ls-venv"
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"
PASSWORD = "side-by-side-password"
LS_TOKEN = "0123456789abcdef0123456789abcdef01234567"
PER_PAGE = 50  # Citeaudit's claims list page; Label Studio's task list is asked the same
# The native importer's bound is 50 MB a file; 10,000 of these tasks take 29 MB.
# One native file whatever the count: the command streams it, and the page takes up to
# 500 MB (the 50k file is 142 MB).
CHUNK = 1_000_000
LABEL_CONFIG = """<View>
  <Header value="$question"/>
  <Text name="claim" value="$claim"/>
  <Text name="passages" value="$passages"/>
  <Choices name="support" toName="claim" choice="single" showInLine="true">
    <Choice value="supported"/>
    <Choice value="partially_supported"/>
    <Choice value="not_supported"/>
    <Choice value="contradicted"/>
    <Choice value="wrong_citation"/>
  </Choices>
</View>"""


# --- the tasks ---------------------------------------------------------------------------


def make_tasks(n: int, seed: int = 11) -> list[dict]:
    """N tasks: a question, one claim citing one of three ~100-word passages (8 sentences of
    8-16 words from bench_import's vocabulary), the claim a sentence of its passage."""
    rng = random.Random(seed)
    tasks = []
    for i in range(n):
        passages = [" ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(8)) for _ in "abc"]
        cited = rng.randrange(3)
        claim = rng.choice(passages[cited].split(". ")).rstrip(".") + "."
        tasks.append(
            {
                "id": i,
                "question": f"Question {i}: what does the policy say about {claim.split()[0]}?",
                "claim": claim,
                "cited": cited + 1,
                "passages": passages,
            }
        )
    return tasks


def citeaudit_line(task: dict) -> str:
    """One answer in Citeaudit's native JSONL, its single claim given explicitly."""
    answer = f"{task['claim'][:-1]} [{task['cited']}]."
    return json.dumps(
        {
            "question_id": f"q{task['id']}",
            "question": task["question"],
            "answer_id": f"a{task['id']}",
            "system": "bench",
            "answer": answer,
            "passages": [
                {"title": f"Doc {task['id']}-{p}", "text": text}
                for p, text in enumerate(task["passages"], start=1)
            ],
            "claims": [answer],
        }
    )


def label_studio_task(task: dict) -> dict:
    passages = "\n\n".join(f"[{p}] {text}" for p, text in enumerate(task["passages"], start=1))
    return {
        "data": {
            "question": task["question"],
            "claim": f"{task['claim'][:-1]} [{task['cited']}].",
            "passages": passages,
        }
    }


def write_files(tasks: list[dict], folder: Path) -> tuple[list[Path], Path]:
    """Citeaudit files of at most CHUNK answers each, and one Label Studio JSON task list."""
    native = []
    for first in range(0, len(tasks), CHUNK):
        path = folder / f"tasks-{first // CHUNK:02d}.jsonl"
        path.write_text(
            "".join(citeaudit_line(t) + "\n" for t in tasks[first : first + CHUNK]),
            encoding="utf-8",
        )
        native.append(path)
    ls_path = folder / "tasks-label-studio.json"
    ls_path.write_text(json.dumps([label_studio_task(t) for t in tasks]), encoding="utf-8")
    return native, ls_path


# --- processes, memory, timing -----------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stamp() -> str:
    one, five, fifteen = os.getloadavg()
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"{now}, load average {one:.2f} {five:.2f} {fifteen:.2f}"


def _largest_rss_mb(pgid: int) -> float:
    """Resident memory of the largest process in a process group: the server itself, or
    the gunicorn worker that serves the request."""
    largest = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != pgid:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    largest = max(largest, int(line.split()[1]))
        except (OSError, ProcessLookupError):
            continue
    return largest / 1024


@contextlib.contextmanager
def _rss_sampler(pgid: int, every: float = 0.05) -> Iterator[list[float]]:
    """Samples the group's largest resident process while the block runs: [before, peak]."""
    seen = [_largest_rss_mb(pgid)] * 2
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(every):
            seen[1] = max(seen[1], _largest_rss_mb(pgid))

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()
        seen[1] = max(seen[1], _largest_rss_mb(pgid))


_OWN_CMDLINE = Path("/proc/self/cmdline").read_bytes()


def _hwm_mb(pid: int) -> float | None:
    """The process's VmHWM once it has left this program's image for its own."""
    try:
        if Path(f"/proc/{pid}/cmdline").read_bytes() == _OWN_CMDLINE:
            return None
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _run_measured(cmd: list[str], env: dict, log: Path) -> tuple[float, float]:
    """Runs a command to its end: (seconds, the process's own peak RSS in MB).

    The peak is VmHWM, read every 20 ms until the process exits. wait4's ru_maxrss would
    not do: a child forked from this process keeps this process's resident size as its
    high-water mark across exec, and this process holds every task in memory.
    """
    start = time.perf_counter()
    with open(log, "wb") as out:
        child = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    peak = 0.0
    while child.poll() is None:
        peak = max(peak, _hwm_mb(child.pid) or 0.0)
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} exited with {child.returncode}; see {log}")
    return seconds, peak


def _download(
    session: requests.Session, url: str, out: Path, pgid: int, **params: str
) -> tuple[float, float, float]:
    """GETs url into out while sampling the server: (seconds, RSS before, peak RSS)."""
    with _rss_sampler(pgid) as rss:
        start = time.perf_counter()
        with session.get(url, params=params, stream=True, timeout=3600) as response:
            response.raise_for_status()
            with out.open("wb") as fh:
                for block in response.iter_content(1 << 20):
                    fh.write(block)
        seconds = time.perf_counter() - start
    return seconds, rss[0], rss[1]


@dataclass
class Server:
    process: subprocess.Popen
    base: str
    log: Path

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


def _start(cmd: list[str], env: dict, log: Path, probe: str, port: int, wait: float) -> Server:
    with open(log, "wb") as out:
        process = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped and measured as one
        )
    server = Server(process, f"http://127.0.0.1:{port}", log)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{cmd[0]} exited with {process.returncode}; see {log}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(server.base + probe, timeout=5).status_code < 500:
                return server
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"{cmd[0]} did not answer within {wait:.0f} s; see {log}")


def _timed_gets(session: requests.Session, urls: list[str]) -> list[float]:
    """Seconds per GET, after two untimed ones; any status but 200 stops the run."""
    for url in urls[:2]:
        session.get(url, timeout=120).raise_for_status()
    timings = []
    for url in urls:
        start = time.perf_counter()
        response = session.get(url, timeout=120)
        timings.append(time.perf_counter() - start)
        response.raise_for_status()
    return timings


def _p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(0.95 * len(values)))]


def _pg(sql: str) -> None:
    subprocess.run(["psql", PG_ADMIN, "-qc", sql], check=True, capture_output=True)


@dataclass
class Result:
    system: str
    db: str
    tasks: int
    figures: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stamps: list[str] = field(default_factory=list)


def _pages(result: Result, session: requests.Session, urls: dict[str, list[str]]) -> None:
    for name, page_urls in urls.items():
        timings = _timed_gets(session, page_urls)
        result.figures[f"{name} p50"] = statistics.median(timings) * 1000
        result.figures[f"{name} p95"] = _p95(timings) * 1000
        print(
            f"  {name}: p50 {result.figures[f'{name} p50']:.0f} ms, "
            f"p95 {result.figures[f'{name} p95']:.0f} ms ({len(timings)} requests)",
            flush=True,
        )


# --- Citeaudit ---------------------------------------------------------------------------


def _manage(env: dict, *args: str, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        **kwargs,
    )
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {args[0]} exited with {done.returncode}: {done.stderr}")
    return done


def _shell_json(env: dict, code: str) -> object:
    out = _manage(env, "shell", "-c", f"import json\n{code}")
    return json.loads(out.stdout.strip().splitlines()[-1])


_CSRF = re.compile(r'<body hx-headers=\'\{"x-csrftoken": "(\w+)"\}\'>')


def _citeaudit_login(base: str, username: str) -> requests.Session:
    session = requests.Session()
    page = session.get(base + "/login/", timeout=30)
    home = session.post(
        base + "/login/",
        timeout=60,
        data={
            "username": username,
            "password": PASSWORD,
            "csrfmiddlewaretoken": _CSRF.search(page.text).group(1),
        },
    )
    home.raise_for_status()
    session.headers["X-CSRFToken"] = _CSRF.search(home.text).group(1)
    return session


def _web_upload(
    session: requests.Session,
    base: str,
    data: bytes,
    filename: str,
    set_name: str,
    set_pk: int | None,
) -> requests.Response:
    form = {"format": "auto"}
    if set_pk is None:
        form["new_set_name"] = set_name
    else:
        form["audit_set"] = str(set_pk)
    return session.post(
        base + "/import/",
        data=form,
        files={"file": (filename, data, "application/jsonl")},
        timeout=600,
    )


def _set_answers(env: dict, name: str) -> tuple[int, int]:
    """(pk, answers) of the named set, or (0, 0) when there is none."""
    return tuple(
        _shell_json(
            env,
            "from audit.models import AuditSet\n"
            f"s = AuditSet.objects.filter(name={name!r}).first()\n"
            "print(json.dumps([s.pk, s.answers.count()] if s else [0, 0]))",
        )
    )


def _job_outcome(session: requests.Session, job_url: str, timeout: float = 3600) -> str:
    """Poll a job's page (the fragment its page polls) until the job has finished; returns
    "succeeded", "failed" or "cancelled"."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = session.get(job_url, headers={"HX-Request": "true"}, timeout=60).text
        if "ok-box" in text:
            return "succeeded"
        if "Nothing was imported." in text:
            return "failed"
        if "Cancelled." in text or "Stopped." in text:
            return "cancelled"
        time.sleep(0.1)
    raise RuntimeError(f"{job_url} did not finish within {timeout:.0f} s")


def _citeaudit_web_import(
    result: Result, env: dict, session: requests.Session, base: str, files: list[Path]
) -> None:
    """The Import page: the whole file in one upload, which the page stores and queues as a
    job; a `db_worker` started with the server runs it. Timed from the upload's first byte
    to the job's page saying it finished, as the person watching that page sees it."""
    n = result.tasks
    whole = b"".join(p.read_bytes() for p in files)
    start = time.perf_counter()
    response = _web_upload(session, base, whole, "tasks.jsonl", "side-web", None)
    if response.status_code != 200 or "/jobs/" not in response.url:
        raise RuntimeError(f"page upload: HTTP {response.status_code} at {response.url}")
    outcome = _job_outcome(session, response.url)
    seconds = time.perf_counter() - start
    _, imported = _set_answers(env, "side-web")
    if outcome != "succeeded" or imported != n:
        raise RuntimeError(f"page upload's job {outcome}: {imported} answers, not {n}")
    result.figures["web import s"] = seconds
    result.figures["web import tasks/s"] = n / seconds
    note = f"page upload of all {n:,} answers in one file ({len(whole) / 1e6:.0f} MB), run as a job"
    result.notes.append(f"{note}: {seconds:.1f} s")
    print(f"  {note}: {seconds:.1f} s, {n / seconds:.0f} tasks/s", flush=True)


def run_citeaudit(
    db: str, tasks: list[dict], files: list[Path], folder: Path, args: argparse.Namespace
) -> Result:
    n = len(tasks)
    result = Result("Citeaudit", db, n)
    if db == "postgres":
        _pg("DROP DATABASE IF EXISTS citeaudit_side")
        _pg("CREATE DATABASE citeaudit_side")
        url = "postgres://postgres@127.0.0.1:5432/citeaudit_side"
    else:
        url = f"sqlite:///{folder}/citeaudit.sqlite3"
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_DEBUG": "0",
        "DJANGO_SETTINGS_MODULE": "audit.settings",
        "DJANGO_SUPERUSER_PASSWORD": PASSWORD,
        "PYTHONPATH": str(ROOT),
        # The set page streams its download whatever the set's size, as Label Studio's export
        # API does, instead of offering an export job past 2,000 answers.
        "CITEAUDIT_WEB_DIRECT_MAX_ANSWERS": str(n + 1),
    }
    server = worker = None
    try:
        _manage(env, "migrate", "-v0")
        _manage(
            env,
            "createsuperuser",
            "--noinput",
            "--username",
            "side_lead",
            "--email",
            "lead@example.com",
        )

        result.stamps.append(f"import: {_stamp()}")
        start = time.perf_counter()
        for path in files:
            _manage(env, "import_answers", str(path), "--set", "side-cli", timeout=3600)
        seconds = time.perf_counter() - start
        result.figures["import s"] = seconds
        result.figures["import tasks/s"] = n / seconds
        counts = _shell_json(
            env,
            "from audit.models import AuditSet, Claim, Answer\n"
            "s = AuditSet.objects.get(name='side-cli')\n"
            "a = Answer.objects.filter(audit_set=s)\n"
            "print(json.dumps([s.pk, a.count(), Claim.objects.filter(answer__audit_set=s)"
            ".count(), list(a.order_by('pk').values_list('pk', flat=True)[:: max(1, len(a) // "
            f"{args.requests})])]))",
        )
        set_pk, answers, claims, answer_pks = counts
        print(
            f"  import_answers ({len(files)} file(s)): {seconds:.1f} s, {n / seconds:.0f} "
            f"tasks/s; {answers} answers, {claims} claims",
            flush=True,
        )
        if answers != n or claims != n:
            raise RuntimeError(f"expected {n} answers and claims, got {answers} / {claims}")
        if db == "postgres":
            _manage(env, "dbshell", input="VACUUM ANALYZE;\n")

        port = _free_port()
        server = _start(
            [
                sys.executable,
                "manage.py",
                "serve",
                "--dev",  # the development secret key, on loopback only
                f"--bind=127.0.0.1:{port}",
                "--workers=2",
                "--no-migrate",
            ],
            env,
            folder / "citeaudit-server.log",
            "/login/",
            port,
            120,
        )
        # The page's uploads are jobs: one worker beside the web server, as deployed.
        with open(folder / "citeaudit-worker.log", "wb") as log:
            worker = subprocess.Popen(
                [sys.executable, "manage.py", "db_worker", "--interval", "0.2"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        session = _citeaudit_login(server.base, "side_lead")
        result.stamps.append(f"pages: {_stamp()}")
        deep = n // PER_PAGE
        _pages(
            result,
            session,
            {
                "list page 1": [f"{server.base}/sets/{set_pk}/claims/"] * args.requests,
                f"list page {deep}": [f"{server.base}/sets/{set_pk}/claims/?page={deep}"]
                * args.requests,
                "task page": [f"{server.base}/answers/{pk}/" for pk in answer_pks][: args.requests],
            },
        )

        result.stamps.append(f"export through the server: {_stamp()}")
        out = folder / "citeaudit-export.jsonl"
        seconds, before, peak = _download(
            session, f"{server.base}/sets/{set_pk}/export/jsonl/", out, server.process.pid
        )
        lines = sum(1 for _ in out.open("rb"))
        # JSON Lines version 2: one record per answer, then one per claim (one claim a task).
        if lines != 2 * n:
            raise RuntimeError(f"the export holds {lines} lines, not {2 * n}")
        result.figures["web export s"] = seconds
        result.figures["web export MB"] = peak
        print(
            f"  set page download (jsonl): {seconds:.1f} s, serving worker {before:.0f} MB "
            f"before, peak {peak:.0f} MB (sampled), {lines} lines, "
            f"{out.stat().st_size / 1e6:.0f} MB",
            flush=True,
        )
        out.unlink()

        if not args.skip_web:
            result.stamps.append(f"page upload: {_stamp()}")
            _citeaudit_web_import(result, env, session, server.base, files)
        server.stop()
        server = None

        result.stamps.append(f"export command: {_stamp()}")
        seconds, peak = _run_measured(
            [sys.executable, "manage.py", "export_labels", "--set", "side-cli"]
            + ["--format", "jsonl", "--out", str(out)],
            env,
            folder / "citeaudit-export.log",
        )
        result.figures["cli export s"] = seconds
        result.figures["cli export MB"] = peak
        print(
            f"  export_labels jsonl: {seconds:.1f} s, peak RSS {peak:.0f} MB, "
            f"{out.stat().st_size / 1e6:.0f} MB",
            flush=True,
        )
        out.unlink()
    finally:
        if server is not None:
            server.stop()
        if worker is not None:
            Server(worker, "", folder / "citeaudit-worker.log").stop()
        if db == "postgres":
            with contextlib.suppress(subprocess.CalledProcessError):
                _pg("DROP DATABASE IF EXISTS citeaudit_side WITH (FORCE)")
    return result


# --- Label Studio ------------------------------------------------------------------------


def ensure_label_studio() -> Path:
    """bench/.ls-venv with label-studio==LS_VERSION (pip from PyPI on the first run)."""
    python = LS_VENV / "bin" / "python"
    binary = LS_VENV / "bin" / "label-studio"
    if binary.exists():
        have = subprocess.run(
            [str(python), "-c", "import importlib.metadata as m; print(m.version('label-studio'))"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        if have == LS_VERSION:
            return binary
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(LS_VENV)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", f"label-studio=={LS_VERSION}"],
        check=True,
    )
    return binary


def _ls_env(db: str, folder: Path, port: int) -> dict:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "DATABASE_", "VIRTUAL_ENV", "PYTHON"))
    }
    env.update(
        {
            "PATH": f"{LS_VENV / 'bin'}:{os.environ.get('PATH', '')}",
            "LABEL_STUDIO_BASE_DATA_DIR": str(folder / "label-studio-data"),
            "LABEL_STUDIO_USERNAME": "side@example.com",
            "LABEL_STUDIO_PASSWORD": PASSWORD,
            "LABEL_STUDIO_USER_TOKEN": LS_TOKEN,
            "LABEL_STUDIO_HOST": f"http://127.0.0.1:{port}",
            # No usage analytics, no error reports to Label Studio's Sentry, no update check.
            "COLLECT_ANALYTICS": "false",
            "LABEL_STUDIO_COLLECT_ANALYTICS": "false",
            "SENTRY_DSN": "",
            "FRONTEND_SENTRY_DSN": "",
            "LATEST_VERSION_CHECK": "false",
            # The token given at start-up is a legacy API token, off by default since 1.20.
            "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
            "DEBUG": "false",
        }
    )
    if db == "postgres":
        env.update(
            {
                "DJANGO_DB": "default",
                "POSTGRE_NAME": "ls_bench",
                "POSTGRE_USER": "postgres",
                "POSTGRE_PASSWORD": "",
                "POSTGRE_HOST": "127.0.0.1",
                "POSTGRE_PORT": "5432",
            }
        )
    return env


def run_label_studio(
    db: str, n: int, ls_file: Path, folder: Path, args: argparse.Namespace
) -> Result:
    result = Result("Label Studio", db, n)
    binary = ensure_label_studio()
    if db == "postgres":
        _pg("DROP DATABASE IF EXISTS ls_bench")
        _pg("CREATE DATABASE ls_bench")
    port = _free_port()
    env = _ls_env(db, folder, port)
    server = None
    try:
        server = _start(
            [
                str(binary),
                "start",
                "--no-browser",
                "--internal-host",
                "127.0.0.1",
                "--port",
                str(port),
                "--username",
                env["LABEL_STUDIO_USERNAME"],
                "--password",
                PASSWORD,
                "--user-token",
                LS_TOKEN,
                "--enable-legacy-api-token",
            ],
            env,
            folder / f"label-studio-{db}.log",
            "/health",
            port,
            900,
        )
        session = requests.Session()
        session.headers["Authorization"] = f"Token {LS_TOKEN}"
        api = server.base + "/api"
        project = session.post(
            f"{api}/projects/",
            json={"title": "side by side", "label_config": LABEL_CONFIG},
            timeout=60,
        )
        project.raise_for_status()
        project_id = project.json()["id"]

        result.stamps.append(f"import: {_stamp()}")
        start = time.perf_counter()
        with ls_file.open("rb") as fh:
            response = session.post(
                f"{api}/projects/{project_id}/import",
                files={"file": (ls_file.name, fh, "application/json")},
                timeout=3600,
            )
        response.raise_for_status()
        count = _ls_task_count(session, api, project_id, n, deadline=time.monotonic() + 3600)
        seconds = time.perf_counter() - start
        result.figures["import s"] = seconds
        result.figures["import tasks/s"] = n / seconds
        # Label Studio has no import command: its import page sends this same request.
        result.figures["web import s"] = seconds
        print(
            f"  import API: {seconds:.1f} s, {n / seconds:.0f} tasks/s; {count} tasks "
            f"(answer: {json.dumps(response.json())[:200]})",
            flush=True,
        )

        first = session.get(
            f"{api}/tasks/",
            params={"project": project_id, "page": 1, "page_size": PER_PAGE},
            timeout=120,
        ).json()
        task_ids = _ls_task_ids(session, api, project_id, args.requests)
        result.stamps.append(f"pages: {_stamp()}")
        deep = n // PER_PAGE
        tasks_url = f"{api}/tasks/?project={project_id}&page_size={PER_PAGE}"
        _pages(
            result,
            session,
            {
                "list page 1": [f"{tasks_url}&page=1"] * args.requests,
                f"list page {deep}": [f"{tasks_url}&page={deep}"] * args.requests,
                "task page": [f"{api}/tasks/{pk}/" for pk in task_ids],
            },
        )
        if "total" in first:
            print(f"  task list total: {first['total']}", flush=True)

        result.stamps.append(f"export through the server: {_stamp()}")
        out = folder / "label-studio-export.json"
        seconds, before, peak = _download(
            session,
            f"{api}/projects/{project_id}/export",
            out,
            server.process.pid,
            exportType="JSON",
            download_all_tasks="true",
        )
        exported = len(json.loads(out.read_bytes()))
        if exported != n:
            raise RuntimeError(f"the export holds {exported} tasks, not {n}")
        result.figures["web export s"] = seconds
        result.figures["web export MB"] = peak
        print(
            f"  export API (JSON, all tasks): {seconds:.1f} s, server {before:.0f} MB "
            f"before, peak {peak:.0f} MB (sampled), {exported} tasks, "
            f"{out.stat().st_size / 1e6:.0f} MB",
            flush=True,
        )
        out.unlink()
        server.stop()
        server = None

        result.stamps.append(f"export command: {_stamp()}")
        seconds, peak = _run_measured(
            [str(binary), "export", str(project_id), "JSON", "--export-path", str(out)],
            env,
            folder / f"label-studio-export-{db}.log",
        )
        exported = len(json.loads(out.read_bytes()))
        if exported != n:
            raise RuntimeError(f"label-studio export wrote {exported} tasks, not {n}")
        result.figures["cli export s"] = seconds
        result.figures["cli export MB"] = peak
        print(
            f"  label-studio export JSON: {seconds:.1f} s, peak RSS {peak:.0f} MB, "
            f"{out.stat().st_size / 1e6:.0f} MB",
            flush=True,
        )
        out.unlink()
    finally:
        if server is not None:
            server.stop()
        if db == "postgres":
            with contextlib.suppress(subprocess.CalledProcessError):
                _pg("DROP DATABASE IF EXISTS ls_bench WITH (FORCE)")
    return result


def _ls_task_count(
    session: requests.Session, api: str, project_id: int, n: int, deadline: float
) -> int:
    """Polls the project until it holds n tasks (an import may finish in the background)."""
    count = -1
    while time.monotonic() < deadline:
        count = _ls_project(session, api, project_id).get("task_number", -1)
        if count >= n:
            return count
        time.sleep(0.5)
    raise RuntimeError(f"Label Studio holds {count} of {n} tasks at the deadline")


def _ls_task_ids(session: requests.Session, api: str, project_id: int, want: int) -> list[int]:
    """Task ids spread over the project, one from each of `want` pages."""
    total_pages = max(1, _ls_project(session, api, project_id)["task_number"] // PER_PAGE)
    ids = []
    for page in range(1, total_pages + 1, max(1, total_pages // want))[:want]:
        tasks = session.get(
            f"{api}/tasks/",
            params={"project": project_id, "page": page, "page_size": PER_PAGE},
            timeout=120,
        ).json()["tasks"]
        ids.append(tasks[0]["id"])
    return ids


def _ls_project(session: requests.Session, api: str, project_id: int) -> dict:
    return session.get(f"{api}/projects/{project_id}/", timeout=120).json()


# --- the table ---------------------------------------------------------------------------

ROWS: list[tuple[str, str, bool]] = [
    # (label, figure, higher is better)
    ("import, command line (Citeaudit) / API (tasks/s)", "import tasks/s", True),
    ("import, command line (Citeaudit) / API (s)", "import s", False),
    ("import, Import page (Citeaudit) / API (s)", "web import s", False),
    ("claims / task list page 1, p95 (ms)", "list page 1 p95", False),
    ("deep list page (tasks ÷ 50), p50 (ms)", "list page {deep} p50", False),
    ("one task / answer page, p95 (ms)", "task page p95", False),
    ("full export through the server (s)", "web export s", False),
    ("full export through the server, server's peak RSS (MB)", "web export MB", False),
    ("full export, command line (s)", "cli export s", False),
    ("full export, command line, peak RSS (MB)", "cli export MB", False),
]


def table(runs: list[tuple[Result | None, Result | None]]) -> str:
    """One table over every task count and database, then when each part ran."""
    lines = [
        "| work | tasks | database | Label Studio | Citeaudit | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for label, key, higher in ROWS:
        for ls, ca in runs:
            some = ca or ls
            deep = some.tasks // PER_PAGE
            a = ls.figures.get(key.format(deep=deep)) if ls else None
            b = ca.figures.get(key.format(deep=deep)) if ca else None
            if a is None and b is None:
                continue
            ratio = f"{(b / a if higher else a / b):.1f}×" if a and b else ""
            cells = " | ".join(f"{v:,.1f}" if v is not None else "—" for v in (a, b))
            lines.append(f"| {label} | {some.tasks:,} | {some.db} | {cells} | {ratio} |")
    lines.append("")
    lines.append(
        "ratio: Label Studio ÷ Citeaudit (for tasks/s, Citeaudit ÷ Label Studio); above 1, "
        "Citeaudit does better."
    )
    for ls, ca in runs:
        for result in (ca, ls):
            if result is None:
                continue
            head = f"- {result.system}, {result.tasks:,} tasks, {result.db}"
            lines.extend(f"{head}, {stamp}" for stamp in result.stamps)
            lines.extend(f"{head}: {note}" for note in result.notes)
    return "\n".join(lines)


def _attempt(what: str, run: Callable[..., Result], *args: object) -> Result | None:
    """A failed part is reported and left out of the table; the other parts still run."""
    try:
        return run(*args)
    except Exception as error:
        print(f"  {what} FAILED: {error}", flush=True)
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[10000])
    parser.add_argument("--db", nargs="+", choices=["sqlite", "postgres"], default=["sqlite"])
    parser.add_argument("--skip-ls", action="store_true", help="time Citeaudit only")
    parser.add_argument("--skip-web", action="store_true", help="no Citeaudit page upload")
    parser.add_argument("--requests", type=int, default=40, help="timed GETs per page")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()

    # Stopped with SIGTERM, it still stops its servers and drops its scratch databases.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(f"stopped by SIGTERM ({_stamp()})"))
    folder = Path(tempfile.mkdtemp(prefix="citeaudit-side-"))
    print(f"started {_stamp()}; scratch folder {folder}", flush=True)
    runs: list[tuple[Result | None, Result | None]] = []
    try:
        if not args.skip_ls:
            ensure_label_studio()
        # Where PYTHONDONTWRITEBYTECODE is set, no process would keep its compiled modules,
        # and every command timed here would compile the app and its libraries again.
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "-j", "0", "audit", sys.prefix],
            cwd=ROOT,
            capture_output=True,
        )
        for n in args.tasks:
            tasks = make_tasks(n)
            files, ls_file = write_files(tasks, folder)
            for db in args.db:
                # A fresh database file, data folder and logs for each task count and database.
                run_folder = folder / f"{n}-{db}"
                run_folder.mkdir()
                print(f"\n== {n:,} tasks, {db}: Citeaudit ({_stamp()})", flush=True)
                ca = _attempt("Citeaudit", run_citeaudit, db, tasks, files, run_folder, args)
                ls = None
                if not args.skip_ls:
                    print(f"== {n:,} tasks, {db}: Label Studio ({_stamp()})", flush=True)
                    ls = _attempt(
                        "Label Studio", run_label_studio, db, n, ls_file, run_folder, args
                    )
                runs.append((ls, ca))
                print("\n" + table(runs[-1:]), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\nfinished {_stamp()}\n")
    print(table(runs))


if __name__ == "__main__":
    main()
