"""The agreement dashboard at 50,000 claims × 2 reviewers, through the test client.

Builds a throwaway database (50k claims, 100k submitted sheets with evidence, 50k matcher
checks, 20k gold records, 50k verdicts of an automatic judge), then, `--repeat` times, times
the dashboard view cold (empty cache), cached, and after one sheet changed through the
review services (reopened and submitted with another judgment), plus the disagreement queue;
it prints the median of each.

    .venv/bin/python bench/bench_dashboard.py [--claims 50000] [--repeat 5] [--reuse]

DATABASE_URL names the database: for PostgreSQL a scratch database `citeaudit_dash` is
created beside the one named (`--reuse` keeps an earlier build there); without it, a
temporary SQLite file.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PASSAGE = (
    "Full-time employees are entitled to 25 days of paid annual leave. "
    "Part-time employees receive the same entitlement pro rata. "
    "Up to 5 days of unused leave may be carried over. "
    "Requests must be approved by a line manager. "
    "Leave is booked through the HR portal."
)
CLAIMS_PER_ANSWER = 10
JUDGMENTS = ["supported", "partially_supported", "not_supported", "contradicted", "unclear"]


def _database_url(tmp: str, reuse: bool) -> str:
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        parts = urlsplit(url)
        admin = urlunsplit(parts._replace(path="/postgres"))
        for sql in (
            ()
            if reuse
            else ("DROP DATABASE IF EXISTS citeaudit_dash", "CREATE DATABASE citeaudit_dash")
        ):
            subprocess.run(["psql", admin, "-qc", sql], check=True, capture_output=True)
        return urlunsplit(parts._replace(path="/citeaudit_dash"))
    return f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"


def _setup(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    setup_test_environment()
    call_command("migrate", verbosity=0)


def _build(n_claims: int) -> tuple[int, object]:
    from django.contrib.auth.models import User
    from django.db import transaction

    from audit import matching
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
        Rater,
        RaterLabel,
    )

    rng = random.Random(7)
    spans = matching.sentence_spans(PASSAGE)
    lead = User.objects.create_user("lead", password="x")
    grant(lead, "lead")
    reviewers = [User.objects.create_user(name, password="x") for name in ("rev_a", "rev_b")]
    audit_set = AuditSet.objects.create(workspace=command_workspace(None), name="Bench", overlap=2)
    judge = Rater.objects.create(name="nli-bench", kind=Rater.Kind.AUTOMATIC)
    n_answers = n_claims // CLAIMS_PER_ANSWER

    with transaction.atomic():
        questions = Question.objects.bulk_create(
            [
                Question(audit_set=audit_set, external_id=f"q{i}", text=f"Q{i}?")
                for i in range(n_answers)
            ],
            batch_size=2000,
        )
        answers = Answer.objects.bulk_create(
            [
                Answer(
                    audit_set=audit_set,
                    question=q,
                    external_id=f"a{i}",
                    system=f"sys-{i % 3}",
                    text="Claim [1]. " * CLAIMS_PER_ANSWER,
                    content_hash=f"{i:064d}",
                )
                for i, q in enumerate(questions)
            ],
            batch_size=2000,
        )
        passages = Passage.objects.bulk_create(
            [Passage(answer=a, position=1, title="Leave", text=PASSAGE) for a in answers],
            batch_size=2000,
        )
        claims = Claim.objects.bulk_create(
            [
                Claim(
                    answer=a,
                    order=k,
                    text=f"Claim {k} of {a.external_id}.",
                    start=10 * k,
                    end=10 * k + 9,
                )
                for a in answers
                for k in range(CLAIMS_PER_ANSWER)
            ],
            batch_size=5000,
        )
        through = Claim.citations.through
        through.objects.bulk_create(
            [
                through(claim_id=c.pk, passage_id=passages[i // CLAIMS_PER_ANSWER].pk)
                for i, c in enumerate(claims)
            ],
            batch_size=5000,
        )
        checks, assignments, sheets, golds, labels = [], [], [], [], []
        for claim in claims:
            best = rng.randrange(len(spans))
            checks.append(
                ClaimCheck(
                    claim=claim,
                    matcher_version="bench",
                    label="likely",
                    best_score=0.8,
                    highlights=[
                        {"passage": 1, "start": spans[best][0], "end": spans[best][1], "score": 0.8}
                    ],
                )
            )
            truth = rng.choice(JUDGMENTS)
            for reviewer in reviewers:
                judgment = truth if rng.random() < 0.75 else rng.choice(JUDGMENTS)
                chosen = {best} if rng.random() < 0.8 else set()
                if rng.random() < 0.3:
                    chosen.add(rng.randrange(len(spans)))
                assignments.append(Assignment(claim=claim, reviewer=reviewer))
                sheets.append(
                    AuditSheet(
                        claim=claim,
                        reviewer=reviewer,
                        answer_statement=claim.text,
                        judgment=judgment,
                        evidence=[
                            {
                                "passage": 1,
                                "start": spans[s][0],
                                "end": spans[s][1],
                                "text": PASSAGE[spans[s][0] : spans[s][1]],
                            }
                            for s in sorted(chosen)
                        ],
                        status=AuditSheet.Status.SUBMITTED,
                        active_seconds=rng.randrange(1, 120),
                    )
                )
            if rng.random() < 0.4:
                golds.append(Adjudication(claim=claim, judgment=truth, source="edited", lead=lead))
            labels.append(
                RaterLabel(
                    rater=judge,
                    claim=claim,
                    judgment=truth if rng.random() < 0.7 else rng.choice(JUDGMENTS),
                )
            )
        ClaimCheck.objects.bulk_create(checks, batch_size=5000)
        Assignment.objects.bulk_create(assignments, batch_size=5000)
        AuditSheet.objects.bulk_create(sheets, batch_size=5000)
        Adjudication.objects.bulk_create(golds, batch_size=5000)
        RaterLabel.objects.bulk_create(labels, batch_size=5000)
    return audit_set.pk, lead


def _time(client, url: str) -> float:
    start = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - start
    assert response.status_code == 200, (url, response.status_code)
    return elapsed


def _change_one_sheet(claim, n: int) -> None:
    """Reopen one of the claim's sheets and submit it again with another judgment."""
    from audit import services
    from audit.models import AuditSheet

    sheet = AuditSheet.objects.filter(claim=claim).select_related("reviewer").order_by("pk")[0]
    reviewer = sheet.reviewer
    sheet = services.sheet_reopen(sheet=sheet, user=reviewer)
    judgment = ("not_supported", "unclear")[n % 2]
    services.sheet_submit(
        sheet=sheet,
        user=reviewer,
        version=sheet.version,
        data=services.SheetData(judgment=judgment),
    )


