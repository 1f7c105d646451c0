"""Import of Citeaudit's own JSON Lines export (answers with their passages, claims with their
check, sheets, rater labels and gold), so a reviewed set can move to another database.

export_jsonl writes version 2; version 1 files, exported before it, are still read. README.md
("The citeaudit JSONL export") documents both with examples.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from audit import judgments
from audit.formats import labelled
from audit.formats.reading import (
    JsonFile,
    Where,
    as_lines,
    check_clean_json,
    expect_list,
    expect_object,
    expect_text,
    join,
    quote,
    require,
    type_name,
)
from audit.formats.records import (
    MAX_ID,
    MAX_RAW_LABEL,
    AnswerRecord,
    Budget,
    ParsedFile,
    PassageRecord,
)
from audit.judgments import JUDGMENT_CODES

FORMAT = "citeaudit"
DESCRIPTION = "a citeaudit export (JSONL)"
VERSION = 2
# Version 1: one line per claim, each repeating its question, answer and passages. Version 2:
# an answer record with the question, answer and passages once, then its claim records.
VERSIONS = (1, 2)
ANSWER_RECORD = "answer"
CLAIM_RECORD = "claim"
_RECORDS = (ANSWER_RECORD, CLAIM_RECORD)

# A claim and what was judged of it, as both versions write them.
_CLAIM_PART = (
    "claim",
    "assigned",
    "machine_check",
    "sheets",
    "rater_labels",
    "gold_source",
    "gold",
)
_V1_LINE_FIELDS = ("citeaudit", "question", "answer", "passages", *_CLAIM_PART)
_ANSWER_RECORD_FIELDS = ("citeaudit", "record", "question", "answer", "passages")
# Written since suggestions came (optional, so older files read); read and left aside: a
# set's sources of suggestions are its own.
_CLAIM_RECORD_FIELDS = ("citeaudit", "record", "answer_hash", *_CLAIM_PART, "suggestions")
_QUESTION_FIELDS = ("db_id", "id", "text")
_ANSWER_FIELDS = ("db_id", "id", "system", "text", "is_partial", "content_hash", "metadata")
_PASSAGE_FIELDS = ("db_id", "position", "title", "url", "text", "is_cited")
_CLAIM_FIELDS = (
    "db_id",
    "order",
    "parent_order",
    "text",
    "start",
    "end",
    "location",
    "citations",
    "cited_unknown",
    "is_uncited",
    "answers_question",
    "split_by",
    "split_at",
)
_CHECK_FIELDS = (
    "matcher_version",
    "label",
    "best_score",
    "highlights",
    "numbers",
    "wrong_citation",
    "computed_at",
)
_SHEET_FIELDS = (
    "db_id",
    "reviewer",
    "status",
    "answer_statement",
    "cited_urls",
    *judgments.FIELDS,
    "notes",
    "active_seconds",
    "version",
    "created_at",
    "updated_at",
    "submitted_at",
)
# As written: gold's source right after its judgment.
_GOLD_FIELDS = (
    "db_id",
    "judgment",
    "source",
    *(name for name in judgments.FIELDS if name != "judgment"),
    "from_sheet",
    "sheets",
    "reason",
    "note",
    "lead",
    "version",
    "created_at",
    "updated_at",
)
_LABEL_FIELDS = ("rater", "kind", "judgment", "raw_label", "verification_worthy", "note")
# Fields a file may leave out: the database id, and judgment flags added after it was
# exported (they take their default), among them "answers_question", which a claim also
# carries (a lead's mark).
_OPTIONAL = frozenset({"db_id", "suggestions", *(flag.name for flag in judgments.FLAGS[1:])})

# The database's column limits: a longer value is refused here rather than cut there.
_MAX_ID = MAX_ID
_MAX_USERNAME = 150
_MAX_RAW_LABEL = MAX_RAW_LABEL
_MAX_MATCHER_VERSION = 40
_MAX_INT = 2**31 - 1
_HASH = re.compile(r"[0-9a-f]{64}")


def looks_like(record: dict[str, Any]) -> bool:
    return "citeaudit" in record


@dataclass
class _Group:
    """The lines read so far of one answer."""

    where: Where  # the answer's first line
    first_line: int
    last_line: int
    raw: dict[str, Any]  # the question, answer and passages, as parsed JSON
    answer: labelled.Answer
    claims: list[tuple[labelled.Claim | None, Where]]


@dataclass
class _Reader:
    """What parse() has read so far: the answers, and what later lines are checked against."""

    budget: Budget
    groups: list[_Group] = field(default_factory=list)
    # content hash -> (first line, last line) of every answer read
    seen: dict[str, tuple[int, int]] = field(default_factory=dict)
    questions: dict[str, tuple[str, int]] = field(default_factory=dict)
    version: tuple[int, int] | None = None  # (version, line) of the file's first line


def parse(doc: JsonFile, filename: str, budget: Budget | None = None) -> ParsedFile:
    """Validate a citeaudit export, version 1 or 2, and return its answers with their claims
    and review.

    Every line is checked against the schema in docs/reference.md; an answer's lines must follow one
    another (version 1: agree on the answer's fields; version 2: claim records right after
    their answer record). db_id fields are read and ignored: they are the exporting
    database's keys.
    """
    reader = _Reader(budget or Budget(filename))
    for line in as_lines(doc, filename):
        where = Where(filename, f"line {line.number}")
        obj = expect_object(line.value, where, "")
        version = _version(obj, where, reader, line.number)
        if version == 1:
            _v1_line(obj, where, reader, line.number)
        elif require(obj, "record", where) == ANSWER_RECORD:
            _refuse_unknown(obj, _ANSWER_RECORD_FIELDS, where, "")
            raw = {key: obj[key] for key in ("question", "answer", "passages")}
            _start_answer(raw, where, reader, line.number)
        else:
            _v2_claim(obj, where, reader, line.number)
    return ParsedFile(FORMAT, tuple(_record(group) for group in reader.groups))


def _version(obj: dict[str, Any], where: Where, reader: _Reader, number: int) -> int:
    version = require(obj, "citeaudit", where)
    if version not in VERSIONS or isinstance(version, bool):
        expected = " or ".join(map(str, VERSIONS))
        raise where.error("citeaudit", f"unsupported version {version!r} (expected {expected})")
    if reader.version is None:
        reader.version = (version, number)
    elif reader.version[0] != version:
        first, at = reader.version
        raise where.error(
            "citeaudit", f"version {version} in a file whose line {at} is version {first}"
        )
    return version


def _v1_line(obj: dict[str, Any], where: Where, reader: _Reader, number: int) -> None:
    """A version 1 line: the claim with its answer, which the answer's other lines repeat."""
    _refuse_unknown(obj, _V1_LINE_FIELDS, where, "")
    raw = {key: require(obj, key, where) for key in ("question", "answer", "passages")}
    group = reader.groups[-1] if reader.groups else None
    if group is not None and group.answer.content_hash == _content_hash(raw["answer"], where):
        _same_answer(raw, group, where)
        group.last_line = number
    else:
        group = _start_answer(raw, where, reader, number)
    claim = _claim(obj, where, group.answer)
    reader.budget.add_claims(claim is not None, where.location)
    group.claims.append((claim, where))


