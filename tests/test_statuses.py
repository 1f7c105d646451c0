"""What the services store to keep pages cheap equals what it is computed from: each
claim's review status, each reviewer's assigned and submitted tally, and every other derived
row (severity, agreement facts) and the set page's release overview, after every write path
in random order."""

import io
import random

import pytest
from django.core.management import call_command
from django.db import transaction
from django.db.models import (
    Case,
    CharField,
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.db.models.lookups import Exact, GreaterThan, LessThan
from django.test import Client
from django.urls import reverse

from audit import selectors, services
from audit.criteria import decision_badge, evaluate
from audit.metrics import RELEASE_FLAGS
from audit.models import (
    Adjudication,
    Answer,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimFact,
    PairFact,
    ReleaseFact,
    ReleaseTally,
    ReviewerTally,
    Severity,
    SheetFact,
)
from audit.services import AtomicPart, ReviewError, SheetData
from audit.services.exports import export_stream
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

# Few judgments, so sheets agree often enough to make gold and disagree often enough to
# queue; none of them needs evidence.
JUDGMENTS = ["not_supported", "contradicted", "unclear"]


def _count(rows: QuerySet, counted: Count) -> Coalesce:
    per_claim = rows.order_by().values("claim").annotate(n=counted).values("n")
    return Coalesce(Subquery(per_claim, output_field=IntegerField()), Value(0))


def _computed_status() -> Case:
    """A claim's review status from its rows, as one SQL expression: the reference the
    stored status (audit.services.statuses, which counts in Python) is held to."""
    Status = selectors.ClaimStatus
    submitted = AuditSheet.objects.filter(claim=OuterRef("pk"), status=AuditSheet.Status.SUBMITTED)
    assigned = _count(Assignment.objects.filter(claim=OuterRef("pk")), Count("pk"))
    sheets = _count(submitted, Count("pk"))
    kinds = _count(submitted, Count("judgment", distinct=True))
    return Case(
        When(
            Exists(Adjudication.objects.filter(claim=OuterRef("pk"))),
            then=Value(Status.ADJUDICATED),
        ),
        When(Exists(Claim.objects.filter(parent=OuterRef("pk"))), then=Value(Status.SPLIT)),
        When(Q(Exact(assigned, 0)), then=Value(Status.UNASSIGNED)),
        When(Q(Exact(sheets, 0)), then=Value(Status.IN_REVIEW)),
        When(Q(LessThan(sheets, assigned)), then=Value(Status.PARTLY)),
        When(
            Q(severity__lt=Severity.CONFIRM) | Q(GreaterThan(kinds, 1)),
            then=Value(Status.DISAGREEMENT),
        ),
        default=Value(Status.SUBMITTED),
        output_field=CharField(),
    )


def _mismatches() -> list[tuple[int, str, str]]:
    stored = dict(Claim.objects.values_list("pk", "review_status"))
    computed = dict(Claim.objects.annotate(c=_computed_status()).values_list("pk", "c"))
    return [(pk, stored[pk], computed[pk]) for pk in sorted(stored) if stored[pk] != computed[pk]]


def _tallies() -> tuple[dict, dict]:
    stored = {
        (t.audit_set_id, t.reviewer_id): (t.assigned, t.submitted)
        for t in ReviewerTally.objects.all()
        if t.assigned or t.submitted
    }
    counted = {}
    for assignment in Assignment.objects.select_related("claim__answer"):
        key = (assignment.claim.answer.audit_set_id, assignment.reviewer_id)
        assigned, submitted = counted.get(key, (0, 0))
        counted[key] = (assigned + 1, submitted)
    for sheet in AuditSheet.objects.filter(
        status=AuditSheet.Status.SUBMITTED, claim__assignments__reviewer=F("reviewer")
    ).select_related("claim__answer"):
        key = (sheet.claim.answer.audit_set_id, sheet.reviewer_id)
        assigned, submitted = counted[key]
        counted[key] = (assigned, submitted + 1)
    return stored, counted


def _submit(rng, audit_set, people, lead):
    assignment = rng.choice(
        list(Assignment.objects.filter(claim__answer__audit_set=audit_set).order_by("pk"))
    )
    reviewer = assignment.reviewer
    sheet = services.sheet_for(claim=assignment.claim, reviewer=reviewer)
    if sheet.status == AuditSheet.Status.SUBMITTED:
        return
    services.sheet_submit(
        sheet=sheet,
        user=reviewer,
        version=sheet.version,
        data=SheetData(judgment=rng.choice(JUDGMENTS)),
    )


def _reopen(rng, audit_set, people, lead):
    sheets = list(AuditSheet.objects.filter(status=AuditSheet.Status.SUBMITTED).order_by("pk"))
    if sheets:
        sheet = rng.choice(sheets)
        services.sheet_reopen(sheet=sheet, user=sheet.reviewer)


def _split(rng, audit_set, people, lead):
    claim = rng.choice(list(Claim.objects.filter(parent__isnull=True).order_by("pk")))
    services.claim_split(
        claim=claim, parts=[AtomicPart("First fact."), AtomicPart("Second fact.")], by=lead
    )


def _adjudicate(rng, audit_set, people, lead):
    waiting = list(
        Claim.objects.filter(severity__isnull=False, adjudication__isnull=True).order_by("pk")
    )
    if not waiting:
        return
    claim = rng.choice(waiting)
    sheets = selectors.adjudication_sheets(claim=claim)
    services.adjudication_save(
        claim=claim,
        lead=lead,
        version=0,
        take=rng.choice(sheets).pk,
        reason="other" if claim.severity < Severity.CONFIRM else "",
    )


def _replace(rng, audit_set, people, lead):
    current = list(audit_set.reviewers.order_by("pk"))
    leaving = rng.choice(current)
    joining = rng.choice([p for p in people if p != leaving])
    services.reviewer_replace(audit_set=audit_set, leaving=leaving, joining=joining)


def _open(rng, audit_set, people, lead):
    services.review_open(audit_set=audit_set, reviewers=rng.sample(people, 2), overlap=2, by=lead)


def _settings(rng, audit_set, people, lead):
    services.adjudication_settings_update(
        audit_set=audit_set,
        by=lead,
        auto_gold=rng.random() < 0.5,
        evidence_jaccard_threshold=0.5,
        anonymous_adjudication=False,
    )


def _rematch(rng, audit_set, people, lead):
    services.claim_checks_recompute(audit_set=audit_set)


def _criteria(rng, audit_set, people, lead):
    choices = [
        [],
        [{"kind": "no_contradicted"}],
        [
            {"kind": "min_supported_share", "percent": 40},
            {"kind": "numbers_grounded", "only_supported": True},
            {"kind": "max_wrong_citations", "limit": 1},
            {"kind": "uncited_only_if_not_worthy"},
        ],
    ]
    services.criteria_update(
        audit_set=audit_set, criteria=rng.choice(choices), by=lead, reason="a random change"
    )


def _admin_delete(rng, audit_set, people, lead):
    """A superuser deletes an assignment or a sheet in the Django admin."""
    model = rng.choice([Assignment, AuditSheet])
    rows = list(model.objects.filter(claim__answer__audit_set=audit_set).order_by("pk"))
    if not rows:
        return
    admin = UserFactory(username="admin", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(admin)
    name = model._meta.model_name
    url = reverse(f"admin:audit_{name}_delete", args=[rng.choice(rows).pk])
    assert client.post(url, {"post": "yes"}).status_code == 302


def _admin_delete_answer(rng, audit_set, people, lead):
    """A superuser deletes an answer, or a question with its answers, in the Django admin;
    only ones nobody has judged yet (the admin refuses to drop agreement facts)."""
    if rng.random() < 0.7:
        return  # rarely, or the set runs out of claims before it reaches every state
    judged = SheetFact.objects.filter(audit_set=audit_set).values("claim__answer_id")
    answers = list(Answer.objects.filter(audit_set=audit_set).exclude(pk__in=judged).order_by("pk"))
    if not answers:
        return
    answer = rng.choice(answers)
    admin = UserFactory(username="admin", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(admin)
    if (
        rng.random() < 0.5
        and not Answer.objects.filter(question=answer.question, pk__in=judged).exists()
    ):
        url = reverse("admin:audit_question_delete", args=[answer.question_id])
    else:
        url = reverse("admin:audit_answer_delete", args=[answer.pk])
    assert client.post(url, {"post": "yes"}).status_code == 302


# Submits dominate, as in a real round; the rest happen now and then.
OPERATIONS = (
    [_submit] * 8
    + [_reopen, _split, _adjudicate] * 2
    + [_replace, _open, _settings, _rematch, _criteria, _admin_delete, _admin_delete_answer]
)


def _derived(audit_set: AuditSet) -> dict:
    """Every row derived from the set's claims, in a comparable shape."""
    claims = Claim.objects.filter(answer__audit_set=audit_set)
    in_set = {"claim__answer__audit_set": audit_set}
    return {
        "claims": sorted(claims.values_list("pk", "review_status", "severity", "evidence_jaccard")),
        "tallies": sorted(
            ReviewerTally.objects.filter(audit_set=audit_set)
            .exclude(assigned=0, submitted=0)
            .values_list("reviewer_id", "assigned", "submitted")
        ),
        "sheet_facts": sorted(
            SheetFact.objects.filter(**in_set).values_list(
                "claim_id", "reviewer_id", "judgment", "highlighted", "kept", "chosen", "novel"
            )
        ),
        "pair_facts": sorted(
            PairFact.objects.filter(**in_set).values_list(
                "claim_id", "reviewer_a_id", "reviewer_b_id", "evidence_jaccard"
            )
        ),
        "claim_facts": sorted(
            ClaimFact.objects.filter(**in_set).values_list(
                "claim_id", "sheets", "profile", "evidence_jaccard", "judgment_a", "judgment_b"
            )
        ),
        "release_facts": sorted(
            (row[0], row[1:-1], tuple(row[-1]))
            for row in ReleaseFact.objects.filter(audit_set=audit_set).values_list(
                "claim_id", "system", *RELEASE_FLAGS, "topics"
            )
        ),
        "release_tallies": sorted(
            (row[0], row[1:-1], tuple(row[-1]))
            for row in ReleaseTally.objects.filter(audit_set=audit_set, claims__gt=0).values_list(
                "claims", "system", *RELEASE_FLAGS, "topics"
            )
        ),
    }


class _RolledBack(Exception):
    pass


def _from_scratch(audit_set: AuditSet) -> dict:
    """_derived after wiping every derived row and rebuilding the whole set at once; the
    rebuild is rolled back. Gold stays: it is a lead's decision (or kept unanimous gold)."""
    found = {}
    try:
        with transaction.atomic():
            claims = Claim.objects.filter(answer__audit_set=audit_set)
            claims.filter(adjudication__isnull=True).update(severity=None, evidence_jaccard=None)
            claims.update(review_status="")
            ReviewerTally.objects.filter(audit_set=audit_set).delete()
            for model in (SheetFact, PairFact, ClaimFact, ReleaseFact, ReleaseTally):
                model.objects.filter(audit_set=audit_set).delete()
            services.set_changed(audit_set_id=audit_set.pk)
            found = _derived(audit_set)
            raise _RolledBack
    except _RolledBack:
        pass
    return found


def _assert_derived_equal_from_scratch(audit_set: AuditSet, lead, done: list[str]) -> None:
    assert _derived(audit_set) == _from_scratch(audit_set), done
    # What the set page shows (summed from stored facts) is what the report computes now,
    # and the decision the stored counts give is the one the live labels give.
    shown = selectors.release_summary(audit_set=audit_set, viewer=lead)
    computed = selectors.release_overview(audit_set=audit_set)
    criteria, _error = selectors.set_criteria(audit_set=audit_set)
    labels = selectors.claim_labels(audit_set=audit_set)

    def figures(summary) -> tuple:
        return (summary.supported, summary.verifiable, summary.claims, summary.provisional)

    def live(system: str) -> tuple:
        if not criteria:
            return ("none", None)
        decision = evaluate(criteria, [c for c in labels if c.system == system], system=system)
        return (decision_badge(decision), decision.passed)

    assert [
        (item.system, figures(item.summary), item.badge, item.decision and item.decision.passed)
        for item in shown.systems
    ] == [(item.system, figures(item.summary), *live(item.system)) for item in computed.systems], (
        done
    )
    assert figures(shown.overall) == figures(computed.overall), done


@pytest.mark.parametrize("seed", range(4))
def test_every_derived_row_and_the_release_overview_equal_computed_after_random_operations(
    seed, handmade, reviewer_a, reviewer_b, lead, tmp_path
):
    people = [reviewer_a, reviewer_b, UserFactory(username="rev_c", role="reviewer")]
    handmade.allow_reviewer_split = True
    handmade.save(update_fields=["allow_reviewer_split"])
    services.review_open(audit_set=handmade, reviewers=people[:2], overlap=2, by=lead)
    # Every choice below is from a list in pk order, so a seed replays the same sequence
    # on every database.
    rng = random.Random(seed)
    done = []
    for _ in range(120):
        operation = rng.choice(OPERATIONS)
        try:
            operation(rng, handmade, people, lead)
        except ReviewError:
            continue  # refused (already split, adjudicated, ...): nothing changed
        done.append(operation.__name__)
        assert _mismatches() == [], done
        stored, counted = _tallies()
        assert stored == counted, done
        _assert_derived_equal_from_scratch(handmade, lead, done)
    # The sequence reached the interesting states, not only "in review".
    statuses = set(Claim.objects.values_list("review_status", flat=True))
    assert len(statuses) >= 4, statuses
    assert Adjudication.objects.exists()

    # Restored from its export into another set: derived rows as if built from scratch.
    path = tmp_path / "round.jsonl"
    path.write_text("".join(export_stream(audit_set=handmade, fmt="jsonl")), encoding="utf-8")
    call_command("import_answers", str(path), "--set", "Copy", stdout=io.StringIO())
    copy = AuditSet.objects.get(name="Copy")
    assert _mismatches() == []
    _assert_derived_equal_from_scratch(copy, lead, ["restore"])
