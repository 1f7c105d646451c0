"""Reads of the HTTP API's lists: answers, claims, sheets and gold of a set, as querysets in
primary-key order (the API pages them by key), each limited to what the user may see with
the same rules as the pages (blind_claims, visible_sheets, review_queue)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from django.db.models import Case, F, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce

from audit.claims import claim_name
from audit.models import (
    Adjudication,
    Answer,
    AuditSet,
    AuditSheet,
    Claim,
    ReviewStatus,
)
from audit.roles import leads
from audit.selectors.blindness import blind_claim_ids, blind_claims, visible_sheets
from audit.selectors.review import review_queue
from audit.selectors.sets import PageByKeysQuerySet

# A reviewer's own place on a claim, the status a reviewer's list shows instead of the
# claim's review status (which would tell them how the other sheets stand).
MY_SHEET_STATUSES = ("todo", "draft", "submitted")


def api_answers(*, audit_set: AuditSet, system: str = "") -> QuerySet[Answer]:
    answers = Answer.objects.filter(audit_set=audit_set)
    if system:
        answers = answers.filter(system=system)
    return answers.select_related("question").only(
        "pk",
        "external_id",
        "system",
        "run",
        "replaced_at",
        "replaced_by_id",
        "is_partial",
        "question__external_id",
        "created_at",
    )


def api_claims(
    *,
    user,
    audit_set: AuditSet,
    status: str = "",
    system: str = "",
    label: str = "",
    question: str = "",
    batch: int | None = None,
    updated_since: datetime | None = None,
) -> QuerySet[Claim]:
    """A lead: every claim of the set, with its review status (a claim the lead still
    reviews reads "in review", as in the claims table). A reviewer: the claims assigned to
    them, with their own sheet's status only (`my_sheet`: todo, draft or submitted).

    `updated_since`: a lead gets the claims changed since (the claim, its sheets or gold);
    on a claim the user still reviews, as for a reviewer on every claim, only their own
    sheet's changes count, so the filter tells nothing of another reviewer's sheet."""
    if leads(user, audit_set):
        return _lead_claims(
            user=user,
            audit_set=audit_set,
            status=status,
            answers=_answers_of(audit_set=audit_set, system=system, question=question, batch=batch),
            label=label,
            updated_since=updated_since,
        )
    own = AuditSheet.objects.filter(claim=OuterRef("pk"), reviewer=user).values("status")[:1]
    claims = Claim.objects.filter(
        pk__in=review_queue(reviewer=user, audit_set=audit_set).values("claim_id")
    ).annotate(shown_status=Coalesce(Subquery(own), Value("todo")))
    if status:
        claims = claims.filter(shown_status=status)
    if system or question or batch is not None:
        answers = _answers_of(audit_set=audit_set, system=system, question=question, batch=batch)
        claims = claims.filter(answer_id__in=answers.values("pk"))
    if label:
        claims = claims.filter(machine_check__label=label)
    if updated_since is not None:
        claims = claims.filter(pk__in=_own_sheets_since(user, updated_since))
    return _claim_fields(claims)


def _own_sheets_since(user, since: datetime) -> QuerySet:
    return AuditSheet.objects.filter(reviewer=user, updated_at__gte=since).values("claim_id")


def _answers_of(
    *, audit_set: AuditSet, system: str = "", question: str = "", batch: int | None = None
) -> QuerySet[Answer]:
    """The set's answers of a system, a question (its external id) and an import batch,
    each filter left out when empty."""
    answers = Answer.objects.filter(audit_set=audit_set)
    if system:
        answers = answers.filter(system=system)
    if question:
        answers = answers.filter(question__external_id=question)
    if batch is not None:
        answers = answers.filter(import_batch_id=batch)
    return answers


def _lead_claims(
    *,
    user,
    audit_set: AuditSet,
    status: str,
    answers: QuerySet[Answer],
    label: str,
    updated_since: datetime | None = None,
) -> PageByKeysQuerySet:
    """A slice reads the page's keys, walking the claims' primary key from the cursor and
    stopping at the page, then the page's rows by key (PageByKeysQuerySet).

    The set's answers are a list the walk tests each claim against, never an index to
    start from: `answer_id + 0` keeps SQLite off the answer_id index, with which it read
    every claim of the set through its answers and sorted them by key before it could stop
    (the first page of 100k claims: 135 ms at p95; joining the answers or machine checks
    did the same). A status walks claim_status_id_idx, a label claimcheck_label_claim_idx,
    both in key order: a rare one is a short walk."""
    blind = blind_claim_ids(user=user, audit_set=audit_set)
    shown = (
        Case(When(pk__in=blind, then=Value(ReviewStatus.IN_REVIEW)), default=F("review_status"))
        if blind
        else F("review_status")
    )
    keys = (
        PageByKeysQuerySet(Claim)
        .alias(in_answer=F("answer_id") + 0)
        .filter(in_answer__in=answers.values("pk"))
    )
    if status:
        keys = keys.alias(shown_status=shown).filter(shown_status=status)
    if updated_since is not None:
        changed = Q(updated_at__gte=updated_since) & ~Q(pk__in=blind)
        keys = keys.filter(changed | Q(pk__in=_own_sheets_since(user, updated_since)))
    if label:
        # Walked in claimcheck_label_claim_idx's order: a claim's key is its check's
        # claim_id, so the page needs no sort and a rare label no walk of the whole set.
        keys = keys.filter(machine_check__label=label)
        keys.walk = "machine_check__claim_id"

    def page_rows(pks: list[int]) -> QuerySet[Claim]:
        rows = Claim.objects.filter(pk__in=pks).annotate(shown_status=shown).order_by()
        return _claim_fields(rows)

    keys.page_rows = page_rows
    return keys


def _claim_fields(claims: QuerySet[Claim]) -> QuerySet[Claim]:
    return claims.annotate(
        system=F("answer__system"),
        answer_external_id=F("answer__external_id"),
        label=F("machine_check__label"),
    ).only(
        "pk",
        "answer_id",
        "parent_id",
        "parent_order",
        "order",
        "text",
        "start",
        "end",
        "location",
        "is_uncited",
        "answers_question",
    )


def api_sheets(
    *,
    user,
    audit_set: AuditSet,
    updated_since: datetime | None = None,
    system: str = "",
    question: str = "",
    batch: int | None = None,
) -> QuerySet[AuditSheet]:
    """A lead: the set's sheets less those of claims they still review but their own; a
    reviewer: their own sheets only. `updated_since` keeps the sheets written since then:
    the filter runs over those the user may see, so it tells nothing of the others."""
    sheets = AuditSheet.objects.filter(claim__answer__audit_set=audit_set)
    if system or question or batch is not None:
        answers = _answers_of(audit_set=audit_set, system=system, question=question, batch=batch)
        sheets = sheets.filter(claim__answer_id__in=answers.values("pk"))
    if updated_since is not None:
        sheets = sheets.filter(updated_at__gte=updated_since)
    if not leads(user, audit_set):
        sheets = sheets.filter(reviewer=user)
    return visible_sheets(sheets, user=user).select_related("reviewer")


def api_gold(
    *,
    user,
    audit_set: AuditSet,
    updated_since: datetime | None = None,
    system: str = "",
    question: str = "",
    batch: int | None = None,
) -> Iterator[dict]:
    """Every gold record of the set, one dict per claim, read in chunks (flat memory);
    claims the user still reviews are left out, as gold is on every page. `updated_since`
    keeps the records made or edited since then."""
    gold = Adjudication.objects.filter(claim__answer__audit_set=audit_set)
    if system or question or batch is not None:
        answers = _answers_of(audit_set=audit_set, system=system, question=question, batch=batch)
        gold = gold.filter(claim__answer_id__in=answers.values("pk"))
    if updated_since is not None:
        gold = gold.filter(updated_at__gte=updated_since)
    rows = (
        gold.exclude(claim_id__in=blind_claims(user=user))
        .order_by("pk")
        .values(
            "claim_id",
            "claim__answer_id",
            "claim__answer__external_id",
            "claim__answer__question__external_id",
            "claim__answer__system",
            "claim__parent_id",
            "claim__parent_order",
            "claim__order",
            "claim__text",
            "judgment",
            "source",
            "evidence",
            "unsupported_assertions",
            "verification_worthy",
            "answers_question",
            "reason",
            "note",
            "updated_at",
        )
    )
    for row in rows.iterator(chunk_size=2000):
        yield {
            "claim": row["claim_id"],
            "answer": row["claim__answer_id"],
            "answer_external_id": row["claim__answer__external_id"],
            "question_id": row["claim__answer__question__external_id"],
            "system": row["claim__answer__system"],
            "parent": row["claim__parent_id"],
            "order": row["claim__order"],
            "name": claim_name(
                answer_id=row["claim__answer__external_id"],
                order=row["claim__order"],
                parent_order=row["claim__parent_order"] if row["claim__parent_id"] else None,
            ),
            "claim_text": row["claim__text"],
            "judgment": row["judgment"],
            "source": row["source"],
            "evidence": row["evidence"],
            "unsupported_assertions": row["unsupported_assertions"],
            "verification_worthy": row["verification_worthy"],
            "answers_question": row["answers_question"],
            "reason": row["reason"],
            "note": row["note"],
            "updated_at": row["updated_at"].isoformat(),
        }
