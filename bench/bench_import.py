"""Import benchmark: answers parsed, split or located, matched and written to a fresh
database. Run by hand, never in CI:

    .venv/bin/python bench/bench_import.py [--answers 1000] [--runs 3]
    .venv/bin/python bench/bench_import.py --tasks-alce-one-claim 10000 [--cli] [--runs 1]

The default shape is ALCE result JSON (5 cited claims split from each answer, 3 passages
of ~100 words). --tasks-alce-one-claim N writes the issue's shape instead: N native JSONL
tasks, each a question, one cited claim given explicitly (located, not split) and three
~100-word passages. --cli runs `manage.py import_answers` on the file in a fresh process
(start-up included) and reports its peak RSS; otherwise the file is imported in this
process and the figure is the import alone. DATABASE_URL picks the database (a temporary
SQLite file by default).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_VOCABULARY = """
employee contract policy leave annual salary overtime notice period probation manager
approval remote working holiday entitlement pension benefit insurance training travel expense
claim receipt department review performance bonus shift schedule sick pay certificate
statutory minimum maximum weekly monthly hours rate agreement union termination resignation
dismissal grievance appeal hearing record data protection
"""
WORDS = _VOCABULARY.split()


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    if rng.random() < 0.4:
        words.insert(rng.randrange(len(words)), str(rng.randint(2, 400)))
    return " ".join(words).capitalize() + "."


def make_alce(n_answers: int, seed: int = 7) -> dict:
    rng = random.Random(seed)
    data = []
    for i in range(n_answers):
        docs = []
        for d in range(3):
            text = " ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(8))
            docs.append({"title": f"Doc {i}-{d}", "text": text})
        sentences = []
        for _ in range(5):
            doc = rng.randrange(3)
            source = rng.choice(docs[doc]["text"].split(". "))
            sentences.append(f"{source.rstrip('.')} [{doc + 1}].")
        data.append(
            {
                "id": f"q{i}",
                "question": f"Question {i}?",
                "docs": docs,
                "output": " ".join(sentences),
            }
        )
    return {"args": {"model": "bench/model-x", "tag": "bench"}, "data": data}


def write_one_claim_tasks(path: Path, n_tasks: int, seed: int = 7) -> None:
    """N native JSONL tasks: a question, one cited claim given explicitly, 3 passages of
    ~100 words (8 sentences of 8-16 words), written line by line."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n_tasks):
            passages = [
                {
                    "title": f"Doc {i}-{d}",
                    "text": " ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(8)),
                }
                for d in range(3)
            ]
            doc = rng.randrange(3)
            source = rng.choice(passages[doc]["text"].split(". ")).rstrip(".")
            claim = f"{source} [{doc + 1}]."
            task = {
                "question_id": f"q{i}",
                "question": f"Question {i}?",
                "system": "bench/model-x",
                "answer": claim,
                "passages": passages,
                "claims": [claim],
            }
            out.write(json.dumps(task) + "\n")


def _probe() -> float:
    """CPU seconds of a fixed loop of pure Python: this machine's speed at the moment.
    A shared host's cores slow down by half at times, whatever the load average says, so
    each run's figures carry the probe taken just before them."""
    start = time.process_time()
    sum(i * i for i in range(10**7))
    return time.process_time() - start


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"


def _postgres_cpu() -> float | None:
    """CPU seconds the local PostgreSQL server's processes have used so far: the
    postmaster's own and its reaped children's (backends that exited), plus every live
    child's. None when no local server can be read (SQLite, or a remote database)."""
    ticks = os.sysconf("SC_CLK_TCK")

    def fields(pid: str) -> list[str]:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rindex(")") + 2 :].split()

    names = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            names[pid] = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:  # gone since the listing
            continue
    total, found = 0.0, False
    for pid, name in names.items():
        if name != "postgres":
            continue
        try:
            values = fields(pid)
        except OSError:
            continue
        found = True
        # utime, stime at 14-15 (1-based), cutime, cstime at 16-17; children's times count
        # once reaped, which only the postmaster does.
        total += int(values[11]) + int(values[12])
        if values[1] == "1" or names.get(values[1]) != "postgres":
            total += int(values[13]) + int(values[14])
    return total / ticks if found else None


