"""The claims table for spreadsheets: one CSV row per claim with flat columns, the reviewers'
judgments side by side (sheet 1, sheet 2... by reviewer name), gold and machine label.

Text cells that a spreadsheet would run as a formula are prefixed with an apostrophe.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from typing import Any

from audit import judgments
from audit.formats import labelled

# Excel reads a CSV as UTF-8 only when it starts with a byte order mark.
BOM = "\ufeff"
# OWASP's list: a cell starting with one of these is a formula to Excel and LibreOffice.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class EchoBuffer:
    """A file that hands back what is written, so csv.writer can feed a generator."""

    def write(self, value: str) -> str:
        return value


def columns(sheet_slots: int) -> list[str]:
    sheet_columns = [
        f"sheet_{i}_{field}"
        for i in range(1, sheet_slots + 1)
        for field in ("reviewer", "status", "judgment", "evidence", "unsupported")
    ]
    return [
        "question_id",
        "question",
        "answer_id",
        "answer_db_id",
        "system",
        "claim_id",
        "claim_order",
        "parent_order",
        "location",
        "claim",
        "start",
        "end",
        "citations",
        "cited_unknown",
        "machine_label",
        "machine_best_score",
        "ungrounded_numbers",
        *sheet_columns,
        "gold_judgment",
        "gold_evidence",
        "gold_unsupported",
        "gold_source",
        "gold_verification_worthy",
        "gold_lead",
        "citation_count",
        "sheet_count",
        "submitted_count",
        "ungrounded_count",
        "gold_unsupported_count",
    ]


def claims_csv(answers: Iterable[labelled.Answer], *, sheet_slots: int = 2) -> Iterator[str]:
    """The table as text, a row at a time, header first.

    Sheets fill the sheet_N columns in reviewer-name order; a claim with more sheets than
    slots keeps the first ones (ask for more slots). Lists are space-separated numbers;
    evidence and unsupported spans are their texts joined by " | " (see `span_texts`).
    """
    writer = csv.writer(EchoBuffer())
    yield BOM + writer.writerow(columns(sheet_slots))
    for answer in answers:
        for claim in answer.claims:
            yield writer.writerow([spreadsheet_cell(v) for v in _row(answer, claim, sheet_slots)])


def _row(answer: labelled.Answer, claim: labelled.Claim, sheet_slots: int) -> list[Any]:
    check = claim.check
    ungrounded = [n["token"] for n in check.numbers if not n.get("grounded")] if check else []
    sheets: list[Any] = []
    for i in range(sheet_slots):
        sheet = claim.sheets[i] if i < len(claim.sheets) else None
        sheets += (
            [
                sheet.reviewer,
                sheet.status,
                sheet.judgment,
                evidence_texts(sheet.evidence),
                assertion_texts(sheet.unsupported_assertions),
            ]
            if sheet
            else ["", "", "", "", ""]
        )
    gold = claim.gold
    return [
        answer.question_id,
        answer.question,
        answer.answer_id,
        answer.db_id,
        answer.system,
        claim.db_id,
        claim.order,
        claim.parent_order,
        claim.location,
        claim.text,
        claim.start,
        claim.end,
        " ".join(map(str, claim.citations)),
        " ".join(map(str, claim.cited_unknown)),
        check.label if check else "",
        check.best_score if check else "",
        " ".join(str(token) for token in ungrounded),
        *sheets,
        gold.judgment if gold else "",
        evidence_texts(gold.evidence) if gold else "",
        assertion_texts(gold.unsupported_assertions) if gold else "",
        claim.gold_status,
        gold.verification_worthy if gold else "",
        (gold.lead or "") if gold else "",
        len(claim.citations),
        len(claim.sheets),
        sum(s.status == labelled.SUBMITTED for s in claim.sheets),
        len(ungrounded),
        len(gold.unsupported_assertions) if gold else "",
    ]


def evidence_texts(evidence: list[dict[str, Any]]) -> str:
    """Evidence spans as one cell: "[passage] text" each, joined by " | "."""
    return " | ".join(f"[{e['passage']}] {e['text']}" for e in evidence)


def assertion_texts(values: list[Any]) -> str:
    """Unsupported assertions as one cell: each text, its note in parentheses, joined by
    " | "; the offsets are in the JSON exports."""
    return " | ".join(
        a["text"] + (f" ({a['note']})" if a["note"] else "")
        for a in judgments.stored_assertions(values)
    )


def spreadsheet_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
