"""Citeaudit's own import format: JSON Lines, one answer with its passages per line.

The schema is documented on parse() and in NATIVE.md; every line is validated.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from typing import Any, Protocol

from audit.formats.reading import (
    JsonFile,
    Where,
    as_lines,
    check_clean_json,
    expect_list,
    expect_object,
    expect_text,
    join,
    optional_text,
    quote,
    require,
    required_text,
    type_name,
)
from audit.formats.records import (
    MAX_ID,
    MAX_RATER,
    MAX_SYSTEM,
    AnswerRecord,
    Budget,
    LabelRecord,
    ParsedFile,
    PassageRecord,
)
from audit.judgments import JUDGMENT_CODES, JUDGMENTS

FORMAT = "native"
DESCRIPTION = "native JSONL"

_ANSWER_FIELDS = (
    "question_id",
    "question",
    "answer_id",
    "system",
    "answer",
    "passages",
    "claims",
    "labels",
    "metadata",
)
_PASSAGE_FIELDS = ("title", "url", "text")
_LABEL_FIELDS = ("rater", "claim", "judgment", "verification_worthy", "note")
_JUDGMENT_LIST = ", ".join(code for code, _ in JUDGMENTS)


def looks_like(record: dict[str, Any]) -> bool:
    return "question_id" in record or "passages" in record


def parse(doc: JsonFile, filename: str, budget: Budget | None = None) -> ParsedFile:
    """Validate a native JSON Lines file and return its answers.

    One JSON object per line; blank lines are skipped::

        {"question_id": "q1",
         "question": "When did the Berlin Wall fall?",
         "answer_id": "q1-gpt4o",
         "system": "gpt-4o rerank v3",
         "answer": "The wall fell on 9 November 1989 [1]. Crowds crossed that night [1][2].",
         "passages": [
           {"title": "Berlin Wall", "url": "https://en.wikipedia.org/wiki/Berlin_Wall",
            "text": "On 9 November 1989 ... the border crossings were opened."},
           {"title": "", "url": "https://example.org/paywalled", "text": ""}
         ],
         "claims": ["The wall fell on 9 November 1989 [1].", "Crowds crossed that night [1][2]."],
         "labels": [
           {"rater": "alice", "claim": 0, "judgment": "supported",
            "verification_worthy": true, "note": ""}
         ],
         "metadata": {"run": "2024-06-01"}}

    (shown over several lines here; in the file each answer is a single line).

    - question_id, question, system, answer: required, non-empty strings. The answer is
      kept exactly as given (no stripping): claim offsets are taken into it later.
    - answer_id: optional; answers without one are told apart by (question_id, system),
      so two answers to one question from one system need answer_ids. Ids are unique.
    - passages: required list, may be empty. Citation [n] in the answer refers to
      passages[n-1]. title and url are optional ("" when absent); text is required and may
      be "" only when url is given (a source that could not be fetched).
    - claims: optional non-empty list of strings; leave it out to have the answer split
      into claims automatically. Claims may keep their citation markers.
    - labels: optional list of existing judgments. claim is the 0-based claim index (into
      claims when given, else into the automatic split); judgment is one of supported,
      partially_supported, not_supported, contradicted, wrong_citation,
      source_inaccessible, unclear; verification_worthy is true, false or null; note is
      free text. One label per rater and claim.
    - metadata: optional object of small extras, kept with the answer.
    - Any other field is an error, so a misspelt optional field is not silently dropped.
    """
    return ParsedFile(FORMAT, tuple(iter_records(doc, filename, budget)))


def iter_records(
    doc: JsonFile, filename: str, budget: Budget | None = None
) -> Iterator[AnswerRecord]:
    """parse()'s answers one line at a time, with the same checks across lines."""
    checks = LineChecks(filename, budget)
    for line in as_lines(doc, filename):
        yield checks.take(read_answer(line.value, filename, line.number), line.number)


def read_answer(value: Any, filename: str, number: int) -> AnswerRecord:
    """One line's answer, checked on its own (what needs no other line): an import may run
    this in worker processes and LineChecks on their results in file order."""
    return _answer(value, Where(filename, f"line {number}"))


class LineFacts(Protocol):
    """What the checks across lines read of an answer (an AnswerRecord has them)."""

    @property
    def location(self) -> str: ...
    @property
    def question_id(self) -> str: ...
    @property
    def question(self) -> str: ...
    @property
    def answer_id(self) -> str: ...
    @property
    def system(self) -> str: ...
    @property
    def labels(self) -> tuple[LabelRecord, ...]: ...


