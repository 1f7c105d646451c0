"""Suggestions: what a model proposes for a claim, from a named and versioned source, shown
to reviewers as a suggestion and measured against gold, never taken as a verdict.

The built-in matcher's suggestions are its stored checks (ClaimCheck) and a judge run's are
its verdicts (JudgeVerdict): both are read where they already live (audit.selectors.
suggestions), so only the suggestions pushed from outside, by the API or a file, are rows
here."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from audit.models.choices import Judgment
from audit.models.claims import Claim
from audit.models.sets import AuditSet


class SuggestionSource(models.Model):
    """A model outside the app that pushed suggestions for a set's claims: an NLI checker, a
    reranker, an LLM. A new version is a new source, so its figures never mix with the
    old one's."""

    audit_set = models.ForeignKey(
        AuditSet, on_delete=models.CASCADE, related_name="suggestion_sources"
    )
    name = models.CharField(max_length=100)
    version = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "version", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["audit_set", "name", "version"], name="suggestion_source_per_set"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


class Suggestion(models.Model):
    """One source's proposal for one claim; every part is optional and scored in [0, 1]."""

    source = models.ForeignKey(
        SuggestionSource, on_delete=models.CASCADE, related_name="suggestions"
    )
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="suggestions")
    judgment = models.CharField(max_length=30, choices=Judgment, blank=True)
    judgment_score = models.FloatField(null=True, blank=True)
    # [{"passage": position, "start": int, "end": int, "score": float | None}], best first:
    # sentences or word spans of the claim's passages.
    evidence = models.JSONField(default=list, blank=True)
    # [{"start": int, "end": int, "text": str, "score": float | None}]: words of the claim.
    unsupported = models.JSONField(default=list, blank=True)
    # The retrieved passage (position) the source says supports the claim instead.
    wrong_citation_passage = models.PositiveIntegerField(null=True, blank=True)
    wrong_citation_score = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "claim"], name="one_suggestion_per_source")
        ]

    def __str__(self) -> str:
        return f"{self.source} on claim {self.claim_id}"


class SuggestionSettingChange(models.Model):
    """One change of a set's suggestion settings, kept so the report can say which source
    reviewers were shown when, and that the withheld share was fixed before review."""

    audit_set = models.ForeignKey(
        AuditSet, on_delete=models.CASCADE, related_name="suggestion_setting_changes"
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)
    # {"suggestion_source": ..., "show_suggested_judgment": ..., "withhold_share": ...}
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    # Made once a sheet of the set was submitted: reviewers before and after saw different
    # suggestions.
    after_review_started = models.BooleanField(default=False)

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self) -> str:
        return f"{self.audit_set} suggestion settings changed at {self.at:%Y-%m-%d %H:%M}"
