"""Citeaudit's data: audit sets of answers with their passages and claims, the reviewers'
audit sheets, the leads' adjudications, and the matcher's stored checks."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.functions import Coalesce
from django.urls import reverse
from simple_history.models import HistoricalRecords

from audit import judgments


def _text_choices(name: str, vocabulary: tuple[tuple[str, str], ...]) -> type[models.TextChoices]:
    """Model choices from one of audit.judgments' (code, label) vocabularies, so a code or a
    label changes in one place; members are named after their codes ("" is NONE)."""
    members = [((code or "none").upper(), (code, label)) for code, label in vocabulary]
    return models.TextChoices(name, members)


Judgment = _text_choices("Judgment", judgments.JUDGMENTS)
# Why a claim whose sheets are all in waits for a lead; lower comes first in the queue.
Severity = models.IntegerChoices(
    "Severity", [(name, (value, label)) for name, value, label in judgments.SEVERITIES]
)


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
    system = models.CharField(max_length=200, help_text="The system or run that produced it.")
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
            models.UniqueConstraint(
                fields=["audit_set", "content_hash"], name="unique_answer_content_per_set"
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

    Kind = _text_choices("Kind", judgments.RATER_KINDS)

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


class ReleaseFlagFields(models.Model):
    """A system and the flags of metrics.ReleaseFlags (RELEASE_FLAGS), as a release fact and
    a release tally both store them."""

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="+")
    # The answer's system, copied so the tallies need no join.
    system = models.CharField(max_length=200)
    worthy = models.BooleanField()
    supported = models.BooleanField()
    judged_supported = models.BooleanField()
    provisional = models.BooleanField()
    contradicted = models.BooleanField()
    wrong_citation = models.BooleanField()
    uncited_worthy = models.BooleanField()
    numbers_failing = models.BooleanField()
    inaccessible = models.BooleanField(default=False)
    fails_the_question = models.BooleanField(default=False)
    unsupported_number = models.BooleanField(default=False)
    # The answer's topics, casefolded and sorted; criteria read them of contradicted claims.
    topics = models.JSONField(default=list)

    class Meta:
        abstract = True


class ReleaseFact(ReleaseFlagFields):
    """A top-level claim as the set page's release summary counts it: the flags of its label
    (metrics.ReleaseFlags), gold where adjudicated, else provisional from its sheets, derived
    from its atomic claims once split. Written only by audit.services.release, from
    services.claims_changed, in the transaction of the change, which moves the set's
    ReleaseTally rows by the difference."""

    # Outlives its claim: a deleted claim's fact is what its set's tallies must subtract, and
    # services.claims_changed, told of the deletion, removes it after doing so.
    claim = models.OneToOneField(
        Claim,
        primary_key=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="release_fact",
    )

    def __str__(self) -> str:
        return f"claim {self.claim_id} in {self.system}"


class ReleaseTally(ReleaseFlagFields):
    """How many top-level claims of a set and system have one combination of release flags
    (and, for contradicted claims, one set of answer topics). The set page's release summary
    reads these few rows whatever the size of the set. Moved only by audit.services.release,
    by the difference between a change's old and new release facts."""

    # The whole combination hashed: one short unique key, however long the system or topics.
    key = models.CharField(max_length=64)
    claims = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["audit_set", "key"], name="one_release_tally_per_key")
        ]

    def __str__(self) -> str:
        return f"{self.system}: {self.claims}"


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

    Status = _text_choices("Status", judgments.SHEET_STATUSES)

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