class LineChecks:
    """What iter_records checks across lines (unique ids, one text per question_id, the
    budget), given each line's answer in file order.

    What it remembers of the lines before is kept in dicts, or on disk with `on_disk` (a
    streamed file, whose import keeps nothing per answer in memory: see SeenOnDisk).
    """

    def __init__(self, filename: str, budget: Budget | None = None, on_disk: bool = False) -> None:
        self.filename = filename
        self.budget = budget or Budget(filename)
        self.seen: SeenInMemory | SeenOnDisk = SeenOnDisk() if on_disk else SeenInMemory()

    def take(self, record: AnswerRecord, number: int) -> AnswerRecord:
        self.take_line(record, len(record.claims or ()), number)
        return record

    def take_line(self, record: LineFacts, claims: int, number: int) -> None:
        """take() of what the checks read of an answer (the import's worker processes send
        these, not the record) and the number of claims it gives."""
        where = Where(self.filename, record.location)
        if record.answer_id:
            first = self.seen.first(_ANSWER_ID, record.answer_id, number)
            if first is not None:
                raise where.error(
                    "answer_id",
                    f"duplicate answer_id {quote(record.answer_id)} (also on line {first[0]})",
                )
        else:
            # NUL is refused in every text, so it cannot join two pairs into one key.
            first = self.seen.first(_PAIR, f"{record.question_id}\0{record.system}", number)
            if first is not None:
                raise where.error(
                    "",
                    f"second answer to question_id {quote(record.question_id)} from system "
                    f"{quote(record.system)} (first on line {first[0]}); "
                    "give each answer an answer_id",
                )
        digest = hashlib.blake2b(record.question.encode("utf-8"), digest_size=16).digest()
        first = self.seen.first(_QUESTION, record.question_id, number, digest)
        if first is not None and first[1] != digest:
            raise where.error(
                "question",
                f"question_id {quote(record.question_id)} has a different question "
                f"on line {first[0]}",
            )
        # Budget.take, with the count of claims given.
        self.budget.add_answer(record.location)
        self.budget.add_claims(claims, record.location)


# What LineChecks remembers a first line of.
_ANSWER_ID, _PAIR, _QUESTION = 0, 1, 2


class SeenInMemory:
    """The first line of each key of each kind, with a digest, in a dict."""

    def __init__(self) -> None:
        self._first: dict[tuple[int, str], tuple[int, bytes]] = {}

    def first(
        self, kind: int, key: str, number: int, digest: bytes = b""
    ) -> tuple[int, bytes] | None:
        """The (line, digest) a key was first seen with; None, and remember this line's,
        when it is new."""
        found = self._first.get((kind, key))
        if found is None:
            self._first[kind, key] = (number, digest)
        return found

    def close(self) -> None:
        pass


class SeenOnDisk:
    """SeenInMemory's keys in a private temporary SQLite database, which SQLite deletes when
    it is closed: memory stays flat whatever the number of lines (a page cache of at most
    2 MB), where the dicts grew by ~0.45 KB an answer. Opened at its first use, so a
    process forked before then (an import's matching workers) shares no connection."""

    def __init__(self) -> None:
        self._db: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection:
        # "" is a temporary file of its own; nothing to keep, so no journal, no syncs, and
        # one transaction that is never committed.
        db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
        db.executescript(
            "PRAGMA cache_size = -2048; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
            "CREATE TABLE seen (kind INTEGER, key TEXT, line INTEGER, digest BLOB,"
            " PRIMARY KEY (kind, key)) WITHOUT ROWID;"
            "BEGIN;"
        )
        return db

    def first(
        self, kind: int, key: str, number: int, digest: bytes = b""
    ) -> tuple[int, bytes] | None:
        """SeenInMemory.first."""
        if self._db is None:
            self._db = self._open()
        added = self._db.execute(
            "INSERT OR IGNORE INTO seen VALUES (?, ?, ?, ?)", (kind, key, number, digest)
        )
        if added.rowcount == 1:
            return None
        return self._db.execute(
            "SELECT line, digest FROM seen WHERE kind = ? AND key = ?", (kind, key)
        ).fetchone()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _answer(value: Any, where: Where) -> AnswerRecord:
    obj = expect_object(value, where, "")
    _refuse_unknown(obj, _ANSWER_FIELDS, where, "")
    claims = _claims(obj.get("claims"), where)
    metadata = obj.get("metadata")
    return AnswerRecord(
        location=where.location,
        question_id=required_text(obj, "question_id", where, limit=MAX_ID),
        question=required_text(obj, "question", where),
        answer_id=optional_text(obj, "answer_id", where, limit=MAX_ID),
        system=required_text(obj, "system", where, limit=MAX_SYSTEM),
        answer=required_text(obj, "answer", where),
        passages=_passages(require(obj, "passages", where), where),
        claims=claims,
        labels=_labels(obj.get("labels"), where, claims),
        metadata=_metadata(metadata, where),
    )


