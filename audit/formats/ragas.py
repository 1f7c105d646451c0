"""Import of RAGAS evaluation samples (user_input, response, retrieved_contexts).

JSON Lines, a JSON list, or {"samples": [...]} as EvaluationDataset dumps it; [n] cites context n.
"""

from __future__ import annotations

from typing import Any

from audit.formats.reading import (
    JsonDocument,
    JsonFile,
    Where,
    expect_list,
    expect_object,
    expect_text,
    file_stem,
    join,
    optional_text,
    quote,
    require,
    required_text,
    stable_id,
    type_name,
)
from audit.formats.records import MAX_SYSTEM, AnswerRecord, Budget, ParsedFile, PassageRecord

FORMAT = "ragas"
DESCRIPTION = "a RAGAS dataset"


def looks_like(record: dict[str, Any]) -> bool:
    return "user_input" in record or ("response" in record and "retrieved_contexts" in record)


def looks_like_document(value: Any) -> bool:
    if isinstance(value, dict):
        value = value.get("samples")
    return (
        isinstance(value, list)
        and bool(value)
        and isinstance(value[0], dict)
        and looks_like(value[0])
    )


def parse(doc: JsonFile, filename: str, budget: Budget | None = None) -> ParsedFile:
    """Validate RAGAS single-turn samples and return one answer per sample.

    - question_id: a hash of user_input (RAGAS has no question id), so the same question
      answered by two systems groups together; answer_id is "".
    - system: the sample's "system" or "run" field when present, else the file's stem.
    - passages: retrieved_contexts in order, titled by retrieved_context_ids when given.
    - reference (the ground-truth answer), when present, is kept in metadata.
    - The same question twice for one system is an error: the two answers could not be
      told apart later.
    """
    budget = budget or Budget(filename)
    stem = file_stem(filename)
    records = []
    seen: dict[tuple[str, str], str] = {}
    for location, value in _items(doc, filename):
        where = Where(filename, location)
        obj = expect_object(value, where, "")
        question = required_text(obj, "user_input", where)
        system = _system(obj, where) or stem
        question_id = stable_id(question)
        if (question_id, system) in seen:
            raise where.error(
                "user_input",
                f"same question and system {quote(system)} as {seen[question_id, system]}",
            )
        seen[question_id, system] = location
        reference = optional_text(obj, "reference", where)
        records.append(
            budget.take(
                AnswerRecord(
                    location=location,
                    question_id=question_id,
                    question=question,
                    answer_id="",
                    system=system,
                    answer=required_text(obj, "response", where),
                    passages=_passages(obj, where),
                    claims=None,
                    metadata={"reference": reference} if reference.strip() else {},
                )
            )
        )
    return ParsedFile(FORMAT, tuple(records))


def _items(doc: JsonFile, filename: str) -> list[tuple[str, Any]]:
    if not isinstance(doc, JsonDocument):
        return [(f"line {line.number}", line.value) for line in doc]
    value = doc.value
    if isinstance(value, list):
        return [(f"[{i}]", item) for i, item in enumerate(value)]
    if isinstance(value, dict) and "samples" in value:
        samples = expect_list(value["samples"], Where(filename, ""), "samples")
        return [(f"samples[{i}]", item) for i, item in enumerate(samples)]
    return [(f"line {doc.first_line}", value)]


def _system(obj: dict[str, Any], where: Where) -> str:
    for key in ("system", "run"):
        if obj.get(key) is not None:
            return expect_text(obj[key], where, key, limit=MAX_SYSTEM)
    return ""


def _passages(obj: dict[str, Any], where: Where) -> tuple[PassageRecord, ...]:
    contexts = expect_list(require(obj, "retrieved_contexts", where), where, "retrieved_contexts")
    texts = [
        expect_text(item, where, join("retrieved_contexts", i)) for i, item in enumerate(contexts)
    ]
    ids = obj.get("retrieved_context_ids")
    if ids is None:
        titles = [""] * len(texts)
    else:
        ids = expect_list(ids, where, "retrieved_context_ids")
        if len(ids) != len(texts):
            raise where.error(
                "retrieved_context_ids",
                f"has {len(ids)} ids for {len(texts)} retrieved_contexts",
            )
        titles = [
            _context_id(item, where, join("retrieved_context_ids", i)) for i, item in enumerate(ids)
        ]
    return tuple(PassageRecord(title, "", text) for title, text in zip(titles, texts, strict=True))


def _context_id(value: Any, where: Where, field: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise where.error(field, f"expected a string or a number, got {type_name(value)}")
    return expect_text(value, where, field)