def _ms(values: list[float]) -> str:
    runs = ", ".join(f"{v * 1000:.0f}" for v in values)
    return f"{statistics.median(values) * 1000:7.0f} ms  (runs: {runs})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--reuse", action="store_true", help="PostgreSQL: keep the last build")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = _database_url(tmp, args.reuse)
        _setup(url)
        print(f"database: {url.rsplit('@', 1)[-1]}")
        from django.contrib.auth.models import User
        from django.core.cache import cache
        from django.db import connection
        from django.test import Client
        from django.utils import timezone

        import audit.urls  # noqa: F401  (loads numpy, sklearn and krippendorff, as at startup)
        from audit import agreement
        from audit.models import Adjudication, AuditSet, Claim
        from audit.services.disagreements import set_compare
        from audit.services.facts import agreement_facts_rebuild
        from audit.services.statuses import set_statuses_refresh

        if args.reuse and AuditSet.objects.filter(name="Bench").exists():
            set_pk, lead = AuditSet.objects.get(name="Bench").pk, User.objects.get(username="lead")
        else:
            start = time.perf_counter()
            set_pk, lead = _build(args.claims)
            print(f"built {args.claims:,} claims × 2 sheets in {time.perf_counter() - start:.1f} s")
            # bulk_create bypasses the review services: write the facts they would have.
            start = time.perf_counter()
            counted = agreement_facts_rebuild(audit_set_id=set_pk)
            print(f"agreement facts for {counted:,} sheets: {time.perf_counter() - start:.1f} s")
            start = time.perf_counter()
            changed = set_statuses_refresh(audit_set_id=set_pk)
            print(f"stored statuses of {changed:,} claims: {time.perf_counter() - start:.1f} s")
            start = time.perf_counter()
            summary = set_compare(audit_set=AuditSet.objects.get(pk=set_pk))
            print(
                f"compared every claim (settings save): {time.perf_counter() - start:.1f} s; "
                f"{summary.unanimous:,} unanimous, {summary.queued:,} queued"
            )
            if connection.vendor == "postgresql":
                # Autovacuum would get there soon after a bulk load; until it does, the
                # planner guesses a handful of rows per table and nests loops over 50k.
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE")

        client = Client()
        client.force_login(lead)
        url = f"/sets/{set_pk}/agreement/"
        # sklearn loads parts of itself on first use; a running server has paid that already.
        agreement.summarize([agreement.Rating(1, "a", "x"), agreement.Rating(1, "b", "y")])
        # Claims without gold: their sheets can be reopened.
        open_claims = list(
            Claim.objects.filter(answer__audit_set_id=set_pk, adjudication__isnull=True).order_by(
                "-pk"
            )[: args.repeat * 2]
        )
        times: dict[str, list[float]] = {
            key: [] for key in ("cold", "cached", "system", "change", "gold", "queue")
        }
        for n in range(args.repeat):
            cache.clear()
            times["cold"].append(_time(client, url))
            times["cached"].append(statistics.median(_time(client, url) for _ in range(3)))
            times["system"].append(_time(client, url + "?system=sys-1"))
            _change_one_sheet(open_claims[n], n)
            times["change"].append(_time(client, url))
            # New gold: the half that holds raters against gold changes.
            claim = open_claims[args.repeat + n]
            Adjudication.objects.create(
                claim=claim, judgment="unclear", source="edited", updated_at=timezone.now()
            )
            times["gold"].append(_time(client, url))
            times["queue"].append(_time(client, f"/sets/{set_pk}/adjudication/"))
        print(f"medians of {args.repeat} runs")
        print(f"dashboard cold:               {_ms(times['cold'])}")
        print(f"dashboard cached (med. of 3): {_ms(times['cached'])}")
        print(f"one system, cold:             {_ms(times['system'])}")
        print(f"after a sheet changed:        {_ms(times['change'])}")
        print(f"after new gold:               {_ms(times['gold'])}")
        print(f"disagreement queue page:      {_ms(times['queue'])}")


if __name__ == "__main__":
    main()
