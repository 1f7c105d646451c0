"""The stored agreement facts are a correct shortcut: after a random sequence of submits,
reopens, edits, adjudications, splits, reassignments, rematching and a restore from the
JSONL export, the dashboard read from facts equals the dashboard computed from scratch out of
the sheets themselves (the way it was computed before facts existed)."""

from __future__ import annotations

import contextlib
import io
import random
import statistics
from collections import defaultdict
from itertools import combinations

import pytest
from django.core.management import call_command

from audit import agreement, judgments, matching, services
from audit.agreement import Rating
from audit.judgments import (
    CONTRADICTED,
    INACCESSIBLE,
    NOT_SUPPORTED,
    PARTIAL,
    SUPPORTED,
    UNCLEAR,
    Assertion,
)
from audit.models import (
    Adjudication,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    Passage,
    Rater,
    RaterLabel,
)
from audit.selectors import dashboard
from audit.services.disagreements import evidence_keys
from audit.services.exports import export_stream
from tests.conftest import FIXTURES, import_file
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

JUDGMENTS = [SUPPORTED, PARTIAL, NOT_SUPPORTED, CONTRADICTED, UNCLEAR, INACCESSIBLE]


# ------------------------------------------------------------------- from scratch


def _from_scratch(audit_set: AuditSet, system: str, pair: tuple[int, int] | None) -> dict:
    """The dashboard's figures straight from sheets, assignments, checks and gold."""
    sheets = AuditSheet.objects.filter(
        claim__answer__audit_set=audit_set, status=AuditSheet.Status.SUBMITTED
    ).select_related("reviewer", "claim__answer")
    if system:
        sheets = sheets.filter(claim__answer__system=system)
    assigned = set(Assignment.objects.values_list("claim_id", "reviewer_id"))
    counted = [s for s in sheets.order_by("pk") if (s.claim_id, s.reviewer_id) in assigned]
    reviewers = sorted({(s.reviewer.username, s.reviewer_id) for s in counted})
    chosen = None
    if pair and len(set(pair)) == 2:
        found = [(name, pk) for name, pk in reviewers if pk in pair]
        chosen = found if len(found) == 2 else None
    if chosen:
        counted = [s for s in counted if s.reviewer_id in pair]
    ratings = [Rating(s.claim_id, s.reviewer.username, s.judgment) for s in counted]
    evidence = {(s.claim_id, s.reviewer.username): evidence_keys(s.evidence) for s in counted}
    first_two: dict[int, list[str]] = defaultdict(list)
    for s in counted:
        first_two[s.claim_id].append(s.reviewer.username)
    hints = {
        claim_id: judgments.hint_keys(highlights)
        for claim_id, highlights in ClaimCheck.objects.filter(
            claim_id__in={s.claim_id for s in counted}
        ).values_list("claim_id", "highlights")
    }
    if chosen:
        (a, _), (b, _) = chosen
        matrices = [agreement.confusion(ratings, a, b, binary=x) for x in (False, True)]
    else:
        order = {c: (names[0], names[1]) for c, names in first_two.items() if len(names) >= 2}
        matrices = [agreement.sheet_confusion(ratings, order=order, binary=x) for x in (0, 1)]
    gold_rows = Adjudication.objects.filter(claim__answer__audit_set=audit_set)
    labels = RaterLabel.objects.filter(claim__answer__audit_set=audit_set).exclude(judgment="")
    if system:
        gold_rows = gold_rows.filter(claim__answer__system=system)
        labels = labels.filter(claim__answer__system=system)
    gold = dict(gold_rows.values_list("claim_id", "judgment"))
    predictions: dict[int, dict[int, str]] = defaultdict(dict)
    for rater_id, claim_id, judgment in labels.values_list("rater_id", "claim_id", "judgment"):
        predictions[rater_id][claim_id] = judgment
    by_claim: dict[int, list[AuditSheet]] = defaultdict(list)
    for s in counted:
        by_claim[s.claim_id].append(s)
    units = [list(combinations(mine, 2)) for mine in by_claim.values() if len(mine) >= 2]

    def mean_f1(tokens) -> float | None:
        # Per claim, the mean over its pairs; then the mean over claims (a pair: its claims).
        scores = [
            statistics.fmean(agreement.token_f1(tokens(a), tokens(b)) for a, b in unit)
            for unit in units
        ]
        return statistics.fmean(scores) if scores else None

    return {
        "evidence_f1": mean_f1(lambda s: judgments.evidence_tokens(s.evidence)),
        "unsupported_f1": mean_f1(lambda s: judgments.assertion_tokens(s.unsupported_assertions)),
        "reviewers": [name for name, _ in reviewers],
        "sheets": len(counted),
        "claims": len({s.claim_id for s in counted}),
        "full": agreement.summarize(ratings),
        "binary": agreement.summarize(ratings, binary=True),
        "confusion": matrices,
        "evidence_jaccard": agreement.mean_evidence_jaccard(evidence),
        "matcher": agreement.matcher_acceptance(evidence, hints),
        "gold": len(gold),
        "raters": {
            Rater.objects.get(pk=rater_id).name: [
                agreement.rater_vs_gold(found, gold, binary=x) for x in (False, True)
            ]
            for rater_id, found in predictions.items()
        },
        "cells": {
            (row, col): list(items)
            for matrix in matrices[:1]
            for (row, col), items in matrix.items.items()
        },
    }