class Adjudication(JudgmentFields):
    """The gold record for a claim, kept apart from both sheets."""

    Source = _text_choices("Source", judgments.GOLD_SOURCES)
    Reason = _text_choices("Reason", judgments.REASONS)

    claim = models.OneToOneField(Claim, on_delete=models.CASCADE, related_name="adjudication")
    # Gold always has a judgment; a sheet may not have one yet.
    judgment = models.CharField(max_length=30, choices=Judgment)
    source = models.CharField(max_length=10, choices=Source)
    from_sheet = models.ForeignKey(
        AuditSheet, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sheets = models.ManyToManyField(AuditSheet, blank=True, related_name="adjudications")
    reason = models.CharField(max_length=30, choices=Reason, blank=True)
    note = models.TextField(blank=True)
    # The lead read the sources and found the claim's numbers there in another form ("4
    # weeks" / "four weeks"): the release criterion "every number grounded" then passes
    # the claim. The reason is required and shown on the report.
    numbers_overridden = models.BooleanField(default=False)
    numbers_override_reason = models.TextField(blank=True)
    lead = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    def __str__(self) -> str:
        return f"claim {self.claim_id}: {self.judgment}"


class CriteriaChange(models.Model):
    """One edit of a set's acceptance criteria, which makes criteria version `version` (1, 2,
    … per set); `after_lock` marks an edit made once review had started, which needs a
    `reason` and which every decision (report, API, gate) names."""

    audit_set = models.ForeignKey(
        AuditSet, on_delete=models.CASCADE, related_name="criteria_changes"
    )
    version = models.PositiveIntegerField()
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)
    before = models.JSONField(default=list, blank=True)
    after = models.JSONField(default=list, blank=True)
    after_lock = models.BooleanField(default=False)
    # Why the criteria changed; required once review has started (after_lock).
    reason = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["audit_set", "version"], name="one_criteria_change_per_version"
            )
        ]

    def __str__(self) -> str:
        return (
            f"{self.audit_set} criteria version {self.version} by {self.by} "
            f"at {self.at:%Y-%m-%d %H:%M}"
        )


