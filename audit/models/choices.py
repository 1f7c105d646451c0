"""Choices that several areas' models share, built from audit.judgments' vocabularies."""

from __future__ import annotations

from django.db import models

from audit import judgments


def text_choices(name: str, vocabulary: tuple[tuple[str, str], ...]) -> type[models.TextChoices]:
    """Model choices from one of audit.judgments' (code, label) vocabularies, so a code or a
    label changes in one place; members are named after their codes ("" is NONE)."""
    members = [((code or "none").upper(), (code, label)) for code, label in vocabulary]
    return models.TextChoices(name, members)


Judgment = text_choices("Judgment", judgments.JUDGMENTS)
# Why a claim whose sheets are all in waits for a lead; lower comes first in the queue.
Severity = models.IntegerChoices(
    "Severity", [(name, (value, label)) for name, value, label in judgments.SEVERITIES]
)
