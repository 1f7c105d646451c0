"""Export benchmark: a synthetic reviewed set (N answers x 5 claims, 3 passages of ~100 words,
2 submitted sheets per claim, gold on half the claims) exported with export_labels, timing
each format and its peak RSS. Run by hand, never in CI:

    .venv/bin/python bench/bench_export.py [--answers 10000] [--formats jsonl audit-sheets]

The set is written with bulk_create into a temporary SQLite file (DATABASE_URL overrides).
Each export runs in a fresh child process so its peak RSS is the export's alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
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


def _setup(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
    import django

    django.setup()


def build(n_answers: int, seed: int = 7) -> tuple[int, int]:
    """Write the synthetic set; returns (claims, sheets)."""
    from django.contrib.auth.models import User
    from django.core.management import call_command

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
    audit_set = AuditSet.objects.create(name="bench")
    people = User.objects.bulk_create([User(username=name) for name in ("rev_a", "rev_b", "lead")])
    rev_a, rev_b, lead = (User.objects.get(username=u.username) for u in people)
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


def measure(fmt: str, out: str) -> dict:
    """Run one export in this process and report its time and peak RSS."""
    from django.core.management import call_command

    # Loaded before the baseline: the app's imports (scikit-learn among them) are the
    # same in every process that runs it, and are not the export's memory.
    from audit.management.commands import export_labels  # noqa: F401
    from audit.models import AuditSet

    AuditSet.objects.get(name="bench")
    base = _peak_rss_mb()
    start = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        call_command(
            "export_labels", "--set", "bench", "--format", fmt, "--out", out, stdout=devnull
        )
    seconds = time.perf_counter() - start
    return {
        "format": fmt,
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "rss_before_mb": round(base, 1),
        "bytes": os.path.getsize(out),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=10000)
    parser.add_argument("--formats", nargs="+", default=["jsonl", "audit-sheets"])
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--database-url", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.measure:
        _setup(args.database_url)
        with tempfile.TemporaryDirectory(prefix="citeaudit-export-") as folder:
            print(json.dumps(measure(args.measure, str(Path(folder) / "export"))))
        return

    tmp = tempfile.mkdtemp(prefix="citeaudit-export-bench-")
    try:
        run(args, os.environ.get("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3"))
    finally:
        # The SQLite file of a large run takes hundreds of megabytes.
        shutil.rmtree(tmp, ignore_errors=True)


def run(args: argparse.Namespace, database_url: str) -> None:
    _setup(database_url)
    start = time.perf_counter()
    claims, sheets = build(args.answers)
    print(
        f"built {args.answers} answers, {claims} claims, {sheets} sheets "
        f"in {time.perf_counter() - start:.1f} s"
    )
    for fmt in args.formats:
        child = subprocess.run(
            [sys.executable, __file__, "--measure", fmt, "--database-url", database_url],
            check=True,
            capture_output=True,
            text=True,
        )
        result = json.loads(child.stdout.strip().splitlines()[-1])
        print(
            f"{fmt:>12}: {result['seconds']:6.2f} s, peak RSS {result['peak_rss_mb']:6.1f} MB "
            f"(app loaded {result['rss_before_mb']:.1f} MB), "
            f"{result['bytes'] / 1e6:.1f} MB written"
        )


if __name__ == "__main__":
    main()