class SheetFact(models.Model):
    """A sheet the agreement dashboard counts: submitted, with a judgment, by a reviewer still
    assigned to the claim. Written only by audit.services.facts, in the transaction that
    changed the sheet, its assignment or the claim's check; the dashboard sums these rows
    instead of reading every sheet's evidence."""

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="+")
    # The answer's system, copied so the dashboard's filter joins nothing.
    system = models.CharField(max_length=200)
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    judgment = models.CharField(max_length=30)
    # Against the matcher's highlights shown on the review page; all 0 without a check.
    has_check = models.BooleanField(default=False)
    highlighted = models.PositiveIntegerField(default=0)
    kept = models.PositiveIntegerField(default=0)
    chosen = models.PositiveIntegerField(default=0)
    novel = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["claim", "reviewer"], name="one_sheet_fact_per_sheet")
        ]
        indexes = [
            # The dashboard: counted sheets and matcher sums per reviewer, for a set or one
            # system. Every column it reads is in the key (SQLite has no INCLUDE), so the
            # GROUP BY never visits the table: half the time at 100k sheets.
            models.Index(
                fields=[
                    "audit_set",
                    "system",
                    "reviewer",
                    "has_check",
                    "highlighted",
                    "kept",
                    "chosen",
                    "novel",
                ],
                name="sheetfact_set_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"claim {self.claim_id}, reviewer {self.reviewer_id}: {self.judgment}"


class PairFact(models.Model):
    """Two counted sheets of one claim: a cell of their reviewers' confusion table."""

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="+")
    system = models.CharField(max_length=200)
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="+")
    # A is the earlier sheet, as the adjudication page letters them.
    reviewer_a = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    reviewer_b = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    judgment_a = models.CharField(max_length=30)
    judgment_b = models.CharField(max_length=30)
    evidence_jaccard = models.FloatField()
    # Token F1 of the two sheets' evidence spans and of their unsupported spans.
    evidence_f1 = models.FloatField(default=1.0)
    unsupported_f1 = models.FloatField(default=1.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["claim", "reviewer_a", "reviewer_b"], name="one_pair_fact_per_pair"
            )
        ]
        indexes = [
            # The dashboard: κ per reviewer pair, and the confusion of one chosen pair; covering.
            models.Index(
                fields=[
                    "audit_set",
                    "system",
                    "reviewer_a",
                    "reviewer_b",
                    "judgment_a",
                    "judgment_b",
                    "evidence_jaccard",
                    "evidence_f1",
                    "unsupported_f1",
                ],
                name="pairfact_set_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"claim {self.claim_id}: {self.judgment_a} × {self.judgment_b}"


class ClaimFact(models.Model):
    """What a claim's counted sheets say together; a row only while it has one."""

    claim = models.OneToOneField(
        Claim, primary_key=True, on_delete=models.CASCADE, related_name="agreement_fact"
    )
    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="+")
    system = models.CharField(max_length=200)
    sheets = models.PositiveSmallIntegerField()
    # The sorted judgments joined by "|": Krippendorff's α and percent agreement need no
    # more of a unit, so the dashboard counts units per profile.
    profile = models.TextField()
    # Mean pairwise Jaccard of the evidence sets; null below two sheets.
    evidence_jaccard = models.FloatField(null=True)
    # Mean pairwise token F1 of the evidence spans and of the unsupported spans (over the
    # words they cover); null below two sheets.
    evidence_f1 = models.FloatField(null=True)
    unsupported_f1 = models.FloatField(null=True)
    # Sheets A and B (the first two, by sheet id); blank below two sheets.
    judgment_a = models.CharField(max_length=30, blank=True)
    judgment_b = models.CharField(max_length=30, blank=True)

    class Meta:
        indexes = [
            # The dashboard's profile and sheet A × sheet B counts; covering.
            models.Index(
                fields=[
                    "audit_set",
                    "system",
                    "profile",
                    "judgment_a",
                    "judgment_b",
                    "evidence_jaccard",
                    "evidence_f1",
                    "unsupported_f1",
                ],
                name="claimfact_set_idx",
            ),
            # A heat-map cell's claims.
            models.Index(
                fields=["audit_set", "judgment_a", "judgment_b"], name="claimfact_cell_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"claim {self.claim_id}: {self.profile}"


class Job(models.Model):
    """A long action run by a worker process (`manage.py db_worker`), not in a request.

    The row says what to do (`params`), who asked and how it ended. Progress while it runs
    lives in the cache (selectors.job_progress): an import's writes, this row's included,
    stay invisible to other processes until its one transaction commits.
    """

    class Kind(models.TextChoices):
        IMPORT = "import", "Import answers"
        JUDGE = "judge", "Run a judge"
        EXPORT = "export", "Export"
        REMATCH = "rematch", "Recompute machine checks"
        RECOMPARE = "recompare", "Compare again"
        VERDICTS = "verdicts", "Import machine verdicts"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Finished"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    audit_set = models.ForeignKey(
        AuditSet, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    # Whose leads may follow a job that has no set yet: an import into a new set creates
    # the set here. A job with a set belongs to the set's workspace.
    workspace = models.ForeignKey(
        "Workspace", null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # What the job needs to run, e.g. the uploaded file's path, name and format.
    params = models.JSONField(default=dict)
    # Names the job's progress and cancel entries in the cache; unique across databases,
    # so test databases (or two deployments) sharing one cache never read each other's.
    token = models.CharField(max_length=32, unique=True)
    # How it ended: the import's summary, or the error naming file, line and field.
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    # The worker process that ran it last ("host pid N"): named when it is lost.
    worker = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("audit:job-detail", args=[self.pk])

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED, self.Status.CANCELLED)

    @property
    def unit(self) -> str:
        """What its progress counts."""
        return {
            self.Kind.RECOMPARE: "claims",
            self.Kind.JUDGE: "claims",
            self.Kind.VERDICTS: "verdicts",
        }.get(self.kind, "answers")


class Judge(models.Model):
    """An automatic judge a lead set up for a set: an OpenAI-compatible chat-completions
    endpoint and a prompt. The key is read from the environment variable named here, so it
    is never stored or shown."""

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=100)
    base_url = models.CharField("Base URL", max_length=500)
    model = models.CharField(max_length=200)
    api_key_env = models.CharField(
        "API key variable",
        max_length=100,
        blank=True,
        help_text="The name of the environment variable holding the key; empty: no key.",
    )
    temperature = models.FloatField(
        default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)]
    )
    max_concurrency = models.PositiveSmallIntegerField(
        default=4, validators=[MinValueValidator(1), MaxValueValidator(32)]
    )
    timeout_seconds = models.FloatField(
        default=60.0, validators=[MinValueValidator(1.0), MaxValueValidator(600.0)]
    )
    price_per_million = models.DecimalField(
        "Price per 1M tokens",
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="Optional; the page then shows money per 1,000 claims as well as tokens.",
    )
    # The acceptance threshold, written before any verdict is looked at (JudgeThresholdChange
    # keeps its history; `threshold_locked_at` is the first run's start).
    min_kappa = models.FloatField(null=True, blank=True)
    min_gold = models.PositiveIntegerField(null=True, blank=True)
    threshold_locked_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["audit_set", "name"], name="unique_judge_name_per_set")
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("audit:judge-detail", args=[self.pk])

    @property
    def has_threshold(self) -> bool:
        return self.min_kappa is not None and self.min_gold is not None


