"""Writes, by area: importing answer sets and storing checks (`imports`), review (`review`)."""

from audit.services.imports import (
    ImportSummary,
    answer_content_hash,
    answers_import,
    claim_checks_recompute,
    plan_claims,
)

__all__ = [
    "ImportSummary",
    "answer_content_hash",
    "answers_import",
    "claim_checks_recompute",
    "plan_claims",
]
