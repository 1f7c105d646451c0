"""The evidence-verification table: every quoted evidence span checked against its source.

Rows come from reviewers' evidence sentences, imported evidence, and quotations inside the
answer itself; each is verified with matching.verify_quote, never by a model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from audit.matching import verify_quote

VERBATIM = "verbatim"  # a reviewer selected it in the passage: should always verify
EXTRACTED = "extracted"  # imported evidence text that claims to come from a passage
ANSWER = "answer"  # a quotation inside the answer, checked against the cited passages

# Quotations of at least two words in straight, curly or low double quotes.
_QUOTED = re.compile(r"[\"“„”]([^\"“„”\n]{3,}?)[\"”“]")


@dataclass(frozen=True)
class EvidenceSpan:
    claim: int  # the claim's 1-based number in its answer
    source: str  # who supplied it: a reviewer's name, a rater's name, or "answer"
    kind: str
    text: str
    passage: int | None  # 1-based passage position, None when unknown


@dataclass(frozen=True)
class EvidenceRow:
    claim: int
    source: str
    kind: str
    passage: int | None
    verified: bool | None  # None: the question does not apply (no passage, no text)
    match: float | None
    span: str  # the first 60 characters


def quoted_spans(text: str) -> list[str]:
    """Quotations of two or more words in a claim; single quoted words are names, not quotes."""
    return [m.group(1).strip() for m in _QUOTED.finditer(text) if len(m.group(1).split()) >= 2]


def answer_quote_spans(claim: int, text: str) -> list[EvidenceSpan]:
    return [
        EvidenceSpan(claim=claim, source="answer", kind=ANSWER, text=quote, passage=None)
        for quote in quoted_spans(text)
    ]


def verify_spans(
    spans: Sequence[EvidenceSpan],
    passages: Mapping[int, str],
    cited: Mapping[int, Sequence[int]],
) -> list[EvidenceRow]:
    """Verify each span against its passage; answer quotes against the best cited passage.

    `cited` maps a claim number to the passage positions it cites.
    """
    rows = []
    for span in spans:
        passage, verified, match = span.passage, None, None
        if span.kind == ANSWER:
            best = None
            for position in cited.get(span.claim, ()):
                check = verify_quote(span.text, passages.get(position, ""))
                if check.match is not None and (best is None or check.match > best[1].match):
                    best = (position, check)
            if best is not None:
                passage, verified, match = best[0], best[1].verified, best[1].match
        elif span.passage is not None and passages.get(span.passage):
            check = verify_quote(span.text, passages[span.passage])
            verified, match = check.verified, check.match
        rows.append(
            EvidenceRow(
                claim=span.claim,
                source=span.source,
                kind=span.kind,
                passage=passage,
                verified=verified,
                match=match,
                span=span.text[:60],
            )
        )
    return rows
