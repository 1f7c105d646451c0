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
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_import import _load, _probe, _run_cli, write_one_claim_tasks  # noqa: E402


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
        took, rss, kids, _cpu, _own, _output = _run_cli(
            path, f"memory {size} {time.time()}", args.workers
        )
        peaks[size] = rss
        path.unlink()
        print(
            f"{size:>7} answers ({path.name}): peak RSS {rss:.0f} MB (largest worker "
            f"{kids:.0f} MB), {took:.1f} s, {_load()}, probe {probe:.2f} s"
        )
    low, high = min(peaks), max(peaks)
    if high > low:
        growth = (peaks[high] - peaks[low]) * 1024 / (high - low)
        print(f"growth {growth:.3f} KB per answer between {low} and {high} answers")


if __name__ == "__main__":
    main()
