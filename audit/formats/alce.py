"""Import of ALCE benchmark result files (github.com/princeton-nlp/ALCE, run.py output).

A JSON object {"args": {...}, "data": [{"question", "docs", "output", ...}]}; [n] cites docs[n-1].
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
    is_clean_text,
    join,
    optional_text,
    quote,
    require,
    required_text,
    stable_id,
    type_name,
)
from audit.formats.records import MAX_ID, AnswerRecord, Budget, ParsedFile, PassageRecord

FORMAT = "alce"
DESCRIPTION = "an ALCE result file"

# Run settings worth keeping next to each answer; the rest of args (paths, decoding
# knobs, API flags) says nothing about the answer itself.
_KEPT_ARGS = ("dataset_name", "tag", "shot", "ndoc", "use_shorter", "config")
# ASQA/ELI5 gold answers are a few hundred characters; anything far longer is not a
# "small extra" and stays in the source file.
_MAX_GOLD_CHARS = 2000
# Sampled outputs get answer ids "<question_id>#<k>", which must fit the id column too.
_MAX_QUESTION_ID = MAX_ID - len("#999")


def looks_like_document(value: Any) -> bool:
    return isinstance(value, dict) and "data" in value


def looks_like(record: dict[str, Any]) -> bool:
    """One ALCE data item, for files holding the items without the args wrapper."""
    return "docs" in record and "output" in record


def parse(doc: JsonFile, filename: str, budget: Budget | None = None) -> ParsedFile:
    """Validate an ALCE result file and return one answer per data item (and sample).

    - system: args.model without its path ("meta-llama/Llama-2-7b" -> "Llama-2-7b"),
      followed by args.tag and "ndoc<N>" when present, since runs of one model differ by
      retriever and passage count; else the stem of args.config; else the file's stem.
    - question_id: the item's "id" or "sample_id"; else a hash of the question, so the same
      question in two result files groups together even when one run sampled a subset.
    - passages: docs in order (what run.py put in the prompt); text is "text", or "sent"
      for QA-extracted docs; "url" is kept when a doc carries one.
    - output: a string, or a list of strings when run with --num_samples > 1 (each sample
      becomes its own answer, answer_id "<question_id>#<k>").
    - The gold "claims"/"qa_pairs" fields describe the reference answer, not the output,
      so they are not used as the answer's claims.
    """
    budget = budget or Budget(filename)
    items, args = _items(doc, filename)
    system = _system(args, filename)
    kept_args = _kept_args(args)
    records = []
    seen: dict[str, str] = {}
    for location, value in items:
        where = Where(filename, location)
        obj = expect_object(value, where, "")
        question = required_text(obj, "question", where)
        question_id = _question_id(obj, where, question)
        if question_id in seen:
            raise where.error(
                "", f"duplicate question id {quote(question_id)} (also at {seen[question_id]})"
            )
        seen[question_id] = location
        passages = tuple(
            _passage(item, where, join("docs", i))
            for i, item in enumerate(expect_list(require(obj, "docs", where), where, "docs"))
        )
        outputs = _outputs(require(obj, "output", where), where)
        metadata: dict[str, Any] = dict(kept_args)
        gold = _small_gold(obj.get("answer"))
        if gold is not None:
            metadata["gold_answer"] = gold
        for k, output in enumerate(outputs, start=1):
            records.append(
                budget.take(
                    AnswerRecord(
                        location=location,
                        question_id=question_id,
                        question=question,
                        answer_id=f"{question_id}#{k}" if len(outputs) > 1 else "",
                        system=system,
                        answer=output,
                        passages=passages,
                        claims=None,
                        metadata=metadata,
                    )
                )
            )
    return ParsedFile(FORMAT, tuple(records))


def _items(doc: JsonFile, filename: str) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    if isinstance(doc, JsonDocument):
        value = doc.value
        if isinstance(value, list):
            return [(f"[{i}]", item) for i, item in enumerate(value)], {}
        root = expect_object(value, Where(filename, ""), "")
        if "data" not in root and looks_like(root):
            return [(f"line {doc.first_line}", root)], {}
        args = root.get("args")
        args = {} if args is None else expect_object(args, Where(filename, ""), "args")
        data = expect_list(require(root, "data", Where(filename, "")), Where(filename, ""), "data")
        return [(f"data[{i}]", item) for i, item in enumerate(data)], args
    # JSON Lines of bare data items: no args, so the file name labels the system.
    return [(f"line {line.number}", line.value) for line in doc], {}


def _system(args: dict[str, Any], filename: str) -> str:
    model = _clean_arg(args, "model")
    if model.strip("/ "):
        parts = [model.strip("/ ").rsplit("/", 1)[-1]]
        tag = _clean_arg(args, "tag")
        if tag.strip():
            parts.append(tag.strip())
        ndoc = args.get("ndoc")
        if isinstance(ndoc, int) and not isinstance(ndoc, bool):
            parts.append(f"ndoc{ndoc}")
        return " ".join(parts)
    config = _clean_arg(args, "config")
    if config.strip():
        return file_stem(config.strip())
    return file_stem(filename)


def _clean_arg(args: dict[str, Any], key: str) -> str:
    """A string run setting, or "" when absent or unusable as a label."""
    value = args.get(key)
    return value if isinstance(value, str) and is_clean_text(value) else ""


def _kept_args(args: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key in _KEPT_ARGS:
        value = args.get(key)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float) or isinstance(value, str) and is_clean_text(value):
            kept[key] = value
    return kept


def _question_id(obj: dict[str, Any], where: Where, question: str) -> str:
    for key in ("id", "sample_id"):
        value = obj.get(key)
        if value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            return expect_text(str(value), where, key, limit=_MAX_QUESTION_ID)
        return expect_text(value, where, key, limit=_MAX_QUESTION_ID)
    return stable_id(question)


def _passage(value: Any, where: Where, prefix: str) -> PassageRecord:
    obj = expect_object(value, where, prefix)
    key = "text" if "text" in obj or "sent" not in obj else "sent"
    url = optional_text(obj, "url", where, prefix)
    text = expect_text(require(obj, key, where, prefix), where, join(prefix, key), allow_empty=True)
    if not text.strip() and not url.strip():
        raise where.error(join(prefix, key), "must not be empty")
    return PassageRecord(optional_text(obj, "title", where, prefix), url, text)


def _outputs(value: Any, where: Where) -> list[str]:
    if isinstance(value, list):
        if not value:
            raise where.error("output", "must not be an empty list")
        return [expect_text(item, where, join("output", i)) for i, item in enumerate(value)]
    if not isinstance(value, str):
        raise where.error("output", f"expected a string or a list, got {type_name(value)}")
    return [expect_text(value, where, "output")]


def _small_gold(value: Any) -> str | list[str] | None:
    if isinstance(value, str) and len(value) <= _MAX_GOLD_CHARS and is_clean_text(value):
        return value
    if (
        isinstance(value, list)
        and all(isinstance(item, str) and is_clean_text(item) for item in value)
        and sum(len(item) for item in value) <= _MAX_GOLD_CHARS
    ):
        return list(value)
    return None
