"""The labelled data of an audit set as the exports write it and the citeaudit import reads it:
an answer with its passages and claims, each claim with its check, sheets, labels and gold.

Plain dataclasses; the export service builds them from the database, never the reverse.
Usernames stand for people, passage positions for passages, so the data outlives the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from audit import judgments
from audit.suggestions import Suggested

# The codes of the models' choices for claims and checks (Claim.Location, ClaimCheck.Label),
# repeated here because this module cannot import the models; tests/test_exports.py checks
# that they agree. The judgment's vocabularies come from audit.judgments, as the models'.
LOCATIONS = ("split", "exact", "fuzzy", "not_located", "atomic")
ATOMIC = "atomic"
CHECK_LABELS = ("verified", "likely", "unknown")
SHEET_STATUSES = tuple(code for code, _ in judgments.SHEET_STATUSES)
SUBMITTED = "submitted"
GOLD_SOURCES = tuple(code for code, _ in judgments.GOLD_SOURCES)
GOLD_REASONS = tuple(code for code, _ in judgments.REASONS)
RATER_KINDS = tuple(code for code, _ in judgments.RATER_KINDS)

# What the gold of a claim rests on, as the exports summarise it.
UNANIMOUS = "unanimous"
ADJUDICATED = "adjudicated"
UNRESOLVED = "unresolved"
GOLD_STATUSES = (UNANIMOUS, ADJUDICATED, UNRESOLVED)


@dataclass(frozen=True)
class Passage:
    position: int  # 1-based: the number a citation refers to
    title: str
    url: str
    text: str
    is_cited: bool
    db_id: int | None = None


@dataclass(frozen=True)
class SourceSuggestion:
    """What one source (a judge run or a pushed model; the matcher's is the claim's check)
    suggested for a claim, with the source's key, name and version."""

    source: str
    name: str
    version: str
    suggested: Suggested


@dataclass(frozen=True)
class MachineCheck:
    matcher_version: str
    label: str
    best_score: float
    highlights: list[Any]
    numbers: list[Any]
    wrong_citation: dict[str, Any] | None
    computed_at: datetime | None


@dataclass(frozen=True)
class Judged:
    """A judgment's fields (audit.judgments.FIELDS) as a sheet and a gold record carry them;
    passages are named by position."""

    judgment: str
    wrong_citation_passage: int | None
    evidence: list[dict[str, Any]]
    # [{"text", "start", "end", "note"}]: spans of the claim as judged, then free text
    unsupported_assertions: list[dict[str, Any]]
    verification_worthy: bool
    answers_question: bool


@dataclass(frozen=True)
class Sheet(Judged):
    """One reviewer's audit sheet."""

    reviewer: str
    status: str
    answer_statement: str
    cited_urls: list[str]
    notes: str
    active_seconds: int
    version: int
    created_at: datetime
    updated_at: datetime
    submitted_at: datetime | None
    db_id: int | None = None


@dataclass(frozen=True)
class Gold(Judged):
    """The adjudication of a claim; from_sheet and sheets name the sheets by their reviewer."""

    source: str
    from_sheet: str | None
    sheets: tuple[str, ...]
    reason: str
    note: str
    lead: str | None
    version: int
    created_at: datetime
    updated_at: datetime
    db_id: int | None = None


@dataclass(frozen=True)
class RaterLabel:
    rater: str
    kind: str
    judgment: str  # "" when the imported label maps to no judgment
    raw_label: str
    verification_worthy: bool | None
    note: str


@dataclass(frozen=True)
class Claim:
    """A claim of an answer; an atomic claim names its parent by the parent's order."""

    order: int
    parent_order: int | None
    text: str
    start: int
    end: int
    location: str
    citations: tuple[int, ...]
    cited_unknown: tuple[int, ...]
    is_uncited: bool
    answers_question: bool = False
    split_by: str | None = None
    split_at: datetime | None = None
    assigned: tuple[str, ...] = ()
    check: MachineCheck | None = None
    sheets: tuple[Sheet, ...] = ()
    rater_labels: tuple[RaterLabel, ...] = ()
    gold: Gold | None = None
    db_id: int | None = None
    suggestions: tuple[SourceSuggestion, ...] = ()

    @property
    def gold_status(self) -> str:
        if self.gold is None:
            return UNRESOLVED
        return UNANIMOUS if self.gold.source == UNANIMOUS else ADJUDICATED

    @property
    def key(self) -> tuple[int, int, int]:
        """Reading order in the answer: an atomic claim right after its parent."""
        if self.parent_order is None:
            return (self.order, 0, 0)
        return (self.parent_order, 1, self.order)


@dataclass(frozen=True)
class Answer:
    question_id: str
    question: str
    answer_id: str  # "" when the answer has no external id
    system: str
    text: str
    is_partial: bool
    content_hash: str
    metadata: dict[str, Any]
    passages: tuple[Passage, ...]
    claims: tuple[Claim, ...]  # in reading order
    db_id: int | None = None
    question_db_id: int | None = None
