"""Import of ExpertQA (github.com/chaitanyamalaviya/ExpertQA): answers with expert claim judgments.

One JSON line per question holding several systems' answers; each (question, system) is one answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from audit.formats.reading import (
    JsonFile,
    Where,
    as_lines,
    expect_list,
    expect_object,
    expect_text,
    is_clean_text,
    join,
    optional_text,
    quote,
    require,
    required_text,
    stable_id,
)
from audit.formats.records import (
    MAX_ID,
    AnswerRecord,
    Budget,
    LabelRecord,
    ParsedFile,
    PassageRecord,
)
from audit.judgments import NOT_SUPPORTED, PARTIAL, SUPPORTED

FORMAT = "expertqa"
DESCRIPTION = "an ExpertQA file"
RATER = "expertqa-expert"

# ExpertQA's claim "support" -> judgment code. Decided on data/lfqa/rand_test.jsonl
# (1,292 claims), since the release does not define the values:
# - Complete (733): the evidence supports the claim -> supported.
# - Partial (70): the reasons annotators wrote say part of the claim is supported
#   -> partially_supported.
# - Incomplete (200): only ever given to claims that have evidence; the reasons written for
#   it say the evidence is unrelated to or does not support the claim ("Evidence completely
#   unrelated", "Evidence is not supporting claim"), and its claims share the fewest content
#   words with their excerpts (mean 0.49, against 0.52 for Partial and 0.57 for Complete).
#   Beside Partial it is the only negative option when evidence exists -> not_supported.
#   The weakest call in this table: some Incomplete claims look partly supported.
# - Missing (227): the claim has no evidence at all (empty evidence list in every case);
#   nothing cited supports it -> not_supported. raw_label keeps "Missing" apart from
#   "Incomplete" for anyone who needs uncited claims separately.
# - N/A (62): the expert gave no support judgment -> None.
SUPPORT_JUDGMENTS: dict[str, str | None] = {
    "Complete": SUPPORTED,
    "Partial": PARTIAL,
    "Incomplete": NOT_SUPPORTED,
    "Missing": NOT_SUPPORTED,
    "N/A": None,
}
# "worthiness" answers "does this claim need a citation?"; anything but Yes/No stays unknown.
WORTHINESS = {"Yes": True, "No": False}
_METADATA_KEYS = ("field", "specific_field", "question_type")
# A guard against "[999999] url" inflating the passage list; real answers cite < 20 sources.
_MAX_CITATION = 1000
_NUMBERED = re.compile(r"\s*\[([0-9]+)\]\s*(.*)", re.DOTALL)
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def looks_like(record: dict[str, Any]) -> bool:
    return "question" in record and isinstance(record.get("answers"), dict)


def parse(doc: JsonFile, filename: str, budget: Budget | None = None) -> ParsedFile:
    """Validate an ExpertQA JSON Lines file and return one answer per (question, system).

    - question_id: a hash of the question text (the file has none); answer_id is
      "<question_id>:<system>". metadata keeps field, specific_field and question_type.
    - claims: the claim_strings verbatim; labels: one per claim that has a support value,
      rater "expertqa-expert", mapped by SUPPORT_JUDGMENTS, verification_worthy from
      worthiness, note from reason_missing_support.
    - passages: positional from attribution ("[n] URL"). An unnumbered entry takes its
      position in the list; a number missing from attribution but cited in a claim's
      evidence takes that evidence's URL; a number nobody gives becomes an empty passage
      so later numbers keep their place.
    - Passage text comes from the claims' evidence strings ("[n] URL\\n\\nexcerpt"). The
      distinct excerpts given for one [n] are kept in first-seen order, an excerpt
      contained in another is dropped, and the rest are joined by a blank line. In
      rand_test.jsonl every [n] has at most one distinct excerpt. A number never given an
      excerpt gets text "" with its URL (the released gpt4/bing_chat answers carry URLs
      only). Unnumbered evidence is matched to attribution by URL, else ignored.
    """
    budget = budget or Budget(filename)
    records = []
    seen: dict[str, int] = {}
    for line in as_lines(doc, filename):
        where = Where(filename, f"line {line.number}")
        obj = expect_object(line.value, where, "")
        question = required_text(obj, "question", where)
        question_id = stable_id(question)
        answers = expect_object(require(obj, "answers", where), where, "answers")
        if not answers:
            raise where.error("answers", "must not be empty")
        metadata = _metadata(obj.get("metadata"), where)
        for system, value in answers.items():
            prefix = _answer_path(system)
            answer_id = f"{question_id}:{system}"
            # The answer id "<question_id>:<system>" has to fit its column.
            expect_text(system, where, prefix, limit=MAX_ID - len(question_id) - 1)
            if answer_id in seen:
                raise where.error(
                    prefix,
                    f"duplicate answer_id {quote(answer_id)}: the same question and system "
                    f"are on line {seen[answer_id]}",
                )
            seen[answer_id] = line.number
            records.append(
                budget.take(
                    _answer(
                        value, where, prefix, question_id, question, answer_id, system, metadata
                    )
                )
            )
    return ParsedFile(FORMAT, tuple(records))


def _answer(
    value: Any,
    where: Where,
    prefix: str,
    question_id: str,
    question: str,
    answer_id: str,
    system: str,
    metadata: dict[str, Any],
) -> AnswerRecord:
    obj = expect_object(value, where, prefix)
    answer = required_text(obj, "answer_string", where, prefix)
    claim_objs = _claim_objects(obj.get("claims"), where, join(prefix, "claims"))
    claims = []
    labels = []
    evidence: list[tuple[str, str]] = []
    for i, claim_value in enumerate(claim_objs):
        claim_prefix = join(join(prefix, "claims"), i)
        claim = expect_object(claim_value, where, claim_prefix)
        claims.append(required_text(claim, "claim_string", where, claim_prefix))
        raw = claim.get("evidence")
        items = [] if raw is None else expect_list(raw, where, join(claim_prefix, "evidence"))
        for j, item in enumerate(items):
            field = join(join(claim_prefix, "evidence"), j)
            evidence.append((field, expect_text(item, where, field, allow_empty=True)))
        label = _label(claim, where, claim_prefix, i)
        if label is not None:
            labels.append(label)
    return AnswerRecord(
        location=where.location,
        question_id=question_id,
        question=question,
        answer_id=answer_id,
        system=system,
        answer=answer,
        passages=_passages(obj.get("attribution"), evidence, where, prefix),
        claims=tuple(claims) or None,
        labels=tuple(labels),
        metadata=metadata,
    )


def _claim_objects(value: Any, where: Where, field: str) -> list[Any]:
    return [] if value is None else expect_list(value, where, field)


def _label(claim: dict[str, Any], where: Where, prefix: str, index: int) -> LabelRecord | None:
    support = claim.get("support")
    if support is None:
        return None
    support = expect_text(support, where, join(prefix, "support"))
    if support not in SUPPORT_JUDGMENTS:
        raise where.error(
            join(prefix, "support"),
            f"unknown value {quote(support)}: expected one of {', '.join(SUPPORT_JUDGMENTS)}",
        )
    worthiness = claim.get("worthiness")
    return LabelRecord(
        rater=RATER,
        claim_index=index,
        judgment=SUPPORT_JUDGMENTS[support],
        raw_label=support,
        verification_worthy=WORTHINESS.get(worthiness) if isinstance(worthiness, str) else None,
        note=optional_text(claim, "reason_missing_support", where, prefix),
    )


def _passages(
    attribution: Any, evidence: list[tuple[str, str]], where: Where, prefix: str
) -> tuple[PassageRecord, ...]:
    urls: dict[int, str] = {}
    if attribution is not None:
        entries = expect_list(attribution, where, join(prefix, "attribution"))
        for k, entry in enumerate(entries):
            field = join(join(prefix, "attribution"), k)
            text = expect_text(entry, where, field, allow_empty=True)
            if not text.strip():
                continue
            number, rest = _numbered(text, where, field)
            urls.setdefault(k + 1 if number is None else number, _first_token(rest))
    evidence_urls: dict[int, str] = {}
    excerpts: dict[int, list[str]] = {}
    for field, text in evidence:
        number, rest = _numbered(text, where, field)
        url = _first_token(rest)
        if number is None:
            number = min((n for n, known in urls.items() if known == url and url), default=None)
            if number is None:
                continue
        evidence_urls.setdefault(number, url)
        excerpt = rest[len(rest) - len(rest.lstrip()) + len(url) :].strip()
        if excerpt:
            excerpts.setdefault(number, []).append(excerpt)
    numbers = [n for n in (*urls, *evidence_urls) if n >= 1]
    return tuple(
        PassageRecord(
            title="",
            url=urls.get(n) or evidence_urls.get(n, ""),
            text=_merge_excerpts(excerpts.get(n, [])),
        )
        for n in range(1, max(numbers, default=0) + 1)
    )


def _numbered(text: str, where: Where, field: str) -> tuple[int | None, str]:
    match = _NUMBERED.match(text)
    if match is None:
        return None, text
    digits = match.group(1)
    # Checked on the digits first: int() refuses literals past 4,300 digits.
    if len(digits) > 4 or int(digits) > _MAX_CITATION:
        raise where.error(field, f"citation number [{digits[:8]}] is over {_MAX_CITATION}")
    return int(digits), match.group(2)


def _first_token(text: str) -> str:
    parts = text.split(None, 1)
    return parts[0] if parts else ""


def _merge_excerpts(excerpts: list[str]) -> str:
    distinct = list(dict.fromkeys(excerpts))
    kept = [
        text
        for i, text in enumerate(distinct)
        if not any(text in other for j, other in enumerate(distinct) if j != i)
    ]
    return "\n\n".join(kept)


def _metadata(value: Any, where: Where) -> dict[str, Any]:
    if value is None:
        return {}
    obj = expect_object(value, where, "metadata")
    return {
        key: obj[key]
        for key in _METADATA_KEYS
        if isinstance(obj.get(key), str) and is_clean_text(obj[key])
    }


def _answer_path(system: str) -> str:
    if _PLAIN_KEY.fullmatch(system):
        return f"answers.{system}"
    return f"answers[{json.dumps(system, ensure_ascii=False)}]"
