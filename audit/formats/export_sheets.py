"""The audit-sheets export: a JSON array with one item per submitted reviewer sheet and per
gold record, holding the audit fields and the ids that place them.

Written piece by piece, so a set of any size streams in constant memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from audit import judgments
from audit.formats import labelled
from audit.formats.export_jsonl import iso

SHEET = "sheet"
GOLD = "gold"


def audit_sheets(answers: Iterable[labelled.Answer]) -> Iterator[str]:
    """The array as text pieces: "[", the items separated by commas, "]".

    Per claim, in reading order: its submitted sheets by reviewer name, then its gold.
    Draft sheets are left out: they are not judgments yet.
    """
    yield "["
    separator = "\n"
    for answer in answers:
        for item in answer_items(answer):
            yield separator + json.dumps(item, ensure_ascii=False, allow_nan=False)
            separator = ",\n"
    yield "\n]\n" if separator != "\n" else "]\n"


def answer_items(answer: labelled.Answer) -> Iterator[dict[str, Any]]:
    urls = {p.position: p.url for p in answer.passages}
    for claim in answer.claims:
        ids = {
            "claim_id": claim.db_id,
            "answer_id": answer.answer_id,
            "question_id": answer.question_id,
        }
        for sheet in claim.sheets:
            if sheet.status != labelled.SUBMITTED:
                continue
            yield {
                "kind": SHEET,
                "id": sheet.db_id,
                **ids,
                "reviewer": sheet.reviewer,
                "answer_statement": sheet.answer_statement,
                "cited_url": sheet.cited_urls,
                "support_judgment": sheet.judgment,
                "evidence_sentences": sheet.evidence,
                # [{text, start, end, note}]: offsets into answer_statement, null for free text
                "unsupported_assertions": judgments.stored_assertions(sheet.unsupported_assertions),
                "created_at": iso(sheet.created_at),
                "updated_at": iso(sheet.updated_at),
                "submitted_at": iso(sheet.submitted_at),
            }
        gold = claim.gold
        if gold is not None:
            yield {
                "kind": GOLD,
                "id": gold.db_id,
                **ids,
                "reviewer": gold.lead,
                # Gold has no snapshot of its own: the claim and its citations as they stand.
                "answer_statement": claim.text,
                "cited_url": [urls[n] for n in claim.citations if n in urls],
                "support_judgment": gold.judgment,
                "evidence_sentences": gold.evidence,
                "unsupported_assertions": judgments.stored_assertions(gold.unsupported_assertions),
                "created_at": iso(gold.created_at),
                "updated_at": iso(gold.updated_at),
                "submitted_at": None,
            }
