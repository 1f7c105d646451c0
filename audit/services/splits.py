"""Splitting a claim into atomic claims, each judged on its own by the claim's reviewers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from audit.models import (
    Adjudication,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    ControlClaim,
    Passage,
)
from audit.roles import leads
from audit.services.checks import answer_claim_checks
from audit.services.derived import claims_changed
from audit.services.sheets import sheet_has_work
from audit.services.validation import ReviewError


@dataclass(frozen=True)
class AtomicPart:
    """One atomic fact of a split claim; citations None keeps the parent's citations."""

    text: str
    citations: tuple[int, ...] | None = None


# One refusal whatever the reason, so that it never tells a reviewer whether another
# reviewer has started on the claim.
REVIEWER_SPLIT_REFUSED = (
    "This claim can no longer be split from the review page: flag it for the lead if it "
    "should be split."
)


def claim_split(*, claim: Claim, parts: Sequence[AtomicPart], by: AbstractBaseUser) -> list[Claim]:
    """Split a claim into atomic claims, each judged on its own by the claim's reviewers.

    A lead may split any claim that is not adjudicated. A reviewer may split a claim
    assigned to them, when the set allows it, only while no sheet of the claim (theirs or
    another reviewer's) holds any saved work: a split moves the claim's reviewers to the
    atomic claims, and no one's judgment may be left behind by someone else's action.
    Sheets of the split claim are never deleted: they stay on it, in its history and
    exports, and their reviewers are pointed to the atomic claims. Atomic claims inherit
    the parent's citations unless a part names its own.
    """
    audit_set = AuditSet.objects.get(answers__claims=claim)
    if claim.parent_id is not None:
        raise ReviewError("An atomic claim cannot be split further.")
    by_lead = leads(by, audit_set)
    if not by_lead and ControlClaim.objects.filter(claim=claim).exists():
        # The refusal any claim gets once another reviewer has started: a control must
        # not answer differently from any other claim.
        raise ReviewError(REVIEWER_SPLIT_REFUSED)
    if not by_lead and not (
        audit_set.allow_reviewer_split
        and Assignment.objects.filter(claim=claim, reviewer=by).exists()
    ):
        raise PermissionDenied("You may not split this claim.")
    texts = [AtomicPart(p.text.strip(), p.citations) for p in parts if p.text.strip()]
    if len(texts) < 2:
        raise ReviewError("Give at least two atomic facts, one per line.")
    passages = list(Passage.objects.filter(answer_id=claim.answer_id).order_by("position"))
    by_position = {p.position: p for p in passages}
    for part in texts:
        unknown = [n for n in part.citations or () if n not in by_position]
        if unknown:
            raise ReviewError(f"The answer has no passage [{unknown[0]}].")

    with transaction.atomic():
        claim = Claim.objects.select_for_update(no_key=True).get(pk=claim.pk)
        if claim.atomic_claims.exists():
            raise ReviewError("This claim is already split.")
        if Adjudication.objects.filter(claim=claim).exists():
            raise ReviewError("This claim is adjudicated; it can no longer be split.")
        sheets = list(AuditSheet.objects.select_for_update().filter(claim=claim))
        if not by_lead and any(sheet_has_work(sheet) for sheet in sheets):
            raise ReviewError(REVIEWER_SPLIT_REFUSED)
        inherited = tuple(claim.citations.order_by("position").values_list("position", flat=True))
        children = []
        for order, part in enumerate(texts):
            own_citations = part.citations is not None
            citations = part.citations if own_citations else inherited
            unknown = [] if own_citations else list(claim.cited_unknown)
            children.append(
                Claim(
                    answer_id=claim.answer_id,
                    parent=claim,
                    parent_order=claim.order,
                    order=order,
                    text=part.text,
                    start=claim.start,
                    end=claim.end,
                    location=Claim.Location.ATOMIC,
                    cited_unknown=unknown,
                    is_uncited=not citations and not unknown,
                )
            )
        Claim.objects.bulk_create(children)
        through = Claim.citations.through
        citation_rows = []
        check_rows = []
        for child, part in zip(children, texts, strict=True):
            positions = part.citations if part.citations is not None else inherited
            positions = tuple(dict.fromkeys(positions))
            citation_rows += [
                through(claim_id=child.pk, passage_id=by_position[n].pk) for n in positions
            ]
            check_rows.append((child, positions, bool(child.cited_unknown)))
        through.objects.bulk_create(citation_rows)
        ClaimCheck.objects.bulk_create(answer_claim_checks(passages, check_rows))

        reviewer_ids = list(
            Assignment.objects.filter(claim=claim).values_list("reviewer_id", flat=True)
        )
        Assignment.objects.bulk_create(
            [Assignment(claim=c, reviewer_id=r) for c in children for r in reviewer_ids]
        )
        # The parent is no longer judged: its verdict is derived from its atomic claims.
        Assignment.objects.filter(claim=claim).delete()
        claim.split_by = by
        claim.split_at = timezone.now()
        claim.save(update_fields=["split_by", "split_at"])
        # A split claim is judged through its atomic claims: it leaves the queue, and its
        # sheets, which lost their assignments, no longer count towards agreement.
        claims_changed(
            audit_set_id=audit_set.pk,
            claim_ids=[claim.pk, *(child.pk for child in children)],
            reviewer_ids=reviewer_ids,
        )
    return children
