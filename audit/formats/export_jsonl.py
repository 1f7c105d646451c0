"""Citeaudit's JSON Lines export, version 2: an answer record (question, answer, passages) then
one claim record per claim (check, sheets, rater labels, gold, suggestions); citeaudit.py
reads it back.

The layout and fields are documented in docs/reference.md, "The citeaudit JSONL export".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from audit import judgments
from audit.formats import labelled
from audit.formats.citeaudit import ANSWER_RECORD, CLAIM_RECORD, VERSION

# Line breaks that str.splitlines() and some JSONL readers honour inside a line.
_LINE_BREAKS = ("\u2028", "\u2029", "\x85")


def answer_lines(answer: labelled.Answer) -> Iterator[str]:
    """The lines of one answer: its answer record, then a claim record per claim in reading
    order (none for an answer without claims).

    Passages are written once, on the answer record: version 1 repeated them on every
    claim's line, which made a set's export several times the size of its passages.
    """
    yield (
        _dumps(
            {
                "citeaudit": VERSION,
                "record": ANSWER_RECORD,
                "question": {
                    "db_id": answer.question_db_id,
                    "id": answer.question_id,
                    "text": answer.question,
                },
                "answer": {
                    "db_id": answer.db_id,
                    "id": answer.answer_id,
                    "system": answer.system,
                    "text": answer.text,
                    "is_partial": answer.is_partial,
                    "content_hash": answer.content_hash,
                    "metadata": answer.metadata,
                },
                "passages": [_passage_json(p) for p in answer.passages],
            }
        )
        + "\n"
    )
    head = _dumps(
        {"citeaudit": VERSION, "record": CLAIM_RECORD, "answer_hash": answer.content_hash}
    )[:-1]
    for claim in answer.claims:
        yield f"{head}, {_dumps(_claim_json(claim))[1:]}\n"


def _dumps(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    for char in _LINE_BREAKS:
        if char in text:
            text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def iso(moment: datetime | None) -> str | None:
    """A timestamp as ISO 8601 in UTC, to the microsecond so every value has one width."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _passage_json(passage: labelled.Passage) -> dict[str, Any]:
    return {
        "db_id": passage.db_id,
        "position": passage.position,
        "title": passage.title,
        "url": passage.url,
        "text": passage.text,
        "is_cited": passage.is_cited,
    }


def _claim_json(claim: labelled.Claim) -> dict[str, Any]:
    check = claim.check
    return {
        "claim": {
            "db_id": claim.db_id,
            "order": claim.order,
            "parent_order": claim.parent_order,
            "text": claim.text,
            "start": claim.start,
            "end": claim.end,
            "location": claim.location,
            "citations": list(claim.citations),
            "cited_unknown": list(claim.cited_unknown),
            "is_uncited": claim.is_uncited,
            "answers_question": claim.answers_question,
            "split_by": claim.split_by,
            "split_at": iso(claim.split_at),
        },
        "assigned": list(claim.assigned),
        "machine_check": None
        if check is None
        else {
            "matcher_version": check.matcher_version,
            "label": check.label,
            "best_score": check.best_score,
            "highlights": check.highlights,
            "numbers": check.numbers,
            "wrong_citation": check.wrong_citation,
            "computed_at": iso(check.computed_at),
        },
        "sheets": [_sheet_json(s) for s in claim.sheets],
        "rater_labels": [
            {
                "rater": label.rater,
                "kind": label.kind,
                "judgment": label.judgment,
                "raw_label": label.raw_label,
                "verification_worthy": label.verification_worthy,
                "note": label.note,
            }
            for label in claim.rater_labels
        ],
        "gold_source": claim.gold_status,
        "gold": None if claim.gold is None else _gold_json(claim.gold),
        "suggestions": [_suggestion_json(s) for s in claim.suggestions],
    }


def _suggestion_json(entry: labelled.SourceSuggestion) -> dict[str, Any]:
    s = entry.suggested
    return {
        "source": entry.source,
        "name": entry.name,
        "version": entry.version,
        "judgment": s.judgment,
        "judgment_score": s.judgment_score,
        "evidence": [
            {"passage": e.passage, "start": e.start, "end": e.end, "score": e.score}
            for e in s.evidence
        ],
        "unsupported": [
            {"start": u.start, "end": u.end, "text": u.text, "score": u.score}
            for u in s.unsupported
        ],
        "wrong_citation_passage": s.wrong_citation_passage,
        "wrong_citation_score": s.wrong_citation_score,
    }


def _judged_json(record: labelled.Judged) -> dict[str, Any]:
    """The judgment's fields after the judgment itself, which each record writes first."""
    return {name: getattr(record, name) for name in judgments.FIELDS if name != "judgment"}


def _sheet_json(sheet: labelled.Sheet) -> dict[str, Any]:
    return {
        "db_id": sheet.db_id,
        "reviewer": sheet.reviewer,
        "status": sheet.status,
        "answer_statement": sheet.answer_statement,
        "cited_urls": sheet.cited_urls,
        "judgment": sheet.judgment,
        **_judged_json(sheet),
        "notes": sheet.notes,
        "active_seconds": sheet.active_seconds,
        "version": sheet.version,
        "created_at": iso(sheet.created_at),
        "updated_at": iso(sheet.updated_at),
        "submitted_at": iso(sheet.submitted_at),
    }


def _gold_json(gold: labelled.Gold) -> dict[str, Any]:
    return {
        "db_id": gold.db_id,
        "judgment": gold.judgment,
        "source": gold.source,
        **_judged_json(gold),
        "from_sheet": gold.from_sheet,
        "sheets": list(gold.sheets),
        "reason": gold.reason,
        "note": gold.note,
        "lead": gold.lead,
        "version": gold.version,
        "created_at": iso(gold.created_at),
        "updated_at": iso(gold.updated_at),
    }
