"""Machine verdicts (an LLM or NLI judge's labels) as JSONL, imported as an automatic rater.

One verdict per line; a claim is named by answer id plus claim index, or by its text.
"""

from __future__ import annotations

from dataclasses import dataclass

from audit.formats.reading import (
    Where,
    as_lines,
    decode_text,
    expect_list,
    expect_object,
    expect_text,
    load_json,
    optional_text,
    required_text,
)
from audit.formats.records import MAX_ID, MAX_RATER, Budget, FormatError
from audit.judgments import JUDGMENT_CODES

FIELDS = frozenset(
    {"judge", "answer_id", "claim_index", "claim_text", "judgment", "evidence", "rationale"}
)


@dataclass(frozen=True)
class Verdict:
    location: str
    judge: str
    answer_id: str
    claim_index: int | None  # 0-based order of the claim in its answer
    claim_text: str  # used when claim_index is absent
    judgment: str
    evidence: tuple[str, ...]
    rationale: str


def parse_verdicts(
    data: bytes, filename: str, *, max_bytes: int, budget: Budget | None = None
) -> tuple[Verdict, ...]:
    """Parse and validate a whole verdict file; the first problem raises FormatError.

    A budget bounds the number of verdicts (counted as its answers); parsing stops at the
    first one over it.
    """
    doc = load_json(decode_text(data, filename, max_bytes), filename)
    verdicts = []
    seen: dict[tuple[str, str, object], str] = {}
    for line in as_lines(doc, filename):
        where = Where(filename, f"line {line.number}")
        if budget is not None:
            budget.add_answer(where.location)
        obj = expect_object(line.value, where, "")
        unknown = sorted(set(obj) - FIELDS)
        if unknown:
            raise where.error(
                unknown[0], f"unknown field (expected one of {', '.join(sorted(FIELDS))})"
            )
        judge = required_text(obj, "judge", where, limit=MAX_RATER)
        answer_id = required_text(obj, "answer_id", where, limit=MAX_ID)
        index = obj.get("claim_index")
        if index is not None and (
            isinstance(index, bool) or not isinstance(index, int) or index < 0
        ):
            raise where.error("claim_index", "expected a whole number from 0")
        claim_text = optional_text(obj, "claim_text", where)
        if index is None and not claim_text.strip():
            raise where.error("claim_index", "give claim_index or claim_text to name the claim")
        judgment = required_text(obj, "judgment", where)
        if judgment not in JUDGMENT_CODES:
            raise where.error(
                "judgment",
                f"unknown judgment {judgment!r} (one of {', '.join(sorted(JUDGMENT_CODES))})",
            )
        evidence_value = obj.get("evidence") or []
        evidence = tuple(
            expect_text(item, where, f"evidence[{i}]")
            for i, item in enumerate(expect_list(evidence_value, where, "evidence"))
        )
        key = (judge, answer_id, index if index is not None else claim_text.strip())
        if key in seen:
            raise where.error("", f"a second verdict by {judge!r} for the same claim ({seen[key]})")
        seen[key] = where.location
        verdicts.append(
            Verdict(
                location=where.location,
                judge=judge,
                answer_id=answer_id,
                claim_index=index,
                claim_text=claim_text,
                judgment=judgment,
                evidence=evidence,
                rationale=optional_text(obj, "rationale", where),
            )
        )
    if not verdicts:
        raise FormatError(filename, "", "", "no verdicts in the file")
    return tuple(verdicts)