class _Cores(threading.Thread):
    """Samples /proc/stat every 0.25 s while a run goes on: the seconds during which the
    machine used less than one and a half of its two cores. A tail on one core (the end of
    an import waiting on one process, such as a commit or ANALYZE) shows here, where the
    CPU totals hide it."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stopping = threading.Event()
        self.under = 0.0

    @staticmethod
    def _read() -> tuple[int, int]:
        with open("/proc/stat") as stat:
            values = [int(v) for v in stat.readline().split()[1:]]
        return sum(values), values[3] + values[4]  # all, idle + waiting on I/O

    def run(self) -> None:
        cores = os.cpu_count() or 1
        before, then = self._read(), time.perf_counter()
        while not self.stopping.wait(0.25):
            now, at = self._read(), time.perf_counter()
            total, idle = now[0] - before[0], now[1] - before[1]
            if total and cores * (1 - idle / total) < 1.5:
                self.under += at - then
            before, then = now, at

    def stop(self) -> float:
        self.stopping.set()
        self.join()
        return self.under


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run_cli(
    path: Path, set_name: str, workers: int | None
) -> tuple[float, float, float, float, float, str]:
    """Seconds, peak RSS (MB) of the command and of its largest worker, CPU seconds in all
    and of the command's own process, and its output, of `manage.py import_answers` in a
    new process."""
    code = (
        "import resource, runpy, sys, time\n"
        "start = time.perf_counter()\n"
        "sys.argv = ['manage.py', 'import_answers', *sys.argv[1:]]\n"
        "try:\n"
        "    runpy.run_path('manage.py', run_name='__main__')\n"
        "finally:\n"
        "    took = time.perf_counter() - start\n"
        "    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "    own, workers = (resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime\n"
        "                    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))\n"
        "    print(f'BENCH {took:.3f} {rss:.1f} {kids:.1f} {own + workers:.3f} {own:.3f}')\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(path),
            "--set",
            set_name,
            *(["--workers", str(workers)] if workers is not None else []),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "CITEAUDIT_IMPORT_MAX_BYTES": str(10**10)},
    )
    if done.returncode:
        raise SystemExit(done.stdout + done.stderr)
    lines = done.stdout.splitlines()
    took, rss, kids, cpu, own = (float(x) for x in lines[-1].split()[1:])
    return took, rss, kids, cpu, own, lines[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=1000)
    parser.add_argument("--tasks-alce-one-claim", type=int, default=0, metavar="N")
    parser.add_argument("--cli", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--workers", type=int, default=None, help="matching processes (default: the command's)"
    )
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="citeaudit-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from audit import services
    from audit.formats import parse_file
    from audit.management.workspaces import command_workspace
    from audit.models import AuditSet, Claim

    call_command("migrate", verbosity=0)
    if args.tasks_alce_one_claim:
        path = Path(tmp) / "tasks.jsonl"
        write_one_claim_tasks(path, args.tasks_alce_one_claim)
        filename, count = path.name, args.tasks_alce_one_claim
    else:
        payload = json.dumps(make_alce(args.answers)).encode()
        path = Path(tmp) / "bench.json"
        path.write_bytes(payload)
        filename, count = "bench.json", args.answers
    engine = django.db.connection.vendor
    timings = []
    for run in range(args.runs):
        name = f"bench {time.time()} {run}"
        probe = _probe()
        if args.cli:
            server_before = _postgres_cpu() if engine == "postgresql" else None
            cores = _Cores()
            cores.start()
            took, rss, kids, cpu, own, output = _run_cli(path, name, args.workers)
            under = cores.stop()
            timings.append(took)
            server = ""
            if server_before is not None:
                # Flushing the import's WAL and pages may go on after the commit.
                time.sleep(2)
                server = f", PostgreSQL server {_postgres_cpu() - server_before:.1f} s CPU"
            # The command's own process parses, writes and refreshes derived rows while its
            # workers match: with cores to spare, its CPU seconds bound the wall time.
            print(
                f"run {run + 1}: {took:.2f} s ({cpu:.1f} s CPU, {own:.1f} s of it in the "
                f"command's own process; under 1.5 cores busy for {under:.1f} s), "
                f"peak RSS {rss:.0f} MB "
                f"(largest worker {kids:.0f} MB){server}, {_load()}, probe {probe:.2f} s: "
                f"{output}"
            )
            continue
        audit_set = AuditSet.objects.create(workspace=command_workspace(None), name=name)
        start = time.perf_counter()
        parsed = parse_file(path.read_bytes(), filename, max_bytes=10**10)
        summary = services.answers_import(
            audit_set=audit_set, parsed=parsed, filename=filename, sha256="bench"
        )
        timings.append(time.perf_counter() - start)
        del parsed
        claims = Claim.objects.filter(answer__audit_set=audit_set).count()
        print(
            f"run {run + 1}: {timings[-1]:.2f} s, {summary.answers} answers, {claims} claims, "
            f"{_load()}, probe {probe:.2f} s, peak RSS so far {_peak_rss_mb():.0f} MB"
        )
    median = statistics.median(timings)
    print(f"median {median:.2f} s for {count} answers on {engine} ({count / median:,.0f} /s)")


if __name__ == "__main__":
    main()