def _metadata(value: Any, where: Where) -> dict[str, Any]:
    if value is None:
        return {}
    metadata = expect_object(value, where, "metadata")
    check_clean_json(metadata, where, "metadata")
    return metadata


def _passages(value: Any, where: Where) -> tuple[PassageRecord, ...]:
    passages = []
    for i, item in enumerate(expect_list(value, where, "passages")):
        prefix = join("passages", i)
        obj = expect_object(item, where, prefix)
        _refuse_unknown(obj, _PASSAGE_FIELDS, where, prefix)
        url = optional_text(obj, "url", where, prefix)
        text = expect_text(
            require(obj, "text", where, prefix), where, join(prefix, "text"), allow_empty=True
        )
        if not text.strip() and not url.strip():
            raise where.error(
                join(prefix, "text"),
                "must not be empty unless url is given (a source that could not be fetched)",
            )
        passages.append(PassageRecord(optional_text(obj, "title", where, prefix), url, text))
    return tuple(passages)


def _claims(value: Any, where: Where) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = expect_list(value, where, "claims")
    if not items:
        raise where.error(
            "claims", "must not be an empty list (leave claims out to split the answer)"
        )
    return tuple(expect_text(item, where, join("claims", i)) for i, item in enumerate(items))


def _labels(value: Any, where: Where, claims: tuple[str, ...] | None) -> tuple[LabelRecord, ...]:
    if value is None:
        return ()
    labels = []
    seen: dict[tuple[str, int], int] = {}
    for i, item in enumerate(expect_list(value, where, "labels")):
        prefix = join("labels", i)
        obj = expect_object(item, where, prefix)
        _refuse_unknown(obj, _LABEL_FIELDS, where, prefix)
        rater = required_text(obj, "rater", where, prefix, limit=MAX_RATER)
        claim = _claim_index(require(obj, "claim", where, prefix), where, join(prefix, "claim"))
        # Only given claims can be counted here; indexes into the automatic split are
        # checked by the import service once it has split the answer.
        if claims is not None and claim >= len(claims):
            raise where.error(
                join(prefix, "claim"),
                # Same wording as the import service's check against the automatic split.
                f"claim {claim} does not exist "
                f"(the answer has {len(claims)} claims, numbered from 0)",
            )
        judgment = required_text(obj, "judgment", where, prefix)
        if judgment not in JUDGMENT_CODES:
            raise where.error(
                join(prefix, "judgment"),
                f"unknown judgment {quote(judgment)}: expected one of {_JUDGMENT_LIST}",
            )
        worthy = obj.get("verification_worthy")
        if worthy is not None and not isinstance(worthy, bool):
            raise where.error(
                join(prefix, "verification_worthy"),
                f"expected a boolean or null, got {type_name(worthy)}",
            )
        if (rater, claim) in seen:
            raise where.error(
                prefix,
                f"rater {quote(rater)} already labelled claim {claim} "
                f"in labels[{seen[rater, claim]}]",
            )
        seen[rater, claim] = i
        labels.append(
            LabelRecord(
                rater=rater,
                claim_index=claim,
                judgment=judgment,
                raw_label=judgment,
                verification_worthy=worthy,
                note=optional_text(obj, "note", where, prefix),
            )
        )
    return tuple(labels)


def _claim_index(value: Any, where: Where, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise where.error(field, f"expected a number, got {type_name(value)}")
    if isinstance(value, float) or value < 0:
        raise where.error(field, f"expected a whole number from 0, got {value}")
    return value


def _refuse_unknown(obj: dict[str, Any], known: tuple[str, ...], where: Where, prefix: str) -> None:
    for key in obj:
        if key not in known:
            raise where.error(
                join(prefix, key), f"unknown field (known fields: {', '.join(known)})"
            )
