"""Jobs and webhooks: long actions run by a worker, and webhooks with their deliveries."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse

from audit.models.sets import AuditSet


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
        SUGGESTIONS = "suggestions", "Import suggestions"

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
            self.Kind.SUGGESTIONS: "suggestions",
        }.get(self.kind, "answers")


class IdempotencyKey(models.Model):
    """A push's Idempotency-Key: its retry with the same key and body gets the job the first
    one queued. The unique constraint makes two requests racing with one key queue one job."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    # sha256 of what the request asked for (file, set, system, run, format), so the same
    # key with another body is refused rather than answered with the wrong job.
    fingerprint = models.CharField(max_length=64)
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="unique_idempotency_key_per_user")
        ]

    def __str__(self) -> str:
        return self.key


class Webhook(models.Model):
    """A URL a lead registered on a set, posted a signed JSON body when one of its events
    happens (audit.services.webhooks)."""

    class Event(models.TextChoices):
        CLAIM_ADJUDICATED = "claim.adjudicated", "Claim adjudicated"
        SET_REVIEWED = "set.reviewed", "Set fully reviewed"
        DECISION_CHANGED = "decision.changed", "Release decision changed"
        IMPORT_FINISHED = "import.finished", "Import finished"

    # A set's hook, or a workspace's: fired for every set of it, those made later included.
    audit_set = models.ForeignKey(
        AuditSet, null=True, blank=True, on_delete=models.CASCADE, related_name="webhooks"
    )
    workspace = models.ForeignKey(
        "audit.Workspace",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="webhooks",
    )
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
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(audit_set__isnull=False, workspace__isnull=True)
                    | models.Q(audit_set__isnull=True, workspace__isnull=False)
                ),
                name="webhook_set_or_workspace",
            )
        ]

    def __str__(self) -> str:
        return f"{self.audit_set or self.workspace} → {self.url}"


class WebhookDelivery(models.Model):
    """One event posted to one webhook: its exact body, and how each attempt went."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    # Sent as the Citeaudit-Delivery header and in the body; the same on every attempt and
    # redelivery, so a receiver can drop what it has seen.
    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
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
    # A worker sending it holds it until then: another worker finding the hook's oldest
    # pending delivery claimed waits rather than send a later one first.
    claimed_until = models.DateTimeField(null=True, blank=True)
    # When a lead last asked for it to be sent again (its attempts counted afresh from then).
    redelivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        # The delivery log on the set's webhook page: a hook's newest deliveries.
        indexes = [models.Index(fields=["webhook", "-created_at"], name="delivery_log")]

    def __str__(self) -> str:
        return f"{self.event} → {self.webhook.url} ({self.status})"


class WebhookAttempt(models.Model):
    """One try at sending a delivery: when, what came back (a status or why none), how long.
    The receiver's body is never read, so none is kept."""

    delivery = models.ForeignKey(
        WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log"
    )
    at = models.DateTimeField()
    response_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    redelivery = models.BooleanField(default=False)

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        outcome = self.response_code or self.error
        return f"{self.delivery.uuid} at {self.at:%Y-%m-%d %H:%M:%S} → {outcome}"
