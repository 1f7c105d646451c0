"""A model's suggestions for a set's claims, as JSONL (one claim per line) or as the list of
objects an API body carries: judgment, evidence spans, unsupported words, wrong citation.

Only the shape is checked here; whether a claim, passage or offset exists is the set's
business (audit.services.suggestions)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from audit.formats.reading import (
    Where,
    as_lines,
    decode_text,
    expect_object,
    load_json,
    type_name,
)
from audit.formats.records import FormatError
from audit.judgments import JUDGMENT_CODES

FIELDS = frozenset(
    {"claim", "judgment", "judgment_score", "evidence", "unsupported", "wrong_citation"}
)
EVIDENCE_FIELDS = frozenset({"passage", "start", "end", "score"})
UNSUPPORTED_FIELDS = frozenset({"start", "end", "score"})
WRONG_CITATION_FIELDS = frozenset({"passage", "score"})
# Spans per claim: a source that marks more than this is marking everything.
MAX_SPANS = 200
MAX_NAME = 300


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    passage: int | None = None  # a passage's position for evidence; None for claim words
    score: float | None = None


@dataclass(frozen=True)
class SuggestionRecord:
    location: str  # "line 3" in a file, "suggestions[2]" in an API body
    claim: int | str  # a claim's id, or its name ("refund-a1 claim 2" / "... claim 2.1")
    judgment: str = ""
    judgment_score: float | None = None
    evidence: tuple[Span, ...] = ()
    unsupported: tuple[Span, ...] = ()
    wrong_citation_passage: int | None = None
    wrong_citation_score: float | None = None

    def as_json(self) -> dict[str, Any]:
        """The record as the file format writes it (a job's file of an API body)."""
        out: dict[str, Any] = {"claim": self.claim}
        if self.judgment:
            out["judgment"] = self.judgment
        if self.judgment_score is not None:
            out["judgment_score"] = self.judgment_score
        if self.evidence:
            out["evidence"] = [_span_json(s, passage=True) for s in self.evidence]
        if self.unsupported:
            out["unsupported"] = [_span_json(s, passage=False) for s in self.unsupported]
        if self.wrong_citation_passage is not None:
            wrong: dict[str, Any] = {"passage": self.wrong_citation_passage}
            if self.wrong_citation_score is not None:
                wrong["score"] = self.wrong_citation_score
            out["wrong_citation"] = wrong
        return out


def _span_json(span: Span, *, passage: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"passage": span.passage} if passage else {}
    out |= {"start": span.start, "end": span.end}
    if span.score is not None:
        out["score"] = span.score
    return out


def parse_suggestions(
    data: bytes, filename: str, *, max_bytes: int
) -> tuple[SuggestionRecord, ...]:
    """Parse and check a whole suggestions file; the first problem raises FormatError naming
    the file, line and field."""
    doc = load_json(decode_text(data, filename, max_bytes), filename)
    return _records(
        ((Where(filename, f"line {line.number}"), line.value) for line in as_lines(doc, filename)),
        filename,
    )


def parse_records(
    objects: Any, filename: str, *, place: str = "suggestions"
) -> tuple[SuggestionRecord, ...]:
    """Parse and check records given as parsed JSON (an API body's list): the place of each
    is `place[i]`, counted from 0."""
    if not isinstance(objects, list):
        raise FormatError(filename, "", place, f"expected a list, got {type_name(objects)}")
    return _records(
        ((Where(filename, f"{place}[{i}]"), obj) for i, obj in enumerate(objects)), filename
    )


def _records(items: Iterable[tuple[Where, Any]], filename: str) -> tuple[SuggestionRecord, ...]:
    records = []
    seen: dict[int | str, str] = {}
    for where, value in items:
        record = _record(value, where)
        if record.claim in seen:
            raise where.error(
                "claim", f"a second suggestion for the same claim ({seen[record.claim]})"
            )
        seen[record.claim] = where.location
        records.append(record)
    if not records:
        raise FormatError(filename, "", "", "no suggestions in the file")
    return tuple(records)


def _record(value: Any, where: Where) -> SuggestionRecord:
    obj = expect_object(value, where, "")
    _no_unknown(obj, FIELDS, where, "")
    if "claim" not in obj:
        raise where.error("claim", "required: the claim's id or its name")
    claim = obj["claim"]
    if isinstance(claim, bool) or not isinstance(claim, int | str):
        raise where.error("claim", f"expected a claim id or name, got {type_name(claim)}")
    if isinstance(claim, int) and not 0 < claim < 2**63:
        raise where.error("claim", "expected a claim id from 1")
    if isinstance(claim, str):
        if "\x00" in claim or not claim.strip():
            raise where.error("claim", "expected a claim name such as 'refund-a1 claim 2'")
        if len(claim) > MAX_NAME:
            raise where.error("claim", f"longer than {MAX_NAME} characters")
    judgment = obj.get("judgment")
    if judgment is None:
        judgment = ""
    if not isinstance(judgment, str):
        raise where.error("judgment", f"expected text, got {type_name(judgment)}")
    if judgment and judgment not in JUDGMENT_CODES:
        raise where.error(
            "judgment",
            f"unknown judgment {judgment[:40]!r} (one of {', '.join(sorted(JUDGMENT_CODES))})",
        )
    judgment_score = _score(obj.get("judgment_score"), where, "judgment_score")
    if judgment_score is not None and not judgment:
        raise where.error("judgment_score", "a score needs a judgment to go with it")
    evidence = tuple(
        _span(item, where, f"evidence[{i}]", EVIDENCE_FIELDS)
        for i, item in enumerate(_list(obj.get("evidence"), where, "evidence"))
    )
    unsupported = tuple(
        _span(item, where, f"unsupported[{i}]", UNSUPPORTED_FIELDS)
        for i, item in enumerate(_list(obj.get("unsupported"), where, "unsupported"))
    )
    wrong_passage, wrong_score = None, None
    wrong = obj.get("wrong_citation")
    if wrong is not None:
        wrong = expect_object(wrong, where, "wrong_citation")
        _no_unknown(wrong, WRONG_CITATION_FIELDS, where, "wrong_citation.")
        wrong_passage = _position(wrong.get("passage"), where, "wrong_citation.passage")
        wrong_score = _score(wrong.get("score"), where, "wrong_citation.score")
    return SuggestionRecord(
        location=where.location,
        claim=claim,
        judgment=judgment,
        judgment_score=judgment_score,
        evidence=evidence,
        unsupported=unsupported,
        wrong_citation_passage=wrong_passage,
        wrong_citation_score=wrong_score,
    )


def _no_unknown(obj: dict, allowed: frozenset[str], where: Where, prefix: str) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise where.error(
            prefix + unknown[0], f"unknown field (expected one of {', '.join(sorted(allowed))})"
        )


def _list(value: Any, where: Where, field: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise where.error(field, f"expected a list, got {type_name(value)}")
    if len(value) > MAX_SPANS:
        raise where.error(field, f"{len(value)} spans; at most {MAX_SPANS} a claim")
    return value


def _span(value: Any, where: Where, field: str, allowed: frozenset[str]) -> Span:
    obj = expect_object(value, where, field)
    _no_unknown(obj, allowed, where, field + ".")
    passage = (
        _position(obj.get("passage"), where, field + ".passage") if "passage" in allowed else None
    )
    start = _offset(obj.get("start"), where, field + ".start")
    end = _offset(obj.get("end"), where, field + ".end")
    if start >= end:
        raise where.error(field + ".end", f"end {end} is not after start {start}")
    return Span(start, end, passage, _score(obj.get("score"), where, field + ".score"))


def _offset(value: Any, where: Where, field: str) -> int:
    if value is None:
        raise where.error(field, "required: a character offset")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise where.error(field, f"expected a whole number from 0, got {_shown(value)}")
    return value


def _position(value: Any, where: Where, field: str) -> int:
    if value is None:
        raise where.error(field, "required: the passage's number, as the answer cites it")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**31:
        raise where.error(field, f"expected a passage number from 1, got {_shown(value)}")
    return value


def _score(value: Any, where: Where, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise where.error(field, f"expected a number from 0 to 1, got {type_name(value)}")
    # An API body is read by a JSON parser that lets NaN and Infinity through.
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise where.error(field, f"expected a number from 0 to 1, got {_shown(value)}")
    return float(value)


def _shown(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return type_name(value)
