"""Per reviewer and set: claims assigned and submitted (ReviewerTally), so the review page
shows progress in one row read. Counted again, for the reviewers concerned, by
services.claims_changed after every write."""

from __future__ import annotations

from collections.abc import Iterable

from audit.models import Assignment, AuditSheet, ReviewerTally


def reviewer_tallies_refresh(*, audit_set_id: int, reviewer_ids: Iterable[int] | None = None):
    """Count the given reviewers' (default: every assignee's) claims in the set again.

    Call inside the transaction that changed their assignments or sheets.
    """
    assignments = Assignment.objects.filter(claim__answer__audit_set_id=audit_set_id)
    if reviewer_ids is None:
        reviewer_ids = set(assignments.values_list("reviewer_id", flat=True).distinct())
        reviewer_ids |= set(
            ReviewerTally.objects.filter(audit_set_id=audit_set_id).values_list(
                "reviewer_id", flat=True
            )
        )
    for reviewer_id in sorted(set(reviewer_ids)):
        mine = assignments.filter(reviewer_id=reviewer_id)
        submitted = AuditSheet.objects.filter(
            reviewer_id=reviewer_id,
            status=AuditSheet.Status.SUBMITTED,
            claim__in=mine.values("claim_id"),
        ).count()
        ReviewerTally.objects.update_or_create(
            audit_set_id=audit_set_id,
            reviewer_id=reviewer_id,
            defaults={"assigned": mine.count(), "submitted": submitted},
        )
