"""Judges: automatic judges, their versions, thresholds, runs, verdicts and acceptance."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.urls import reverse

from audit.models.choices import Judgment
from audit.models.claims import Claim, Rater
from audit.models.jobs import Job
from audit.models.sets import AuditSet


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
    # The judge's word on whether the claim states what the question asks; null where its
    # reply did not say.
    answers_question = models.BooleanField(null=True, blank=True)
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
