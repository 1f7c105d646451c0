"""Sets and imports: audit sets, imported files, and the questions, answers and passages."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.urls import reverse


class AuditSet(models.Model):
    # Unique within its workspace only: a set's name must not tell another team it exists.
    name = models.CharField(max_length=200)
    workspace = models.ForeignKey("Workspace", on_delete=models.PROTECT, related_name="sets")
    description = models.TextField(blank=True)
    guidelines = models.TextField(blank=True, help_text="Markdown, shown to reviewers.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="review_sets"
    )
    # How many reviewers judge each claim independently.
    overlap = models.PositiveSmallIntegerField(default=2)
    allow_reviewer_split = models.BooleanField(
        default=False, help_text="Reviewers may split a claim into atomic facts before judging."
    )
    review_opened_at = models.DateTimeField(null=True, blank=True)
    auto_gold = models.BooleanField(
        "Unanimous sheets become gold",
        default=True,
        help_text=(
            "Same judgment, same wrong-citation passage and the same evidence sentences: "
            "gold without a lead, marked “unanimous”. Off: a lead confirms every claim."
        ),
    )
    evidence_jaccard_threshold = models.FloatField(
        "Evidence agreement threshold",
        default=0.5,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text=(
            "Reviewers who agree on the judgment but whose evidence sets overlap less than "
            "this (Jaccard, 0–1) disagree on evidence."
        ),
    )
    anonymous_adjudication = models.BooleanField(
        default=False, help_text="Show reviewers as “Reviewer A” and “Reviewer B” to the lead."
    )
    # Acceptance criteria in audit.criteria's JSON form; see CriteriaChange for their history.
    criteria = models.JSONField(default=list, blank=True)
    # When the first sheet was submitted, recorded the first time criteria change after it.
    criteria_locked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    is_training = models.BooleanField(
        "Training set",
        default=False,
        help_text=(
            "Reviewers see gold and the lead’s reason right after submitting each claim. "
            "For claims a lead has already adjudicated."
        ),
    )
    # One claim in `control_rate` of a reviewer's queue is a control; 0: no controls.
    control_rate = models.PositiveSmallIntegerField(default=0)
    # A reviewer whose accuracy against gold falls below this is shown to the leads.
    calibration_threshold = models.FloatField(
        default=0.7, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    # Which source pre-highlights evidence and suggests unsupported words on the review
    # page: "matcher" (the built-in one), "judge-run:<id>" or "source:<id>"
    # (audit.suggestions.SourceKey).
    suggestion_source = models.CharField(max_length=40, default="matcher")
    show_suggested_judgment = models.BooleanField(
        "Show the suggested judgment",
        default=False,
        help_text="Off: reviewers see suggested evidence and words, never a suggested verdict.",
    )
    # Suggestions are withheld from the claims whose draw (audit.suggestions.withheld) falls
    # under this share, so the report can compare sheets with and without them. Chosen,
    # with its seed, before review starts and then fixed.
    withhold_share = models.FloatField(
        default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(0.9)]
    )
    withhold_seed = models.CharField(max_length=40, blank=True)
    withhold_chosen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "name"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="set_name_per_workspace")
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("audit:set-detail", args=[self.pk])


class ImportBatch(models.Model):
    """One imported file: lets a lead compare label distributions per import."""

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="imports")
    filename = models.CharField(max_length=300)
    format = models.CharField(max_length=20)
    sha256 = models.CharField(max_length=64)
    answers_created = models.PositiveIntegerField(default=0)
    answers_skipped = models.PositiveIntegerField(default=0)
    claims_created = models.PositiveIntegerField(default=0)
    # A push that named a run: the system and run it replaced, and what changed
    # ({"added": [ids], "changed": [...], "unchanged": [...], "retired": [...]}).
    system = models.CharField(max_length=200, blank=True, default="", db_default="")
    run = models.CharField(max_length=100, blank=True, default="", db_default="")
    changes = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "import batches"

    def __str__(self) -> str:
        return f"{self.filename} ({self.format})"


class Question(models.Model):
    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="questions")
    external_id = models.CharField(max_length=200)
    text = models.TextField()

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["audit_set", "external_id"], name="unique_question_external_id_per_set"
            )
        ]

    def __str__(self) -> str:
        return self.external_id


class Answer(models.Model):
    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="answers")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="answers")
    import_batch = models.ForeignKey(
        ImportBatch, null=True, blank=True, on_delete=models.SET_NULL, related_name="answers"
    )
    external_id = models.CharField(max_length=200, blank=True)
    # The key every count and decision groups by: the system's name, or "name@run" for an
    # answer pushed as part of a named run (audit.runs.run_key).
    system = models.CharField(max_length=200, help_text="The system or run that produced it.")
    # The run label of a named run; "" for the default run (files pushed without one).
    # db_default: the import's bulk insert names only the columns it sets.
    run = models.CharField(max_length=100, blank=True, default="", db_default="")
    # Set when a later push of the same run replaced (replaced_by) or dropped (null) it: its
    # claims and reviews stay readable, but it no longer counts anywhere.
    replaced_at = models.DateTimeField(null=True, blank=True)
    replaced_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaces"
    )
    text = models.TextField()
    content_hash = models.CharField(max_length=64)
    # A citation pointed past the supplied passages: the answer is only partially auditable.
    is_partial = models.BooleanField(default=False)
    # Every cited claim fails a machine check (audit.answer_flags.no_citation_verifies):
    # derived from the claims and their checks, written by services.claims_changed only.
    no_citation_verifies = models.BooleanField(default=False)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]
        constraints = [
            # A replaced answer keeps its hash: pushing its text again brings it back as a
            # new current answer.
            models.UniqueConstraint(
                fields=["audit_set", "content_hash"],
                condition=models.Q(replaced_at__isnull=True),
                name="unique_answer_content_per_set",
            )
        ]
        indexes = [
            # The set page lists answers by system.
            models.Index(fields=["audit_set", "system"], name="answer_set_system_idx"),
            # The claims table joins a set's answers in id order to claim_queue_idx: an
            # index-only merge join instead of reading every answer row.
            models.Index(fields=["audit_set", "id"], name="answer_set_id_idx"),
        ]

    def __str__(self) -> str:
        return self.external_id or f"answer {self.pk}"

    def get_absolute_url(self) -> str:
        return reverse("audit:answer-detail", args=[self.pk])


class Passage(models.Model):
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="passages")
    position = models.PositiveIntegerField(help_text="1-based: the number a citation refers to.")
    title = models.TextField(blank=True)
    url = models.TextField(blank=True)
    text = models.TextField(blank=True)
    is_cited = models.BooleanField(default=False)

    class Meta:
        ordering = ["answer", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["answer", "position"], name="unique_passage_position_per_answer"
            )
        ]

    def __str__(self) -> str:
        return f"[{self.position}] {self.title or self.url}"[:80]
