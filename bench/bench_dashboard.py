"""The agreement dashboard at 50,000 claims × 2 reviewers, through the test client.

Builds a throwaway SQLite database (50k claims, 100k submitted sheets with evidence, 50k
matcher checks, 20k gold records, 50k verdicts of an automatic judge), then times the
dashboard view cold (empty cache), cached, and cached again after one new sheet arrives
(which changes the cache key, so it is cold again), plus the disagreement queue.

.venv/bin/python bench/bench_dashboard.py [--claims 50000]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

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


def _setup(database: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    setup_test_environment()
    call_command("migrate", verbosity=0)


def _build(n_claims: int) -> tuple[int, object]:
    from django.contrib.auth.models import Group, User
    from django.db import transaction

    from audit import matching, roles
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
    lead.groups.add(Group.objects.get(name=roles.LEAD))
    reviewers = [User.objects.create_user(name, password="x") for name in ("rev_a", "rev_b")]
    audit_set = AuditSet.objects.create(name="Bench", overlap=2)
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=50_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        _setup(Path(tmp) / "bench.sqlite3")
        from django.core.cache import cache
        from django.test import Client
        from django.utils import timezone

        import audit.urls  # noqa: F401  (loads numpy, sklearn and krippendorff, as at startup)
        from audit import agreement
        from audit.models import Adjudication, AuditSet, AuditSheet, Claim
        from audit.services import set_compare

        start = time.perf_counter()
        set_pk, lead = _build(args.claims)
        print(f"built {args.claims:,} claims × 2 sheets in {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        summary = set_compare(audit_set=AuditSet.objects.get(pk=set_pk))
        print(
            f"compared every claim (settings save): {time.perf_counter() - start:.1f} s; "
            f"{summary.unanimous:,} unanimous, {summary.queued:,} queued"
        )

        client = Client()
        client.force_login(lead)
        url = f"/sets/{set_pk}/agreement/"
        # sklearn loads parts of itself on first use; a running server has paid that already.
        agreement.summarize([agreement.Rating(1, "a", "x"), agreement.Rating(1, "b", "y")])
        cache.clear()
        cold = _time(client, url)
        cached = [_time(client, url) for _ in range(5)]
        filtered_cold = _time(client, url + "?system=sys-1")
        filtered = statistics.median(_time(client, url + "?system=sys-1") for _ in range(3))
        # A changed sheet changes the key (save() bumps updated_at): the next view recomputes.
        claim = Claim.objects.filter(answer__audit_set_id=set_pk).order_by("-pk").first()
        AuditSheet.objects.filter(claim=claim).update(judgment="unclear", updated_at=timezone.now())
        after_change = _time(client, url)
        # New gold redoes only the half that holds raters against gold.
        Adjudication.objects.filter(claim=claim).delete()
        Adjudication.objects.create(claim=claim, judgment="unclear", source="unanimous")
        after_gold = _time(client, url)
        queue = statistics.median(_time(client, f"/sets/{set_pk}/adjudication/") for _ in range(3))
        print(f"dashboard cold:                {cold * 1000:7.0f} ms")
        print(f"dashboard cached (median of 5):{statistics.median(cached) * 1000:7.0f} ms")
        print(
            f"one system, cold / cached:     {filtered_cold * 1000:7.0f} / {filtered * 1000:.0f} ms"
        )
        print(f"after a sheet changed (cold):  {after_change * 1000:7.0f} ms")
        print(f"after new gold (raters only):  {after_gold * 1000:7.0f} ms")
        print(f"disagreement queue page:       {queue * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
