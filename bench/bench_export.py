"""Export benchmark: a synthetic reviewed set (N answers x 5 claims, 3 passages of ~100 words,
2 submitted sheets per claim, gold on half the claims) exported with export_labels and, with
--web, through the set page's download, timing each format and its peak RSS. Run by hand,
never in CI:

    .venv/bin/python bench/bench_export.py [--answers 10000] [--formats jsonl csv] \
        [--web] [--repeat 3] [--restore] [--json results.json]

--answers 10000 is 100k sheets (5,000 is 50k). The set is written with bulk_create into a
temporary SQLite file (DATABASE_URL overrides; DJANGO_DEBUG=0 is set, as in production), so
the database has no planner statistics, as after any bulk load before ANALYZE. --restore
then exports the set as jsonl and imports that file into a second set with import_answers,
which runs ANALYZE as every large import does, and measures the second set: the exports
right after a bulk import (on PostgreSQL the restore takes minutes). --import-analyze is
the quick stand-in: the ANALYZE a large import runs at its end (planner_statistics_refresh),
on the built set, and nothing more. Each export runs in a fresh child process so its peak RSS is the
export's alone; --repeat gives min and median.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_import import _sentence  # noqa: E402

CLAIMS_PER_ANSWER = 5
CHUNK = 1000
SET_NAME = "bench"
RESTORED = "restored"


def _setup(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
    # Debug mode keeps every query's SQL: production runs without it.
    os.environ.setdefault("DJANGO_DEBUG", "0")
    # The restored file is over the default upload limit; the command line takes it.
    os.environ.setdefault("CITEAUDIT_IMPORT_MAX_BYTES", str(2**31))
    import django

    django.setup()


def build(n_answers: int, seed: int = 7) -> tuple[int, int]:
    """Write the synthetic set; returns (claims, sheets)."""
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from audit.management.workspaces import command_workspace, grant
    from audit.models import (
        Adjudication,
        Answer,
        Assignment,
        AuditSet,
        AuditSheet,
        Claim,
        ClaimCheck,
        Passage,
        Question,
    )

    call_command("migrate", verbosity=0)
    rng = random.Random(seed)
    audit_set = AuditSet.objects.create(workspace=command_workspace(None), name=SET_NAME)
    people = User.objects.bulk_create([User(username=name) for name in ("rev_a", "rev_b", "lead")])
    rev_a, rev_b, lead = (User.objects.get(username=u.username) for u in people)
    grant(lead, "lead")
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    n_claims = n_sheets = 0
    for first in range(0, n_answers, CHUNK):
        count = min(CHUNK, n_answers - first)
        questions = Question.objects.bulk_create(
            Question(audit_set=audit_set, external_id=f"q{i}", text=f"Question {i}?")
            for i in range(first, first + count)
        )
        answers = []
        docs_per_answer = []
        for i, question in zip(range(first, first + count), questions, strict=True):
            docs = [
                " ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(8)) for _ in range(3)
            ]
            sentences = [
                f"{rng.choice(docs[d % 3].split('. ')).rstrip('.')} [{d % 3 + 1}]."
                for d in range(CLAIMS_PER_ANSWER)
            ]
            docs_per_answer.append((docs, sentences))
            answers.append(
                Answer(
                    audit_set=audit_set,
                    question=question,
                    external_id=f"a{i}",
                    system="bench",
                    text=" ".join(sentences),
                    content_hash=f"{i:064x}",
                    metadata={"run": "bench"},
                )
            )
        Answer.objects.bulk_create(answers)
        passages = Passage.objects.bulk_create(
            Passage(
                answer=a,
                position=p + 1,
                title=f"Doc {p}",
                url=f"https://x/{a.pk}/{p}",
                text=docs[p],
                is_cited=True,
            )
            for a, (docs, _) in zip(answers, docs_per_answer, strict=True)
            for p in range(3)
        )
        claims = []
        for a, (_, sentences) in zip(answers, docs_per_answer, strict=True):
            offset = 0
            for order, sentence in enumerate(sentences):
                claims.append(
                    Claim(
                        answer=a,
                        order=order,
                        text=sentence[:-4],
                        start=offset,
                        end=offset + len(sentence),
                    )
                )
                offset += len(sentence) + 1
        Claim.objects.bulk_create(claims)
        by_answer = {}
        for p in passages:
            by_answer.setdefault(p.answer_id, []).append(p)
        Claim.citations.through.objects.bulk_create(
            Claim.citations.through(claim=c, passage=by_answer[c.answer_id][c.order % 3])
            for c in claims
        )
        ClaimCheck.objects.bulk_create(
            ClaimCheck(
                claim=c,
                matcher_version="bench",
                label="verified",
                best_score=0.93,
                highlights=[{"passage": c.order % 3 + 1, "start": 0, "end": 40, "score": 0.93}],
                numbers=[{"token": "12", "grounded": True}],
            )
            for c in claims
        )
        Assignment.objects.bulk_create(
            Assignment(claim=c, reviewer=r) for c in claims for r in (rev_a, rev_b)
        )
        sheets = AuditSheet.objects.bulk_create(
            AuditSheet(
                claim=c,
                reviewer=r,
                answer_statement=c.text,
                cited_urls=[by_answer[c.answer_id][c.order % 3].url],
                judgment=rng.choice(["supported", "partially_supported", "not_supported"]),
                evidence=[
                    {
                        "passage": c.order % 3 + 1,
                        "start": 0,
                        "end": 40,
                        "text": by_answer[c.answer_id][c.order % 3].text[:40],
                    }
                ],
                unsupported_assertions=(
                    [{"text": c.text[:8], "start": 0, "end": 8, "note": "bench"}]
                    if rng.random() < 0.2 and len(c.text) >= 8
                    else []
                ),
                status="submitted",
                active_seconds=rng.randint(5, 120),
                submitted_at=t0 + timedelta(seconds=c.pk),
            )
            for c in claims
            for r in (rev_a, rev_b)
        )
        golds = Adjudication.objects.bulk_create(
            Adjudication(
                claim=c,
                judgment="supported",
                source="sheet",
                from_sheet=s,
                lead=lead,
                evidence=s.evidence,
            )
            for c, s in zip(claims[::2], sheets[::4], strict=True)
        )
        Adjudication.sheets.through.objects.bulk_create(
            Adjudication.sheets.through(adjudication=g, auditsheet=s)
            for g, i in zip(golds, range(0, len(sheets), 4), strict=True)
            for s in sheets[i : i + 2]
        )
        n_claims += len(claims)
        n_sheets += len(sheets)
    return n_claims, n_sheets


def _peak_rss_mb() -> float:
    """This process's peak RSS. VmHWM belongs to the process image; getrusage's ru_maxrss
    would also count the parent's peak, which a child inherits on Linux."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(fmt: str, out: str, set_name: str, web: bool) -> dict:
    """Run one export in this process and report its time and peak RSS."""
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    # Loaded before the baseline: the app's imports (scikit-learn among them) are the
    # same in every process that runs it, and are not the export's memory.
    from audit.management.commands import export_labels  # noqa: F401
    from audit.models import AuditSet
    from audit.views import exports  # noqa: F401

    audit_set = AuditSet.objects.get(name=set_name)
    client = Client(SERVER_NAME="localhost")
    client.force_login(User.objects.get(username="lead"))
    base = _peak_rss_mb()
    start = time.perf_counter()
    if web:
        response = client.get(reverse("audit:set-export", args=[audit_set.pk, fmt]))
        assert response.status_code == 200, response.status_code
        with open(out, "wb") as file:
            for piece in response.streaming_content:
                file.write(piece)
    else:
        with open(os.devnull, "w") as devnull:
            call_command(
                "export_labels", "--set", set_name, "--format", fmt, "--out", out, stdout=devnull
            )
    seconds = time.perf_counter() - start
    return {
        "format": fmt,
        "path": "web" if web else "cli",
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "rss_before_mb": round(base, 1),
        "bytes": os.path.getsize(out),
    }