def _close(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and a == pytest.approx(b, abs=1e-9)
    )


def _assert_same_summary(found: agreement.AgreementSummary, expected) -> None:
    assert (found.n_items, found.n_raters) == (expected.n_items, expected.n_raters)
    assert _close(found.percent, expected.percent)
    assert _close(found.alpha, expected.alpha)
    assert [(p.rater_a, p.rater_b, p.n_items) for p in found.pairs] == [
        (p.rater_a, p.rater_b, p.n_items) for p in expected.pairs
    ]
    for x, y in zip(found.pairs, expected.pairs, strict=True):
        assert _close(x.kappa, y.kappa)
        assert _close(x.percent, y.percent)


def _assert_matches_scratch(audit_set: AuditSet, system: str = "", pair=None) -> None:
    board = dashboard.agreement_dashboard(audit_set=audit_set, system=system, pair=pair)
    expected = _from_scratch(audit_set, system, pair)

    assert [r.username for r in board.reviewers] == expected["reviewers"]
    assert (board.sheets, board.claims, board.gold) == (
        expected["sheets"],
        expected["claims"],
        expected["gold"],
    )
    _assert_same_summary(board.full, expected["full"])
    _assert_same_summary(board.binary, expected["binary"])
    for found, matrix in zip(
        (board.confusion, board.confusion_binary), expected["confusion"], strict=True
    ):
        assert (found.rows, found.cols, found.labels, found.counts) == (
            matrix.rows,
            matrix.cols,
            matrix.labels,
            matrix.counts,
        )
    assert _close(board.evidence_jaccard, expected["evidence_jaccard"])
    assert _close(board.evidence_f1, expected["evidence_f1"])
    assert _close(board.unsupported_f1, expected["unsupported_f1"])
    assert board.matcher == expected["matcher"]
    assert {r.name: [r.full, r.binary] for r in board.raters}.keys() == expected["raters"].keys()
    for score in board.raters:
        for found, report in zip(
            (score.full, score.binary), expected["raters"][score.name], strict=True
        ):
            assert (found.n, found.differing, found.per_label) == (
                report.n,
                len(report.disagreements),
                report.per_label,
            )
            assert (found.confusion.labels, found.confusion.counts) == (
                report.confusion.labels,
                report.confusion.counts,
            )
            assert _close(found.accuracy, report.accuracy)
            assert _close(found.kappa, report.kappa)
            differ = dashboard.differing_claims(
                audit_set=audit_set,
                board=board,
                which=score.key,
                binary=found is score.binary,
            )
            assert list(differ) == sorted(report.disagreements)
    for (row, col), items in expected["cells"].items():
        listed = dashboard.cell_claims(
            audit_set=audit_set, board=board, which="reviewers", binary=False, row=row, col=col
        )
        assert list(listed) == sorted(items)


# ------------------------------------------------------------------- random review


def _evidence(rng: random.Random, claim: Claim) -> tuple[services.EvidenceRef, ...]:
    passages = list(Passage.objects.filter(answer_id=claim.answer_id).order_by("position"))
    refs = []
    for _ in range(rng.randint(1, 3)):
        passage = rng.choice(passages)
        spans = matching.sentence_spans(passage.text)
        if spans:
            start, end = rng.choice(spans)
            refs.append(services.EvidenceRef(passage.position, start, end))
    return tuple(refs)


def _part(rng: random.Random, ref: services.EvidenceRef) -> services.EvidenceRef:
    """Part of a sentence: a reviewer who trimmed it to the words that matter."""
    start = rng.randint(ref.start, ref.end - 1)
    return services.EvidenceRef(ref.passage, start, rng.randint(start + 1, ref.end))


def _assertions(rng: random.Random, claim: Claim) -> tuple:
    text = claim.text
    found = []
    for _ in range(rng.choice((0, 0, 1, 2))):
        start = rng.randrange(len(text))
        found.append(Assertion(start=start, end=rng.randint(start + 1, len(text))))
    if rng.random() < 0.2:
        found.append(rng.choice(("per year", "Per Year", "staff")))
    return tuple(found)


