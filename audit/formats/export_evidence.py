"""The evidence-verification table as CSV: every evidence span of a set (quotations in the
answers, reviewers' and gold evidence sentences) checked against its passage.

The checking itself is audit.evidence; this module feeds it and flattens its rows.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator

from audit import evidence
from audit.formats import labelled
from audit.formats.export_csv import BOM, EchoBuffer, spreadsheet_cell

GOLD_SOURCE = "gold"
COLUMNS = [
    "question_id",
    "answer_id",
    "answer_db_id",
    "claim_id",
    "claim_order",
    "parent_order",
    "source",
    "kind",
    "passage",
    "passage_id",
    "verified",
    "match",
    "span",
]


def evidence_csv(answers: Iterable[labelled.Answer]) -> Iterator[str]:
    """The table as text, a row at a time, header first.

    Per claim in reading order: the answer's quotations (kind "answer"), then each sheet's
    evidence sentences (source: the reviewer) and the gold's (source "gold"), kind
    "verbatim". passage is the position in the answer, passage_id the database id.
    """
    writer = csv.writer(EchoBuffer())
    yield BOM + writer.writerow(COLUMNS)
    for answer in answers:
        for row in answer_rows(answer):
            yield writer.writerow([spreadsheet_cell(v) for v in row])


def answer_rows(answer: labelled.Answer) -> Iterator[list]:
    claims = dict(enumerate(answer.claims, start=1))
    spans: list[evidence.EvidenceSpan] = []
    for number, claim in claims.items():
        spans += evidence.answer_quote_spans(number, claim.text)
        sources = [(sheet.reviewer, sheet.evidence) for sheet in claim.sheets]
        if claim.gold is not None:
            sources.append((GOLD_SOURCE, claim.gold.evidence))
        for source, items in sources:
            spans += [
                evidence.EvidenceSpan(
                    claim=number,
                    source=source,
                    kind=evidence.VERBATIM,
                    text=item.get("text") or "",
                    passage=item.get("passage"),
                )
                for item in items
            ]
    rows = evidence.verify_spans(
        spans,
        {p.position: p.text for p in answer.passages},
        {number: claim.citations for number, claim in claims.items()},
    )
    ids = {p.position: p.db_id for p in answer.passages}
    for row in rows:
        claim = claims[row.claim]
        yield [
            answer.question_id,
            answer.answer_id,
            answer.db_id,
            claim.db_id,
            claim.order,
            claim.parent_order,
            row.source,
            row.kind,
            row.passage,
            ids.get(row.passage) if row.passage is not None else None,
            row.verified,
            None if row.match is None else round(row.match, 4),
            row.span,
        ]