class JudgeVersion(models.Model):
    """What a judge's verdicts depend on, frozen: the prompt template, the model and the
    temperature. Changing any of them makes a new version, a rater of its own."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    template = models.TextField()
    model = models.CharField(max_length=200)
    temperature = models.FloatField()
    rater = models.OneToOneField(Rater, on_delete=models.PROTECT, related_name="judge_version")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "number"], name="unique_judge_version")
        ]

    def __str__(self) -> str:
        return f"{self.judge} v{self.number}"


class JudgeThresholdChange(models.Model):
    """One edit of a judge's acceptance threshold; `after_lock` marks one made once verdicts
    existed, which the calibration page and the report show as such."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="threshold_changes")
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    after_lock = models.BooleanField(default=False)

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self) -> str:
        return f"{self.judge} threshold changed at {self.at:%Y-%m-%d %H:%M}"


class JudgeRun(models.Model):
    """One run of a judge version over a subset of the set's claims, frozen when it starts,
    so resuming it judges the same claims. Its jobs write one verdict per claim."""

    class Subset(models.TextChoices):
        ALL = "all", "All claims"
        UNREVIEWED = "unreviewed", "Claims no human has judged yet"
        CONTROLS = "controls", "The set's control claims"
        SYSTEM = "system", "One system"

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="runs")
    version = models.ForeignKey(JudgeVersion, on_delete=models.CASCADE, related_name="runs")
    subset = models.CharField(max_length=20, choices=Subset, default=Subset.ALL)
    system = models.CharField(max_length=200, blank=True)
    claim_ids = models.JSONField(default=list)
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.version} run {self.pk}"


class JudgeVerdict(models.Model):
    """A judge's reply on one claim in one run: a checked verdict, or the error that stopped
    it (then `judgment` is empty). A verdict is also its version's rater label."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="verdicts")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="+")
    judgment = models.CharField(max_length=30, choices=Judgment, blank=True)
    # [{"sentence", "passage", "start", "end", "text"}]: the numbered sentences the judge named.
    evidence = models.JSONField(default=list, blank=True)
    unsupported_spans = models.JSONField(default=list, blank=True)
    wrong_citation_passage = models.PositiveIntegerField(null=True, blank=True)
    rationale = models.TextField(blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    raw_reply = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(fields=["run", "claim"], name="unique_verdict_per_run_claim")
        ]

    def __str__(self) -> str:
        return f"{self.run}: claim {self.claim_id} {self.judgment or 'error'}"


class JudgeAcceptance(models.Model):
    """A lead's acceptance of a judge version for its set, with the calibration it met; its
    verdicts may then stand for claims no human judged, always shown as the judge's."""

    version = models.OneToOneField(
        JudgeVersion, on_delete=models.CASCADE, related_name="acceptance"
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)
    n_gold = models.PositiveIntegerField()
    kappa = models.FloatField(null=True)
    kappa_low = models.FloatField(null=True)
    kappa_high = models.FloatField(null=True)
    threshold = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"{self.version} accepted"


class Webhook(models.Model):
    """A URL a lead registered on a set, posted a signed JSON body when one of its events
    happens (audit.services.webhooks)."""

    class Event(models.TextChoices):
        CLAIM_ADJUDICATED = "claim.adjudicated", "Claim adjudicated"
        SET_REVIEWED = "set.reviewed", "Set fully reviewed"
        DECISION_CHANGED = "decision.changed", "Release decision changed"
        IMPORT_FINISHED = "import.finished", "Import finished"

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=500)
    # Signs every body (HMAC-SHA256); kept readable because each delivery needs it, and
    # shown to the set's leads so the receiver can check the signature.
    secret = models.CharField(max_length=64)
    events = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"{self.audit_set} → {self.url}"