def _data(rng: random.Random, claim: Claim) -> services.SheetData:
    judgment = rng.choice(JUDGMENTS)
    evidence = _evidence(rng, claim) if rng.random() < 0.8 else ()
    evidence = tuple(_part(rng, ref) if rng.random() < 0.3 else ref for ref in evidence)
    if judgment in (SUPPORTED, PARTIAL) and not evidence:
        judgment = NOT_SUPPORTED
    return services.SheetData(
        judgment=judgment, evidence=evidence, unsupported_assertions=_assertions(rng, claim)
    )


def _step(rng: random.Random, audit_set: AuditSet, lead, people: dict) -> None:
    roll = rng.random()
    in_set = {"claim__answer__audit_set": audit_set}
    if roll < 0.65:
        assignment = rng.choice(list(Assignment.objects.filter(**in_set).select_related("claim")))
        reviewer = people[assignment.reviewer_id]
        sheet = services.sheet_for(claim=assignment.claim, reviewer=reviewer)
        if sheet.status == AuditSheet.Status.SUBMITTED:
            return
        # A split claim refuses the submit and writes nothing.
        with contextlib.suppress(services.ReviewError):
            services.sheet_submit(
                sheet=sheet,
                user=reviewer,
                version=sheet.version,
                data=_data(rng, assignment.claim),
            )
    elif roll < 0.8:
        submitted = list(
            AuditSheet.objects.filter(
                status=AuditSheet.Status.SUBMITTED, claim__adjudication__isnull=True, **in_set
            )
        )
        if not submitted:
            return
        sheet = rng.choice(submitted)
        reviewer = people[sheet.reviewer_id]
        sheet = services.sheet_reopen(sheet=sheet, user=reviewer)
        # The sheet of a split claim can be reopened but no longer edited: it is unassigned.
        if rng.random() < 0.5 and not sheet.claim.atomic_claims.exists():
            services.sheet_save(
                sheet=sheet, user=reviewer, version=sheet.version, data=_data(rng, sheet.claim)
            )
    elif roll < 0.88:
        waiting = list(
            Claim.objects.filter(
                severity__isnull=False, adjudication__isnull=True, answer__audit_set=audit_set
            )
        )
        if not waiting:
            return
        claim = rng.choice(waiting)
        first = claim.sheets.filter(status=AuditSheet.Status.SUBMITTED).order_by("pk").first()
        services.adjudication_save(claim=claim, lead=lead, version=0, take=first.pk, reason="other")
    elif roll < 0.94:
        unsplit = list(
            Claim.objects.filter(
                parent__isnull=True,
                adjudication__isnull=True,
                atomic_claims__isnull=True,
                answer__audit_set=audit_set,
            )
        )
        # A long walk can split or settle every claim (sooner on PostgreSQL, whose unordered
        # reads above pick other rows than SQLite's).
        if not unsplit:
            return
        claim = rng.choice(unsplit)
        services.claim_split(
            claim=claim, parts=[services.AtomicPart("One."), services.AtomicPart("Two.")], by=lead
        )
    else:
        services.review_open(
            audit_set=audit_set, reviewers=list(people.values())[:3], overlap=3, by=lead
        )


@pytest.mark.parametrize("seed", [1, 2])
def test_facts_dashboard_equals_a_from_scratch_computation(seed, audit_set, lead, tmp_path):
    rng = random.Random(seed)
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    reviewers = [UserFactory(username=name, role="reviewer") for name in ("rev_a", "rev_b", "cy")]
    spare = UserFactory(username="dee", role="reviewer")
    people = {user.pk: user for user in [*reviewers, spare]}
    services.review_open(audit_set=audit_set, reviewers=reviewers, overlap=2, by=lead)
    judge = Rater.objects.create(name="nli", kind=Rater.Kind.AUTOMATIC)
    for claim in Claim.objects.filter(answer__audit_set=audit_set):
        RaterLabel.objects.create(rater=judge, claim=claim, judgment=rng.choice(JUDGMENTS))
    systems = sorted(set(audit_set.answers.values_list("system", flat=True)))

    # Long enough that both seeds leave several claims judged by two reviewers on both
    # databases, whose orders of equal rows differ.
    for step in range(120):
        _step(rng, audit_set, lead, people)
        if step == 35:
            # Another reviewer takes over cy's unsubmitted work; the rest stays cy's.
            services.reviewer_replace(audit_set=audit_set, leaving=reviewers[2], joining=spare)
        if step == 50:
            # New checks, new highlights: what reviewers kept of them changes.
            ClaimCheck.objects.filter(claim__answer__audit_set=audit_set).update(highlights=[])
            services.claim_checks_recompute(audit_set=audit_set)
        if step % 10 == 9:
            _assert_matches_scratch(audit_set)

    # Enough happened for the comparison to mean something.
    assert AuditSheet.objects.filter(status=AuditSheet.Status.SUBMITTED).count() >= 12
    assert dashboard.agreement_dashboard(audit_set=audit_set).full.n_items >= 4
    _assert_matches_scratch(audit_set)
    for system in systems:
        _assert_matches_scratch(audit_set, system=system)
    for a in people.values():
        for b in people.values():
            if a.pk < b.pk:
                _assert_matches_scratch(audit_set, pair=(b.pk, a.pk))

    # Restored from the JSONL export into another set: the importer writes the facts.
    path = tmp_path / "round.jsonl"
    path.write_text("".join(export_stream(audit_set=audit_set, fmt="jsonl")), encoding="utf-8")
    call_command("import_answers", str(path), "--set", "Copy", stdout=io.StringIO())
    copy = AuditSet.objects.get(name="Copy")
    _assert_matches_scratch(copy)
    assert dashboard.agreement_dashboard(audit_set=copy).sheets == (
        dashboard.agreement_dashboard(audit_set=audit_set).sheets
    )