def restore(folder: str) -> dict:
    """Export the built set as jsonl and import it into a second set; returns the timings."""
    from django.core.management import call_command

    path = Path(folder) / "bench.jsonl"
    start = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        call_command(
            "export_labels",
            "--set",
            SET_NAME,
            "--format",
            "jsonl",
            "--out",
            str(path),
            stdout=devnull,
        )
    exported = time.perf_counter() - start
    start = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        call_command("import_answers", str(path), "--set", RESTORED, stdout=devnull)
    return {
        "export_s": round(exported, 1),
        "import_s": round(time.perf_counter() - start, 1),
        "bytes": path.stat().st_size,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=10000)
    parser.add_argument(
        "--formats", nargs="+", default=["jsonl", "audit-sheets", "csv", "evidence"]
    )
    parser.add_argument("--web", action="store_true", help="also through the set page")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--restore", action="store_true", help="measure a restored copy")
    parser.add_argument(
        "--import-analyze", action="store_true", help="ANALYZE as a large import does"
    )
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--set-name", default=SET_NAME, help=argparse.SUPPRESS)
    parser.add_argument("--database-url", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.measure:
        _setup(args.database_url)
        with tempfile.TemporaryDirectory(prefix="citeaudit-export-") as folder:
            result = measure(args.measure, str(Path(folder) / "export"), args.set_name, args.web)
            print(json.dumps(result))
        return

    tmp = tempfile.mkdtemp(prefix="citeaudit-export-bench-")
    try:
        run(args, os.environ.get("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3"), tmp)
    finally:
        # The SQLite file of a large run takes hundreds of megabytes.
        shutil.rmtree(tmp, ignore_errors=True)


def _now() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC, load {load}"


def run(args: argparse.Namespace, database_url: str, folder: str) -> None:
    _setup(database_url)
    from django.db import connection

    print(f"{connection.vendor}, started {_now()}")
    start = time.perf_counter()
    claims, sheets = build(args.answers)
    print(
        f"built {args.answers} answers, {claims} claims, {sheets} sheets "
        f"in {time.perf_counter() - start:.1f} s ({_now()})"
    )
    set_name = SET_NAME
    report: dict = {"database": connection.vendor, "answers": args.answers, "sheets": sheets}
    if args.import_analyze:
        from django.db import transaction

        from audit.services.planner import planner_statistics_refresh

        start = time.perf_counter()
        with transaction.atomic():
            planner_statistics_refresh(rows=claims)
        print(f"analysed as an import does in {time.perf_counter() - start:.1f} s")
    if args.restore:
        report["restore"] = restore(folder)
        set_name = RESTORED
        print(f"restored into {RESTORED!r}: {report['restore']} ({_now()})")
    connection.close()
    report["results"] = []
    paths = [False, True] if args.web else [False]
    for web in paths:
        for fmt in args.formats:
            runs = []
            for _ in range(args.repeat):
                command = [sys.executable, __file__, "--measure", fmt]
                command += ["--database-url", database_url, "--set-name", set_name]
                child = subprocess.run(
                    command + (["--web"] if web else []),
                    check=True,
                    capture_output=True,
                    text=True,
                )
                runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
            seconds = [r["seconds"] for r in runs]
            rss = [r["peak_rss_mb"] for r in runs]
            result = {
                "format": fmt,
                "path": runs[0]["path"],
                "seconds_min": min(seconds),
                "seconds_median": statistics.median(seconds),
                "peak_rss_mb_min": min(rss),
                "peak_rss_mb_max": max(rss),
                "rss_before_mb": runs[0]["rss_before_mb"],
                "bytes": runs[0]["bytes"],
                "at": _now(),
            }
            report["results"].append(result)
            print(
                f"{result['path']:>3} {fmt:>12}: {min(seconds):6.2f} s min, "
                f"{statistics.median(seconds):6.2f} s median, peak RSS {min(rss):6.1f}-"
                f"{max(rss):6.1f} MB (app loaded {result['rss_before_mb']:.1f} MB), "
                f"{result['bytes'] / 1e6:.1f} MB written ({result['at']})",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