class WebhookDelivery(models.Model):
    """One event posted to one webhook: its exact body, and how each attempt went."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40)
    # The bytes that were signed, sent unchanged by every attempt.
    body = models.TextField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    response_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        # The delivery log on the set's webhook page: a hook's newest deliveries.
        indexes = [models.Index(fields=["webhook", "-created_at"], name="delivery_log")]

    def __str__(self) -> str:
        return f"{self.event} → {self.webhook.url} ({self.status})"


# ------------------------------------------------------------------------- calibration


class ClaimSkip(models.Model):
    """A reviewer put a claim back for later and said why: it comes after every claim they
    have not skipped, and the set's leads read the reason on the progress page."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="skips")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="claim_skips"
    )
    reason = models.TextField()
    skipped_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-skipped_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["claim", "reviewer"], name="one_skip_per_reviewer")
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} skipped claim {self.claim_id}"


class GuidelineVersion(models.Model):
    """One edit of a set's guidelines, with what changed and why; a sheet records the
    version current when it was submitted, so agreement can be split by guideline version."""

    audit_set = models.ForeignKey(
        AuditSet, on_delete=models.CASCADE, related_name="guideline_versions"
    )
    number = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    note = models.CharField("Change note", max_length=500, blank=True)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["audit_set", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["audit_set", "number"], name="one_guideline_version_number_per_set"
            )
        ]

    def __str__(self) -> str:
        return f"{self.audit_set} guidelines v{self.number}"


class ControlClaim(models.Model):
    """An adjudicated claim a lead uses as a control: mixed into reviewers' queues to
    measure them against gold. The sheets reviewers write on it as a control (see
    ControlAssignment) never count in agreement, tallies, statuses or release figures."""

    claim = models.OneToOneField(Claim, on_delete=models.CASCADE, related_name="control")
    marked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    marked_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"control: claim {self.claim_id}"


class ControlAssignment(models.Model):
    """A control claim in one reviewer's queue. Not an Assignment on purpose: every derived
    figure counts a sheet only while its reviewer holds an Assignment for the claim, so a
    control's sheet is left out of them all without a special case."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="control_assignments")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="control_assignments"
    )
    assigned_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["claim", "reviewer"], name="one_control_assignment_per_reviewer"
            )
        ]
        indexes = [
            # The reviewer's queue: their control claims, claim by claim.
            models.Index(fields=["reviewer", "claim"], name="control_reviewer_claim_idx"),
        ]

    def __str__(self) -> str:
        return f"control claim {self.claim_id} → {self.reviewer}"


class ReviewerPause(models.Model):
    """A lead paused a reviewer's queue in a set: they open no new claim there, and every
    sheet they submitted is kept."""

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="pauses")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    paused_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    paused_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["audit_set", "reviewer"], name="one_pause_per_reviewer")
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} paused in {self.audit_set}"


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


# ------------------------------------------------------------------------- workspaces


class Workspace(models.Model):
    """A team's sets and the people who may see them; nothing crosses between workspaces."""

    DEFAULT_SLUG = "default"

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("audit:workspace-members", args=[self.slug])


class Membership(models.Model):
    """One person's role in one workspace. Deactivated members keep their row (and the
    sheets they submitted stay attributed to them) but see nothing of the workspace."""

    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        LEAD = "lead", "Lead"
        REVIEWER = "reviewer", "Reviewer"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.REVIEWER)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="one_membership_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.get_role_display()} in {self.workspace}"

    @property
    def leads(self) -> bool:
        return self.role in (self.Role.OWNER, self.Role.LEAD)


class Invitation(models.Model):
    """A single-use, expiring link to join a workspace with a role. Only the token's
    SHA-256 is stored: the link itself exists in the message sent to the invitee."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(
        max_length=10, choices=Membership.Role.choices, default=Membership.Role.REVIEWER
    )
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.email} to {self.workspace} as {self.role}"


class ApiToken(models.Model):
    """A personal token for the HTTP API (/api/v1/): requests made with it act as its owner.

    Only a hash of the secret is stored; the secret is shown once, when the token is made.
    The prefix (the token's first characters, not secret) finds the row in one lookup.
    """

    class Scope(models.TextChoices):
        READ = "read", "Read only"
        WRITE = "write", "Read and write"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    # sha256 of the whole token: the secret has 256 random bits, so a fast hash is enough
    # (a slow password hasher protects guessable passwords, which this is not).
    secret_hash = models.CharField(max_length=64)
    scope = models.CharField(max_length=5, choices=Scope.choices, default=Scope.READ)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def is_active(self, now) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)
