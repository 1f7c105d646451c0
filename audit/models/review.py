"""Review: assignments, reviewers' audit sheets and tallies, guideline flags and discussions."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords

from audit import judgments
from audit.models.choices import Judgment, text_choices
from audit.models.claims import Claim
from audit.models.sets import AuditSet, Passage


class Assignment(models.Model):
    """A claim a reviewer has to judge; the reviewer's sheet for it may not exist yet."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments"
    )
    assigned_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["claim", "reviewer"], name="one_assignment_per_reviewer"
            )
        ]
        indexes = [
            # The reviewer's queue and home page: their assignments, claim by claim.
            models.Index(fields=["reviewer", "claim"], name="assignment_reviewer_claim_idx"),
        ]

    def __str__(self) -> str:
        return f"claim {self.claim_id} → {self.reviewer}"


class ReviewerTally(models.Model):
    """How many claims of a set a reviewer is assigned and has submitted, kept by the
    services in the same transaction as the change, so the review page shows progress
    without counting the reviewer's whole queue (audit.services.tallies)."""

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="tallies")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_tallies"
    )
    assigned = models.PositiveIntegerField(default=0)
    # Submitted sheets of claims the reviewer is still assigned to.
    submitted = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["audit_set", "reviewer"], name="one_tally_per_reviewer_per_set"
            )
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} in {self.audit_set}: {self.submitted} of {self.assigned}"


class GuidelineFlag(models.Model):
    """A reviewer's note that the guidelines do not settle a case; read by the set's leads."""

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="flags")
    claim = models.ForeignKey(
        Claim, null=True, blank=True, on_delete=models.SET_NULL, related_name="flags"
    )
    raised_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    comment = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    # Settled by a lead: the guidelines now say it, or it needs no rule.
    status = models.CharField(
        max_length=10,
        choices=[("open", "Open"), ("resolved", "Resolved"), ("dismissed", "Dismissed")],
        default="open",
        db_default="open",
    )
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.raised_by} on claim {self.claim_id}"


class JudgmentFields(models.Model):
    """The fields of a judgment (audit.judgments.FIELDS) that a reviewer's sheet and a lead's
    gold record share; each adds its own around them."""

    judgment = models.CharField(max_length=30, choices=Judgment, blank=True)
    wrong_citation_passage = models.ForeignKey(
        Passage, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # [{"passage": position, "start": int, "end": int, "text": str}], in key order
    evidence = models.JSONField(default=list, blank=True)
    # [{"text": str, "start": int | None, "end": int | None, "note": str}]: spans of the
    # claim as judged, then free text (audit.judgments.checked_assertions)
    unsupported_assertions = models.JSONField(default=list, blank=True)
    verification_worthy = models.BooleanField(default=True)
    answers_question = models.BooleanField(default=False, db_default=False)

    class Meta:
        abstract = True


class AuditSheet(JudgmentFields):
    """One reviewer's judgment of one claim."""

    Status = text_choices("Status", judgments.SHEET_STATUSES)

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="sheets")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="sheets"
    )
    # Snapshot of the claim as the reviewer saw it, so a re-import cannot change its meaning.
    answer_statement = models.TextField()
    cited_urls = models.JSONField(default=list, blank=True)
    notes = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=Status, default=Status.DRAFT)
    active_seconds = models.PositiveIntegerField(default=0)
    # Bumped on every save; a save that names an older version is refused.
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # Reopened while every other sheet of the claim was in: the reviewer may have learnt
    # something since, so the claim goes to a lead instead of becoming unanimous gold.
    reopened_after_all_in = models.BooleanField(default=False)
    # Whether the review page withheld suggestions from this sheet (the set's withheld
    # share), and which source it showed otherwise ("matcher", "source:<id>", ...):
    # recorded as the sheet is saved, so acceptance and anchoring are measured against
    # what the reviewer saw.
    suggestions_withheld = models.BooleanField(default=False, db_default=False)
    suggestion_source_shown = models.CharField(max_length=40, blank=True, default="")
    # The browser tab behind the latest draft save, its per-tab save number, and the version
    # that save produced: a tab's own earlier save is never a conflict (a reload can read
    # the sheet before the save sent on leaving the page arrives), and a late copy of an
    # older save from that tab is ignored instead of overwriting a newer one.
    client_tab = models.CharField(max_length=40, blank=True, default="")
    client_seq = models.PositiveBigIntegerField(default=0)
    client_version = models.PositiveIntegerField(default=0)
    # The set's guidelines when the sheet was submitted (audit.services.guidelines).
    guideline_version = models.ForeignKey(
        "GuidelineVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    history = HistoricalRecords()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["claim", "reviewer"], name="one_sheet_per_reviewer")
        ]
        indexes = [
            # A reviewer's queue and progress: their sheets by status.
            models.Index(fields=["reviewer", "status"], name="sheet_reviewer_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} on claim {self.claim_id}: {self.judgment or '—'}"


class ClaimComment(models.Model):
    """One message of a claim's discussion between a lead and the claim's reviewers
    (Markdown, rendered sanitised). A reviewer reads the thread only once their own sheet
    is submitted, so no comment carries one reviewer's judgment to another."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    body = models.TextField()
    # The guideline flag this thread was opened from, if any.
    from_flag = models.ForeignKey(
        GuidelineFlag, null=True, blank=True, on_delete=models.SET_NULL, related_name="comments"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.author} on claim {self.claim_id}"
