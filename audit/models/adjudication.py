"""Adjudication and gold: a lead's gold record for a claim."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords

from audit import judgments
from audit.models.choices import Judgment, text_choices
from audit.models.claims import Claim
from audit.models.review import AuditSheet, JudgmentFields


class Adjudication(JudgmentFields):
    """The gold record for a claim, kept apart from both sheets."""

    Source = text_choices("Source", judgments.GOLD_SOURCES)
    Reason = text_choices("Reason", judgments.REASONS)

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
