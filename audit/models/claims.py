"""Claims and checks: an answer's claims, the matcher's checks, and outside raters' labels."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Coalesce, Now
from django.utils import timezone

from audit import judgments
from audit.models.choices import Judgment, Severity, text_choices
from audit.models.sets import Answer, ImportBatch, Passage


class ReviewStatus(models.TextChoices):
    """A claim's place in the review, as the lead's claims table shows it."""

    UNASSIGNED = "unassigned", "Unassigned"
    IN_REVIEW = "in_review", "In review"
    PARTLY = "partly_submitted", "Partly submitted"
    SUBMITTED = "submitted", "All submitted"
    DISAGREEMENT = "disagreement", "Disagreement"
    ADJUDICATED = "adjudicated", "Adjudicated"
    SPLIT = "split", "Split"


# The order a reviewer and a lead meet claims in: answer by answer, each answer's claims in
# reading order, an atomic claim right where its parent was. Stored columns only (the
# database computes queue_top and queue_sub), so claim_queue_idx holds the whole order.
QUEUE_ORDER = ("answer_id", "queue_top", "queue_sub", "id")


class Claim(models.Model):
    class Location(models.TextChoices):
        SPLIT = "split", "Split from the answer"
        EXACT = "exact", "Given, found verbatim"
        FUZZY = "fuzzy", "Given, found approximately"
        NOT_LOCATED = "not_located", "Given, not found in the answer"
        ATOMIC = "atomic", "Atomic fact of a claim"

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="claims")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="atomic_claims"
    )
    order = models.PositiveIntegerField()
    text = models.TextField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    location = models.CharField(max_length=20, choices=Location, default=Location.SPLIT)
    citations = models.ManyToManyField(Passage, blank=True, related_name="citing_claims")
    # Marker numbers that point past the supplied passages; kept, never dropped.
    cited_unknown = models.JSONField(default=list, blank=True)
    is_uncited = models.BooleanField(default=False)
    # A lead marked it as stating what the question asks (in bulk, from the claims list); a
    # reviewer or lead may mark it on a sheet or gold record too (the judgment's flag).
    # db_default: the import's bulk insert names only the columns it sets.
    answers_question = models.BooleanField(default=False, db_default=False)
    # Set on a parent when it is split into atomic claims: the split stays on record.
    split_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    split_at = models.DateTimeField(null=True, blank=True)
    # Set when every assigned sheet is submitted and no unanimous gold was made: why the
    # claim waits for a lead. Null while sheets are missing.
    severity = models.PositiveSmallIntegerField(choices=Severity, null=True, blank=True)
    evidence_jaccard = models.FloatField(null=True, blank=True)
    # An atomic claim's copy of its parent's order (orders never change), so the queue
    # order needs no join to the parent.
    parent_order = models.PositiveIntegerField(null=True, blank=True)
    # When the claim, its sheets or its gold last changed: stamped by the one writer of
    # derived state (services/derived.py: claims_changed), read by the API's
    # `updated_since`. db_default: existing rows and inserts that name only their columns.
    updated_at = models.DateTimeField(default=timezone.now, db_default=Now())
    # The queue position computed by the database on every write: the top-level claim's
    # order, then 0 for the claim itself or 1 + order for an atomic claim split from it.
    queue_top = models.GeneratedField(
        expression=Coalesce("parent_order", "order"),
        output_field=models.PositiveIntegerField(),
        db_persist=True,
    )
    queue_sub = models.GeneratedField(
        expression=models.Case(
            models.When(parent_order__isnull=True, then=models.Value(0)),
            default=models.F("order") + 1,
        ),
        output_field=models.PositiveIntegerField(),
        db_persist=True,
    )
    # Derived from assignments, sheets, gold and splits, and stored so the claims table can
    # filter and page by it through an index. Every service that changes one of those
    # refreshes it in the same transaction (audit.services.statuses); a test compares it
    # with the computed status after random sequences of operations.
    review_status = models.CharField(
        max_length=20, choices=ReviewStatus, default=ReviewStatus.UNASSIGNED
    )

    class Meta:
        ordering = ["answer", "order"]
        constraints = [
            models.UniqueConstraint(
                fields=["answer", "order"],
                condition=models.Q(parent__isnull=True),
                name="unique_claim_order_per_answer",
            ),
            models.CheckConstraint(
                condition=models.Q(end__gte=models.F("start")), name="claim_span"
            ),
        ]
        indexes = [
            # The adjudication queue: a set's claims that wait for a lead, most severe first.
            models.Index(
                fields=["severity", "answer"],
                condition=models.Q(severity__isnull=False),
                name="claim_severity_idx",
            ),
            # The lead's claims table in queue order: page N is an index-only walk, with
            # no sort of the set (id included for that).
            models.Index(fields=QUEUE_ORDER, name="claim_queue_idx"),
            # The claims table filtered by status (a rare one included), in queue order.
            models.Index(fields=["review_status", *QUEUE_ORDER], name="claim_status_queue_idx"),
            # The API's claims list filtered by status, in key order: a rare status is a
            # short walk of its own claims, not of the whole set.
            models.Index(fields=["review_status", "id"], name="claim_status_id_idx"),
        ]

    def __str__(self) -> str:
        return self.text[:80]

    def get_absolute_url(self) -> str:
        return f"{self.answer.get_absolute_url()}#claim-{self.pk}"


class ClaimCheck(models.Model):
    """What the automatic matcher found for a claim: string checks, never a model's opinion."""

    class Label(models.TextChoices):
        VERIFIED = "verified", "Verified"
        LIKELY = "likely", "Likely"
        UNKNOWN = "unknown", "Unknown"

    claim = models.OneToOneField(Claim, on_delete=models.CASCADE, related_name="machine_check")
    matcher_version = models.CharField(max_length=40)
    label = models.CharField(max_length=10, choices=Label)
    best_score = models.FloatField(default=0.0)
    # [{"passage": position, "start": int, "end": int, "score": float}], best first.
    highlights = models.JSONField(default=list, blank=True)
    # [{"token": "7.5", "grounded": bool}] in the order they appear in the claim.
    numbers = models.JSONField(default=list, blank=True)
    # {"passage": position, "start": int, "end": int, "score": float} or null.
    wrong_citation = models.JSONField(null=True, blank=True)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            # The label-distribution page counts labels per set; the API's claims list
            # filtered by label walks a label's claims in key order (claim_id included for
            # that, so a rare label is a short walk and no page sorts the set).
            models.Index(fields=["label", "claim"], name="claimcheck_label_claim_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.label} ({self.matcher_version})"

    @property
    def ungrounded(self) -> list[str]:
        return [n["token"] for n in self.numbers if not n["grounded"]]


class Rater(models.Model):
    """A named source of labels from outside the review UI: an earlier round's reviewer,
    ExpertQA's experts, or an automatic judge."""

    Kind = text_choices("Kind", judgments.RATER_KINDS)

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=10, choices=Kind, default=Kind.HUMAN)

    def __str__(self) -> str:
        return self.name


class RaterLabel(models.Model):
    rater = models.ForeignKey(Rater, on_delete=models.CASCADE, related_name="labels")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="rater_labels")
    judgment = models.CharField(max_length=30, choices=Judgment, blank=True)
    raw_label = models.CharField(max_length=100, blank=True)
    verification_worthy = models.BooleanField(null=True)
    note = models.TextField(blank=True)
    # An automatic judge's quoted evidence (strings, as the judge gave them) and its reasons.
    evidence = models.JSONField(default=list, blank=True)
    rationale = models.TextField(blank=True)
    import_batch = models.ForeignKey(
        ImportBatch, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["rater", "claim"], name="unique_label_per_rater_claim")
        ]

    def __str__(self) -> str:
        return f"{self.rater}: {self.judgment or self.raw_label}"
