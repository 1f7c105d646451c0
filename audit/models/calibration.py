"""Quality and calibration: agreement and release facts, criteria, controls, skips and pauses."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from audit.models.claims import Claim
from audit.models.sets import AuditSet


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