def test_backfill_writes_the_facts_the_services_write(audit_set, lead, reviewer_a, reviewer_b):
    import importlib

    from django.apps import apps

    from audit.models import ClaimFact, PairFact, SheetFact

    migration = importlib.import_module("audit.migrations.0009_agreement_facts")

    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    rng = random.Random(5)
    for assignment in Assignment.objects.select_related("claim"):
        reviewer = reviewer_a if assignment.reviewer_id == reviewer_a.pk else reviewer_b
        sheet = services.sheet_for(claim=assignment.claim, reviewer=reviewer)
        services.sheet_submit(
            sheet=sheet, user=reviewer, version=sheet.version, data=_data(rng, assignment.claim)
        )

    def rows() -> list:
        return [
            sorted(map(tuple, model.objects.values_list(*fields)))
            for model, fields in (
                (SheetFact, ("claim_id", "reviewer_id", "judgment", "kept", "chosen", "novel")),
                (
                    PairFact,
                    ("claim_id", "reviewer_a", "judgment_a", "judgment_b", "evidence_jaccard"),
                ),
                (
                    ClaimFact,
                    ("claim_id", "profile", "evidence_jaccard", "judgment_a", "judgment_b"),
                ),
            )
        ]

    written = rows()
    for model in (SheetFact, PairFact, ClaimFact):
        model.objects.all().delete()
    # The migration's own frozen backfill, on the registry's models here.
    migration.backfill(apps, None)

    assert written[0] and rows() == written


def test_the_span_migration_converts_strings_and_backfills_token_f1(
    audit_set, lead, reviewer_a, reviewer_b
):
    import importlib

    from django.apps import apps

    from audit.models import ClaimFact, PairFact

    migration = importlib.import_module("audit.migrations.0019_unsupported_spans")
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    rng = random.Random(17)
    for assignment in Assignment.objects.select_related("claim"):
        reviewer = reviewer_a if assignment.reviewer_id == reviewer_a.pk else reviewer_b
        sheet = services.sheet_for(claim=assignment.claim, reviewer=reviewer)
        services.sheet_submit(
            sheet=sheet, user=reviewer, version=sheet.version, data=_data(rng, assignment.claim)
        )

    def rows() -> list:
        return [
            sorted(map(tuple, model.objects.values_list(*fields)))
            for model, fields in (
                (PairFact, ("claim_id", "reviewer_a", "evidence_f1", "unsupported_f1")),
                (ClaimFact, ("claim_id", "evidence_f1", "unsupported_f1")),
            )
        ]

    written = rows()
    PairFact.objects.update(evidence_f1=0.5, unsupported_f1=0.5)
    ClaimFact.objects.update(evidence_f1=None, unsupported_f1=None)
    migration.facts_f1(apps, None)
    assert written[0] and rows() == written

    # Plain strings, as sheets and their history stored them before spans.
    sheet = AuditSheet.objects.filter(status="submitted").first()
    AuditSheet.objects.filter(pk=sheet.pk).update(unsupported_assertions=["per year", "staff"])
    AuditSheet.history.filter(id=sheet.pk).update(unsupported_assertions=["per year"])
    migration.assertions_to_items(apps, None)
    sheet.refresh_from_db()
    assert sheet.unsupported_assertions == [
        {"text": "per year", "start": None, "end": None, "note": ""},
        {"text": "staff", "start": None, "end": None, "note": ""},
    ]
    assert [h.unsupported_assertions for h in AuditSheet.history.filter(id=sheet.pk)] == [
        [{"text": "per year", "start": None, "end": None, "note": ""}]
    ] * AuditSheet.history.filter(id=sheet.pk).count()