def _v2_claim(obj: dict[str, Any], where: Where, reader: _Reader, number: int) -> None:
    record = obj["record"]
    if record != CLAIM_RECORD:
        shown = quote(record) if isinstance(record, str) else type_name(record)
        listed = ", ".join(quote(r) for r in _RECORDS)
        raise where.error("record", f"unknown value {shown}: expected one of {listed}")
    _refuse_unknown(obj, _CLAIM_RECORD_FIELDS, where, "")
    for i, item in enumerate(expect_list(obj.get("suggestions", []), where, "suggestions")):
        expect_object(item, where, f"suggestions[{i}]")
    answer_hash = expect_text(obj["answer_hash"], where, "answer_hash")
    group = reader.groups[-1] if reader.groups else None
    if group is None or group.answer.content_hash != answer_hash:
        follows = "no answer record" if group is None else f"the answer on {group.where.location}"
        raise where.error(
            "answer_hash",
            f"a claim record follows its answer's record, and this one follows {follows}",
        )
    if obj["claim"] is None:
        raise where.error(
            "claim", "expected an object, got null (an answer without claims has no claim records)"
        )
    claim = _claim(obj, where, group.answer)
    reader.budget.add_claims(True, where.location)
    group.claims.append((claim, where))
    group.last_line = number


