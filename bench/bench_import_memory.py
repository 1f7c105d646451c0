"""Import memory by file size: peak RSS of `manage.py import_answers` on native JSONL files
of several sizes, and what it grows by per answer. Run by hand, never in CI:

    .venv/bin/python bench/bench_import_memory.py [--sizes 10000 50000 100000] [--workers 0]

Each file is bench_import.py's one-claim tasks (a question, one given claim, three ~100-word
passages), imported in a fresh process into a new set of a fresh database (a temporary SQLite
file unless DATABASE_URL is set). The growth per answer is the slope between the smallest
and the largest file: start-up and the per-chunk working set cancel out.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_import import ROOT, _load, _probe, write_one_claim_tasks  # noqa: E402

# The command in a process of its own, reporting its own peak: VmHWM, the high-water mark of
# the memory mapped after exec. getrusage's ru_maxrss would not do: Linux carries the
# parent's high-water mark across fork and exec, so a command smaller than this script
# reports this script's size.
_COMMAND = """
import runpy, sys, time
start = time.perf_counter()
sys.argv = ["manage.py", "import_answers", *sys.argv[1:]]
try:
    runpy.run_path("manage.py", run_name="__main__")
finally:
    with open("/proc/self/status") as status:
        hwm = next(line for line in status if line.startswith("VmHWM:")).split()[1]
    print(f"BENCH {time.perf_counter() - start:.3f} {int(hwm) / 1024:.1f}")
"""


def _import(path: Path, set_name: str, workers: int) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of `manage.py import_answers` in a new process."""
    done = subprocess.run(
        [sys.executable, "-c", _COMMAND, str(path), "--set", set_name, "--workers", str(workers)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "CITEAUDIT_IMPORT_MAX_BYTES": str(10**10)},
    )
    if done.returncode:
        raise SystemExit(done.stdout + done.stderr)
    took, rss = (float(x) for x in done.stdout.splitlines()[-1].split()[1:])
    return took, rss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 100_000])
    parser.add_argument("--workers", type=int, default=0, help="matching processes")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="citeaudit-bench-memory-"))
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {django.db.connection.vendor}")
    peaks = {}
    for size in args.sizes:
        path = tmp / f"tasks-{size}.jsonl"
        write_one_claim_tasks(path, size)
        probe = _probe()
        took, rss = _import(path, f"memory {size} {time.time()}", args.workers)
        peaks[size] = rss
        path.unlink()
        print(
            f"{size:>7} answers: peak RSS {rss:.0f} MB, {took:.1f} s, {_load()}, "
            f"probe {probe:.2f} s"
        )
    # The database of a big run takes hundreds of MB.
    shutil.rmtree(tmp, ignore_errors=True)
    low, high = min(peaks), max(peaks)
    if high > low:
        growth = (peaks[high] - peaks[low]) * 1024 / (high - low)
        print(f"growth {growth:.3f} KB per answer between {low} and {high} answers")


if __name__ == "__main__":
    main()
