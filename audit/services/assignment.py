"""Handing out a set's claims for blind review: opening a set (and topping it up), and
passing a reviewer's unsubmitted work to another reviewer."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from audit.models import Assignment, AuditSet, AuditSheet, Claim
from audit.roles import leads
from audit.selectors import QUEUE_ORDER
from audit.services.calibration import controls_assign
from audit.services.derived import claims_changed
from audit.services.locks import audit_set_lock, claims_lock
from audit.services.planner import planner_statistics_refresh
from audit.services.validation import ReviewError

# More reviewers per claim than this is a typo, not a design: each claim costs that many reads.
OVERLAP_MAX = 5


@dataclass(frozen=True)
class OpenSummary:
    claims: int
    created: int
    per_reviewer: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ReplaceSummary:
    moved: int
    kept: int
    dropped: int


def review_open(
    *,
    audit_set: AuditSet,
    reviewers: Sequence[AbstractBaseUser],
    overlap: int,
    by: AbstractBaseUser,
    allow_reviewer_split: bool | None = None,
) -> OpenSummary:
    """Open a set for blind review: give every claim to `overlap` distinct reviewers.

    The claims to judge are the top-level claims that were not split plus every atomic
    claim. Work is handed out answer by answer, in answer order, to the least-loaded
    reviewers (ties go to the earlier reviewer in `reviewers`), so a reviewer reads all
    claims of an answer in order and the load stays even. Running it again tops up claims
    that have fewer than `overlap` reviewers; it never assigns a claim twice to one person.
    """
    if not leads(by, audit_set):
        raise PermissionDenied("Only a lead of its workspace can open a set for review.")
    people = list(dict.fromkeys(reviewers))
    if overlap < 1:
        raise ReviewError("Each claim needs at least one reviewer.")
    if overlap > OVERLAP_MAX:
        raise ReviewError(f"Each claim may have at most {OVERLAP_MAX} reviewers.")
    if len(people) < overlap:
        raise ReviewError(
            f"An overlap of {overlap} needs at least {overlap} reviewers; {len(people)} chosen."
        )
    with transaction.atomic():
        audit_set = audit_set_lock(audit_set_id=audit_set.pk)
        audit_set.overlap = overlap
        if audit_set.review_opened_at is None:
            audit_set.review_opened_at = timezone.now()
        if allow_reviewer_split is not None:
            audit_set.allow_reviewer_split = allow_reviewer_split
        audit_set.save(update_fields=["overlap", "review_opened_at", "allow_reviewer_split"])
        audit_set.reviewers.add(*people)

        claims = list(
            _claims_to_judge(audit_set).order_by(*QUEUE_ORDER).values_list("pk", "answer_id")
        )
        have: dict[int, set[int]] = defaultdict(set)
        for claim_id, reviewer_id in Assignment.objects.filter(
            claim__answer__audit_set=audit_set
        ).values_list("claim_id", "reviewer_id"):
            have[claim_id].add(reviewer_id)
        load = {p.pk: 0 for p in people}
        for reviewer_ids in have.values():
            for reviewer_id in reviewer_ids:
                if reviewer_id in load:
                    load[reviewer_id] += 1
        rank = {p.pk: i for i, p in enumerate(people)}

        new: list[Assignment] = []
        start = 0
        while start < len(claims):
            answer_id = claims[start][1]
            end = start
            while end < len(claims) and claims[end][1] == answer_id:
                end += 1
            # One ranking per answer keeps an answer's claims with the same reviewers.
            ranked = sorted(load, key=lambda pk: (load[pk], rank[pk]))
            for claim_id, _ in claims[start:end]:
                taken = have[claim_id]
                missing = overlap - len(taken)
                for reviewer_id in [pk for pk in ranked if pk not in taken][: max(missing, 0)]:
                    new.append(Assignment(claim_id=claim_id, reviewer_id=reviewer_id))
                    taken.add(reviewer_id)
                    load[reviewer_id] += 1
            start = end
        Assignment.objects.bulk_create(new, batch_size=1000)
        # A claim that gained a reviewer is no longer complete: out of the queue until then;
        # a sheet submitted before its reviewer was (re)assigned counts from now on.
        claims_changed(
            audit_set_id=audit_set.pk,
            claim_ids={a.claim_id for a in new},
            reviewer_ids=[p.pk for p in people],
        )
        planner_statistics_refresh(rows=len(new))
        # Reviewers who joined, or got more claims, get their share of the set's controls.
        controls_assign(audit_set=audit_set)
    per_reviewer: dict[int, int] = defaultdict(int)
    for assignment in new:
        per_reviewer[assignment.reviewer_id] += 1
    return OpenSummary(claims=len(claims), created=len(new), per_reviewer=dict(per_reviewer))


def _claims_to_judge(audit_set: AuditSet):
    # A replaced or retired answer's claims are kept with their reviews but no longer judged.
    return Claim.objects.filter(
        answer__audit_set=audit_set, answer__replaced_at__isnull=True
    ).exclude(Exists(Claim.objects.filter(parent=OuterRef("pk"))))


def reviewer_replace(
    *, audit_set: AuditSet, leaving: AbstractBaseUser, joining: AbstractBaseUser
) -> ReplaceSummary:
    """Hand the unsubmitted work of a reviewer who left to another reviewer.

    Claims the leaving reviewer submitted stay theirs (the sheet counts). Claims the joining
    reviewer already has lose the leaving reviewer and are left one short: open the set for
    review again to fill them from the other reviewers.
    """
    if leaving.pk == joining.pk:
        raise ReviewError("Choose two different reviewers.")
    with transaction.atomic():
        audit_set = audit_set_lock(audit_set_id=audit_set.pk)
        claims_lock(
            claim_ids=Assignment.objects.filter(
                reviewer=leaving, claim__answer__audit_set=audit_set
            ).values_list("claim_id", flat=True)
        )
        submitted = AuditSheet.objects.filter(
            claim=OuterRef("claim"), reviewer=leaving, status=AuditSheet.Status.SUBMITTED
        )
        joined = Assignment.objects.filter(claim=OuterRef("claim"), reviewer=joining)
        mine = Assignment.objects.filter(
            reviewer=leaving, claim__answer__audit_set=audit_set
        ).annotate(is_submitted=Exists(submitted), is_joined=Exists(joined))
        kept = mine.filter(is_submitted=True).count()
        dropped_ids = list(
            mine.filter(is_submitted=False, is_joined=True).values_list("pk", flat=True)
        )
        moved_ids = list(
            mine.filter(is_submitted=False, is_joined=False).values_list("pk", flat=True)
        )
        touched = set(
            Assignment.objects.filter(pk__in=dropped_ids + moved_ids).values_list(
                "claim_id", flat=True
            )
        )
        Assignment.objects.filter(pk__in=dropped_ids).delete()
        Assignment.objects.filter(pk__in=moved_ids).update(
            reviewer=joining, assigned_at=timezone.now()
        )
        audit_set.reviewers.add(joining)
        audit_set.reviewers.remove(leaving)
        # Dropping a reviewer can complete a claim whose other sheets are all in.
        claims_changed(
            audit_set_id=audit_set.pk, claim_ids=touched, reviewer_ids=[leaving.pk, joining.pk]
        )
        controls_assign(audit_set=audit_set)
    return ReplaceSummary(moved=len(moved_ids), kept=kept, dropped=len(dropped_ids))