def _start_answer(raw: dict[str, Any], where: Where, reader: _Reader, number: int) -> _Group:
    """A new answer: refused when the file already had it, or gave its question another text."""
    content_hash = _content_hash(raw["answer"], where)
    if content_hash in reader.seen:
        first, last = reader.seen[content_hash]
        raise where.error(
            "answer.content_hash",
            f"this answer's lines already ended ({_lines(first, last)}); "
            "keep the lines of an answer together",
        )
    if reader.groups:
        done = reader.groups[-1]
        reader.seen[done.answer.content_hash] = (done.first_line, done.last_line)
    reader.budget.add_answer(where.location)
    group = _Group(where, number, number, raw, _answer(raw, where), [])
    reader.groups.append(group)
    known = reader.questions.setdefault(group.answer.question_id, (group.answer.question, number))
    if known[0] != group.answer.question:
        raise where.error(
            "question.text",
            f"question id {quote(group.answer.question_id)} has a different text "
            f"on line {known[1]}",
        )
    return group


def _lines(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _content_hash(value: Any, where: Where) -> str:
    answer = expect_object(value, where, "answer")
    content_hash = expect_text(
        require(answer, "content_hash", where, "answer"), where, "answer.content_hash"
    )
    if not _HASH.fullmatch(content_hash):
        raise where.error("answer.content_hash", "expected 64 lowercase hex digits")
    return content_hash


def _same_answer(raw: dict[str, Any], group: _Group, where: Where) -> None:
    for key, value in raw.items():
        first = group.raw[key]
        if value == first:
            continue
        field = key
        if isinstance(value, dict) and isinstance(first, dict):
            field = join(key, next(k for k in (*first, *value) if first.get(k) != value.get(k)))
        raise where.error(
            field, f"differs from {group.where.location}, the first line of this answer"
        )


def _record(group: _Group) -> AnswerRecord:
    answer, where = group.answer, group.where
    claims = [claim for claim, _ in group.claims]
    if None in claims and len(claims) > 1:
        line = group.claims[claims.index(None)][1]
        raise line.error("claim", "null (an answer without claims) on an answer that has claims")
    present = [c for c in claims if c is not None]
    _check_claim_tree(group)
    answer = replace(answer, claims=tuple(sorted(present, key=lambda c: c.key)))
    return AnswerRecord(
        location=where.location,
        question_id=answer.question_id,
        question=answer.question,
        answer_id=answer.answer_id,
        system=answer.system,
        answer=answer.text,
        passages=tuple(PassageRecord(p.title, p.url, p.text) for p in answer.passages),
        claims=tuple(c.text for c in answer.claims if c.parent_order is None),
        metadata=answer.metadata,
        labelled=answer,
    )


def _check_claim_tree(group: _Group) -> None:
    seen: dict[tuple[int | None, int], Where] = {}
    top = {c.order for c, _ in group.claims if c is not None and c.parent_order is None}
    for claim, where in group.claims:
        if claim is None:
            continue
        key = (claim.parent_order, claim.order)
        if key in seen:
            raise where.error(
                "claim.order",
                f"claim order {claim.order} appears twice in this answer "
                f"(also on {seen[key].location})",
            )
        seen[key] = where
        if claim.parent_order is not None and claim.parent_order not in top:
            raise where.error(
                "claim.parent_order",
                f"the answer has no top-level claim with order {claim.parent_order}",
            )


def _answer(raw: dict[str, Any], where: Where) -> labelled.Answer:
    question = expect_object(raw["question"], where, "question")
    _refuse_unknown(question, _QUESTION_FIELDS, where, "question")
    answer = expect_object(raw["answer"], where, "answer")
    _refuse_unknown(answer, _ANSWER_FIELDS, where, "answer")
    text = _text(answer, "text", where, "answer")
    metadata = expect_object(require(answer, "metadata", where, "answer"), where, "answer.metadata")
    check_clean_json(metadata, where, "answer.metadata")
    passages = tuple(
        _passage(item, i, where)
        for i, item in enumerate(expect_list(raw["passages"], where, "passages"))
    )
    return labelled.Answer(
        question_id=_text(question, "id", where, "question", limit=_MAX_ID),
        question=_text(question, "text", where, "question"),
        answer_id=_text(answer, "id", where, "answer", allow_empty=True, limit=_MAX_ID),
        system=_text(answer, "system", where, "answer", limit=_MAX_ID),
        text=text,
        is_partial=_bool(answer, "is_partial", where, "answer"),
        content_hash=answer["content_hash"],
        metadata=metadata,
        passages=passages,
        claims=(),
        db_id=_db_id(answer, where, "answer"),
        question_db_id=_db_id(question, where, "question"),
    )


def _passage(value: Any, index: int, where: Where) -> labelled.Passage:
    prefix = join("passages", index)
    obj = expect_object(value, where, prefix)
    _refuse_unknown(obj, _PASSAGE_FIELDS, where, prefix)
    position = _int(obj, "position", where, prefix)
    if position != index + 1:
        raise where.error(join(prefix, "position"), f"expected {index + 1}, got {position}")
    return labelled.Passage(
        position=position,
        title=_text(obj, "title", where, prefix, allow_empty=True),
        url=_text(obj, "url", where, prefix, allow_empty=True),
        text=_text(obj, "text", where, prefix, allow_empty=True),
        is_cited=_bool(obj, "is_cited", where, prefix),
        db_id=_db_id(obj, where, prefix),
    )


def _claim(obj: dict[str, Any], where: Where, answer: labelled.Answer) -> labelled.Claim | None:
    value = require(obj, "claim", where)
    fields = (
        "assigned",
        "machine_check",
        "sheets",
        "rater_labels",
        "gold_source",
        "gold",
    )
    if value is None:
        for key in fields:
            if obj.get(key) not in (None, [], labelled.UNRESOLVED):
                raise where.error(key, "must be empty on a line whose claim is null")
        return None
    claim = expect_object(value, where, "claim")
    _refuse_unknown(claim, _CLAIM_FIELDS, where, "claim")
    n_passages = len(answer.passages)
    text = _text(claim, "text", where, "claim")
    start = _int(claim, "start", where, "claim")
    end = _int(claim, "end", where, "claim")
    if not start <= end <= len(answer.text):
        raise where.error(
            "claim.end",
            f"span {start}-{end} does not fit the answer ({len(answer.text)} characters)",
        )
    parent_order = _optional_int(claim, "parent_order", where, "claim")
    location = _choice(claim, "location", labelled.LOCATIONS, where, "claim")
    if (parent_order is not None) != (location == labelled.ATOMIC):
        raise where.error(
            "claim.location",
            "is atomic exactly when parent_order is given "
            f"(got {quote(location)} with parent_order {parent_order})",
        )
    citations = _positions(claim, "citations", where, "claim", 1, n_passages)
    cited_unknown = _unknown_positions(claim, where, n_passages)
    sheets = tuple(
        _sheet(item, join("sheets", i), where, n_passages)
        for i, item in enumerate(expect_list(require(obj, "sheets", where), where, "sheets"))
    )
    reviewers = [s.reviewer for s in sheets]
    _refuse_repeats(reviewers, "sheets", "reviewer", where)
    labels = tuple(
        _rater_label(item, join("rater_labels", i), where)
        for i, item in enumerate(
            expect_list(require(obj, "rater_labels", where), where, "rater_labels")
        )
    )
    _refuse_repeats([label.rater for label in labels], "rater_labels", "rater", where)
    for i, sheet in enumerate(sheets):
        _assertion_offsets(sheet.unsupported_assertions, sheet.answer_statement, where, i)
    gold = _gold(obj, where, n_passages, set(reviewers))
    assigned = _usernames(require(obj, "assigned", where), where, "assigned")
    _refuse_repeats(list(assigned), "assigned", "", where)
    return labelled.Claim(
        order=_int(claim, "order", where, "claim"),
        parent_order=parent_order,
        text=text,
        start=start,
        end=end,
        location=location,
        citations=citations,
        cited_unknown=cited_unknown,
        is_uncited=_bool(claim, "is_uncited", where, "claim"),
        # A lead's mark, added after version 1: false when the file has none.
        answers_question=_bool(claim, "answers_question", where, "claim")
        if "answers_question" in claim
        else False,
        split_by=_optional_username(claim, "split_by", where, "claim"),
        split_at=_optional_datetime(claim, "split_at", where, "claim"),
        assigned=assigned,
        check=_check(require(obj, "machine_check", where), where),
        sheets=sheets,
        rater_labels=labels,
        gold=gold,
        db_id=_db_id(claim, where, "claim"),
    )


def _check(value: Any, where: Where) -> labelled.MachineCheck | None:
    if value is None:
        return None
    prefix = "machine_check"
    obj = expect_object(value, where, prefix)
    _refuse_unknown(obj, _CHECK_FIELDS, where, prefix)
    score = require(obj, "best_score", where, prefix)
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise where.error(join(prefix, "best_score"), f"expected a number, got {type_name(score)}")
    wrong = require(obj, "wrong_citation", where, prefix)
    if wrong is not None:
        wrong = expect_object(wrong, where, join(prefix, "wrong_citation"))
    for key in ("highlights", "numbers", "wrong_citation"):
        check_clean_json(obj[key], where, join(prefix, key))
    return labelled.MachineCheck(
        matcher_version=_text(obj, "matcher_version", where, prefix, limit=_MAX_MATCHER_VERSION),
        label=_choice(obj, "label", labelled.CHECK_LABELS, where, prefix),
        best_score=float(score),
        highlights=expect_list(
            require(obj, "highlights", where, prefix), where, join(prefix, "highlights")
        ),
        numbers=expect_list(require(obj, "numbers", where, prefix), where, join(prefix, "numbers")),
        wrong_citation=wrong,
        computed_at=_optional_datetime(obj, "computed_at", where, prefix),
    )


def _sheet(value: Any, prefix: str, where: Where, n_passages: int) -> labelled.Sheet:
    obj = expect_object(value, where, prefix)
    _refuse_unknown(obj, _SHEET_FIELDS, where, prefix)
    return labelled.Sheet(
        reviewer=_username(require(obj, "reviewer", where, prefix), where, f"{prefix}.reviewer"),
        status=_choice(obj, "status", labelled.SHEET_STATUSES, where, prefix),
        answer_statement=_text(obj, "answer_statement", where, prefix, allow_empty=True),
        cited_urls=list(_texts(obj, "cited_urls", where, prefix)),
        **_judged(obj, where, prefix, n_passages, allow_empty=True),
        notes=_text(obj, "notes", where, prefix, allow_empty=True),
        active_seconds=_int(obj, "active_seconds", where, prefix),
        version=_int(obj, "version", where, prefix, minimum=1),
        created_at=_datetime(obj, "created_at", where, prefix),
        updated_at=_datetime(obj, "updated_at", where, prefix),
        submitted_at=_optional_datetime(obj, "submitted_at", where, prefix),
        db_id=_db_id(obj, where, prefix),
    )


def _judged(
    obj: dict[str, Any], where: Where, prefix: str, n_passages: int, *, allow_empty: bool
) -> dict[str, Any]:
    """A sheet's or a gold record's judgment fields (audit.judgments.FIELDS), read in order."""
    return {
        "judgment": _judgment(obj, where, prefix, allow_empty=allow_empty),
        "wrong_citation_passage": _wrong_citation(obj, where, prefix, n_passages),
        "evidence": _evidence(obj, where, prefix, n_passages),
        "unsupported_assertions": _assertions(obj, where, prefix),
        # A flag added after a file was exported is missing from it: it takes its default.
        **{
            flag.name: _bool(obj, flag.name, where, prefix) if flag.name in obj else flag.default
            for flag in judgments.FLAGS
        },
    }


def _gold(
    obj: dict[str, Any], where: Where, n_passages: int, reviewers: set[str]
) -> labelled.Gold | None:
    status = _choice(obj, "gold_source", labelled.GOLD_STATUSES, where, "")
    value = require(obj, "gold", where)
    if value is None:
        if status != labelled.UNRESOLVED:
            raise where.error("gold_source", f"is {quote(status)} but gold is null")
        return None
    prefix = "gold"
    gold = expect_object(value, where, prefix)
    _refuse_unknown(gold, _GOLD_FIELDS, where, prefix)
    source = _choice(gold, "source", labelled.GOLD_SOURCES, where, prefix)
    expected = labelled.UNANIMOUS if source == labelled.UNANIMOUS else labelled.ADJUDICATED
    if status != expected:
        raise where.error(
            "gold_source", f"expected {quote(expected)} for gold.source {quote(source)}"
        )
    from_sheet = _optional_username(gold, "from_sheet", where, prefix)
    if from_sheet is not None and from_sheet not in reviewers:
        raise where.error(
            join(prefix, "from_sheet"), f"no sheet of this claim by {quote(from_sheet)}"
        )
    sheets = _usernames(require(gold, "sheets", where, prefix), where, join(prefix, "sheets"))
    for i, name in enumerate(sheets):
        if name not in reviewers:
            raise where.error(
                join(join(prefix, "sheets"), i), f"no sheet of this claim by {quote(name)}"
            )
    _refuse_repeats(list(sheets), "gold.sheets", "", where)
    return labelled.Gold(
        **_judged(gold, where, prefix, n_passages, allow_empty=False),
        source=source,
        from_sheet=from_sheet,
        sheets=sheets,
        reason=_choice(gold, "reason", labelled.GOLD_REASONS, where, prefix),
        note=_text(gold, "note", where, prefix, allow_empty=True),
        lead=_optional_username(gold, "lead", where, prefix),
        version=_int(gold, "version", where, prefix, minimum=1),
        created_at=_datetime(gold, "created_at", where, prefix),
        updated_at=_datetime(gold, "updated_at", where, prefix),
        db_id=_db_id(gold, where, prefix),
    )


def _rater_label(value: Any, prefix: str, where: Where) -> labelled.RaterLabel:
    obj = expect_object(value, where, prefix)
    _refuse_unknown(obj, _LABEL_FIELDS, where, prefix)
    worthy = require(obj, "verification_worthy", where, prefix)
    if worthy is not None and not isinstance(worthy, bool):
        raise where.error(
            join(prefix, "verification_worthy"),
            f"expected a boolean or null, got {type_name(worthy)}",
        )
    return labelled.RaterLabel(
        rater=_text(obj, "rater", where, prefix, limit=_MAX_ID),
        kind=_choice(obj, "kind", labelled.RATER_KINDS, where, prefix),
        judgment=_judgment(obj, where, prefix, allow_empty=True),
        raw_label=_text(obj, "raw_label", where, prefix, allow_empty=True, limit=_MAX_RAW_LABEL),
        verification_worthy=worthy,
        note=_text(obj, "note", where, prefix, allow_empty=True),
    )


# ------------------------------------------------------------------------ field readers


def _text(
    obj: dict[str, Any],
    key: str,
    where: Where,
    prefix: str,
    *,
    allow_empty: bool = False,
    limit: int | None = None,
) -> str:
    field = join(prefix, key)
    text = expect_text(require(obj, key, where, prefix), where, field, allow_empty=allow_empty)
    if limit is not None and len(text) > limit:
        raise where.error(field, f"is {len(text)} characters long; at most {limit} fit")
    return text


def _texts(obj: dict[str, Any], key: str, where: Where, prefix: str) -> tuple[str, ...]:
    field = join(prefix, key)
    items = expect_list(require(obj, key, where, prefix), where, field)
    return tuple(
        expect_text(item, where, join(field, i), allow_empty=True) for i, item in enumerate(items)
    )


def _bool(obj: dict[str, Any], key: str, where: Where, prefix: str) -> bool:
    value = require(obj, key, where, prefix)
    if not isinstance(value, bool):
        raise where.error(join(prefix, key), f"expected a boolean, got {type_name(value)}")
    return value


def _whole(value: Any, where: Where, field: str, minimum: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(field, f"expected a whole number, got {type_name(value)}")
    if not minimum <= value <= maximum:
        raise where.error(
            field, f"expected a whole number from {minimum} to {maximum}, got {value}"
        )
    return value


def _int(obj: dict[str, Any], key: str, where: Where, prefix: str, *, minimum: int = 0) -> int:
    return _whole(require(obj, key, where, prefix), where, join(prefix, key), minimum, _MAX_INT)


def _optional_int(obj: dict[str, Any], key: str, where: Where, prefix: str) -> int | None:
    value = require(obj, key, where, prefix)
    return None if value is None else _whole(value, where, join(prefix, key), 0, _MAX_INT)


def _db_id(obj: dict[str, Any], where: Where, prefix: str) -> int | None:
    value = obj.get("db_id")
    return None if value is None else _whole(value, where, join(prefix, "db_id"), 1, 2**63 - 1)


def _positions(
    obj: dict[str, Any], key: str, where: Where, prefix: str, low: int, high: int
) -> tuple[int, ...]:
    field = join(prefix, key)
    items = expect_list(require(obj, key, where, prefix), where, field)
    if low > high and items:
        raise where.error(field, "must be empty: the answer has no passages")
    numbers = tuple(_whole(item, where, join(field, i), low, high) for i, item in enumerate(items))
    _refuse_repeats(list(numbers), field, "", where)
    return numbers


def _unknown_positions(claim: dict[str, Any], where: Where, n_passages: int) -> tuple[int, ...]:
    """A claim's cited_unknown: marker numbers no passage has, 0 or past the last one."""
    field = join("claim", "cited_unknown")
    items = expect_list(require(claim, "cited_unknown", where, "claim"), where, field)
    numbers = []
    for i, item in enumerate(items):
        if isinstance(item, int) and not isinstance(item, bool) and 0 < item <= n_passages:
            raise where.error(
                join(field, i),
                f"expected 0 or a whole number from {n_passages + 1} to {_MAX_INT}, got {item}",
            )
        numbers.append(_whole(item, where, join(field, i), 0, _MAX_INT))
    _refuse_repeats(numbers, field, "", where)
    return tuple(numbers)


def _passage_ref(
    obj: dict[str, Any], key: str, where: Where, prefix: str, n_passages: int
) -> int | None:
    value = require(obj, key, where, prefix)
    if value is None:
        return None
    if n_passages == 0:
        raise where.error(join(prefix, key), "must be null: the answer has no passages")
    return _whole(value, where, join(prefix, key), 1, n_passages)


def _wrong_citation(obj: dict[str, Any], where: Where, prefix: str, n_passages: int) -> int | None:
    return _passage_ref(obj, "wrong_citation_passage", where, prefix, n_passages)


_ASSERTION_FIELDS = ("text", "start", "end", "note")


def _assertions(obj: dict[str, Any], where: Where, prefix: str) -> list[dict[str, Any]]:
    """Unsupported assertions: items {text, start, end, note} (start and end null for free
    text), or plain strings as exports before spans wrote them (read as free text)."""
    field = join(prefix, "unsupported_assertions")
    items = expect_list(require(obj, "unsupported_assertions", where, prefix), where, field)
    kept = []
    for i, value in enumerate(items):
        place = join(field, i)
        if isinstance(value, str):
            kept.append({"text": value, "start": None, "end": None, "note": ""})
            continue
        item = expect_object(value, where, place)
        _refuse_unknown(item, _ASSERTION_FIELDS, where, place)
        start, end = (
            _optional_int(item, "start", where, place),
            _optional_int(item, "end", where, place),
        )
        if (start is None) != (end is None) or (start is not None and not start < end):
            raise where.error(
                join(place, "end"), f"start and end are both null or a span, got {start}, {end}"
            )
        kept.append(
            {
                "text": _text(item, "text", where, place, allow_empty=start is None),
                "start": start,
                "end": end,
                "note": _text(item, "note", where, place, allow_empty=True),
            }
        )
    return kept


def _assertion_offsets(
    items: list[dict[str, Any]], statement: str, where: Where, sheet: int
) -> None:
    """A sheet's spans must slice its own snapshot of the claim to their text."""
    for i, item in enumerate(items):
        if item["start"] is not None and statement[item["start"] : item["end"]] != item["text"]:
            raise where.error(
                f"sheets[{sheet}].unsupported_assertions[{i}].text",
                f"does not match answer_statement[{item['start']}:{item['end']}]",
            )


def _evidence(
    obj: dict[str, Any], where: Where, prefix: str, n_passages: int
) -> list[dict[str, Any]]:
    field = join(prefix, "evidence")
    items = expect_list(require(obj, "evidence", where, prefix), where, field)
    for i, item in enumerate(items):
        span = expect_object(item, where, join(field, i))
        check_clean_json(span, where, join(field, i))
        if span.get("passage") is not None:
            _passage_ref(span, "passage", where, join(field, i), n_passages)
    return items


def _choice(
    obj: dict[str, Any], key: str, choices: tuple[str, ...], where: Where, prefix: str
) -> str:
    value = require(obj, key, where, prefix)
    if value not in choices or not isinstance(value, str):
        shown = quote(value) if isinstance(value, str) else type_name(value)
        listed = ", ".join(quote(c) for c in choices)
        raise where.error(join(prefix, key), f"unknown value {shown}: expected one of {listed}")
    return value


def _judgment(obj: dict[str, Any], where: Where, prefix: str, *, allow_empty: bool) -> str:
    value = _text(obj, "judgment", where, prefix, allow_empty=allow_empty)
    if value and value not in JUDGMENT_CODES:
        codes = ", ".join(sorted(JUDGMENT_CODES))
        raise where.error(
            join(prefix, "judgment"), f"unknown judgment {quote(value)}: expected one of {codes}"
        )
    return value


def _username(value: Any, where: Where, field: str) -> str:
    name = expect_text(value, where, field)
    if len(name) > _MAX_USERNAME:
        raise where.error(field, f"is {len(name)} characters long; at most {_MAX_USERNAME} fit")
    return name


def _usernames(value: Any, where: Where, field: str) -> tuple[str, ...]:
    items = expect_list(value, where, field)
    return tuple(_username(item, where, join(field, i)) for i, item in enumerate(items))


def _optional_username(obj: dict[str, Any], key: str, where: Where, prefix: str) -> str | None:
    value = require(obj, key, where, prefix)
    return None if value is None else _username(value, where, join(prefix, key))


def _datetime(obj: dict[str, Any], key: str, where: Where, prefix: str) -> datetime:
    field = join(prefix, key)
    text = expect_text(require(obj, key, where, prefix), where, field)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise where.error(field, f"expected an ISO 8601 timestamp, got {quote(text)}") from None
    if moment.utcoffset() is None:
        raise where.error(field, f"timestamp {quote(text)} needs a UTC offset")
    return moment


def _optional_datetime(obj: dict[str, Any], key: str, where: Where, prefix: str) -> datetime | None:
    return None if require(obj, key, where, prefix) is None else _datetime(obj, key, where, prefix)


def _refuse_repeats(values: list[Any], field: str, key: str, where: Where) -> None:
    seen: dict[Any, int] = {}
    for i, value in enumerate(values):
        if value in seen:
            place = join(join(field, i), key) if key else join(field, i)
            shown = quote(value) if isinstance(value, str) else str(value)
            raise where.error(place, f"{shown} repeats {join(field, seen[value])}")
        seen[value] = i


def _refuse_unknown(obj: dict[str, Any], known: tuple[str, ...], where: Where, prefix: str) -> None:
    for key in obj:
        if key not in known:
            raise where.error(
                join(prefix, key), f"unknown field (known fields: {', '.join(known)})"
            )
    for key in known:
        if key not in _OPTIONAL and key not in obj:
            raise where.error(join(prefix, key), "required field is missing")
