"""The import entry point: read bytes, tell which format they are in, and parse them.

parse_file() is what the import service and the management command call.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from audit.formats import alce, citeaudit, expertqa, native, ragas
from audit.formats.reading import (
    KNOWN_FORMATS,
    FileCheck,
    JsonDocument,
    JsonFile,
    JsonLinesFile,
    check_file,
    decode_text,
    load_json,
    load_json_file,
    parse_line,
    too_big_to_read_whole,
    too_long,
)
from audit.formats.records import (
    MAX_ID,
    MAX_RATER,
    MAX_RAW_LABEL,
    MAX_SYSTEM,
    AnswerRecord,
    Budget,
    FormatError,
    ParsedFile,
)

MAX_BYTES = 50 * 1024 * 1024

FORMATS: dict[str, ModuleType] = {
    native.FORMAT: native,
    alce.FORMAT: alce,
    ragas.FORMAT: ragas,
    expertqa.FORMAT: expertqa,
    citeaudit.FORMAT: citeaudit,
}


def parse_file(
    data: bytes,
    filename: str,
    fmt: str = "auto",
    max_bytes: int = MAX_BYTES,
    budget: Budget | None = None,
) -> ParsedFile:
    """Parse and validate a whole import file, raising FormatError at its first problem.

    fmt="auto" detects the format from the content; an explicit fmt is checked against what
    the content looks like, so a wrong choice gets a pointer to the right one. A budget
    bounds the answers and given claims; parsing stops at the first one over it.
    """
    _check_format_name(fmt, filename)
    doc = load_json(decode_text(data, filename, max_bytes), filename)
    return _parse(doc, _format_of(doc, fmt, filename), filename, budget)


def parse_path(
    path: str | Path,
    filename: str,
    fmt: str = "auto",
    max_bytes: int = MAX_BYTES,
    budget: Budget | None = None,
    max_whole_bytes: int | None = None,
) -> tuple[ParsedFile, FileCheck]:
    """parse_file for a file on disk, with its SHA-256 and count of non-blank lines.

    A native JSON Lines file is streamed: its records come one line at a time as
    ParsedFile.records is iterated (once), so the file is never held whole, and an error
    on a later line is raised when that line is reached. Other files are parsed whole, as
    parse_file does. The errors are parse_file's. `max_whole_bytes` bounds a file that is
    read whole (memory grows with it), below `max_bytes` for one that is streamed.
    """
    _check_format_name(fmt, filename)
    check = check_file(path, filename, max_bytes)
    size = os.stat(path).st_size
    whole_limit = max_bytes if max_whole_bytes is None else min(max_bytes, max_whole_bytes)
    doc = load_json_file(path, filename, whole_limit)
    fmt = _format_of(doc, fmt, filename)
    if fmt == native.FORMAT and isinstance(doc, JsonLinesFile):
        return ParsedFile(fmt, StreamedAnswers(doc, filename, budget)), check
    if size > whole_limit:
        # Other JSON Lines formats are parsed into memory whole, as a JSON document is.
        raise too_big_to_read_whole(filename, size, whole_limit)
    return _parse(doc, fmt, filename, budget), check


def _parse(doc: JsonFile, fmt: str, filename: str, budget: Budget | None) -> ParsedFile:
    parsed = FORMATS[fmt].parse(doc, filename, budget)
    if not parsed.records:
        raise FormatError(filename, "", "", "the file holds no answers")
    for record in parsed.records:
        _check_lengths(record, filename)
    return parsed


class StreamedAnswers(Iterator[AnswerRecord]):
    """A native JSON Lines file's answers, each line parsed as iteration reaches it (once).

    An import may instead take the raw lines (`numbered_lines`), parse each with
    `read_native_line` in worker processes, and give the answers back to `take` in file
    order, then call `finish`: the same answers and the same first error either way.
    """

    def __init__(self, doc: JsonLinesFile, filename: str, budget: Budget | None) -> None:
        self.doc = doc
        self.filename = filename
        self._checks = native.LineChecks(filename, budget, on_disk=True)
        self._empty = True
        self._records = self._read()

    def __next__(self) -> AnswerRecord:
        return next(self._records)

    def _read(self) -> Iterator[AnswerRecord]:
        for line in self.doc:
            yield self.take(native.read_answer(line.value, self.filename, line.number), line.number)
        self.finish()

    def numbered_lines(self) -> Iterator[tuple[int, bytes]]:
        return self.doc.numbered_lines()

    def take(self, record: AnswerRecord, number: int) -> AnswerRecord:
        """Check an answer read from line `number` against the lines before it."""
        self.take_line(record, len(record.claims or ()), number)
        return record

    def take_line(self, record: native.LineFacts, claims: int, number: int) -> None:
        """take() of what the checks read of an answer, and the number of claims it
        gives."""
        self._checks.take_line(record, claims, number)
        _check_lengths(record, self.filename)
        self._empty = False

    def finish(self) -> None:
        """Once every line was taken."""
        self._checks.seen.close()
        if self._empty:
            raise FormatError(self.filename, "", "", "the file holds no answers")


def read_native_line(raw: bytes, filename: str, number: int) -> AnswerRecord:
    """One line of StreamedAnswers.numbered_lines read as its iteration reads it, without
    the checks across lines (StreamedAnswers.take): pure, for worker processes."""
    return native.read_answer(parse_line(raw, filename, number), filename, number)


def _check_format_name(fmt: str, filename: str) -> None:
    if fmt != "auto" and fmt not in FORMATS:
        raise FormatError(
            filename, "", "", f"unknown format {fmt!r}: choose auto, {', '.join(FORMATS)}"
        )


def _format_of(doc: JsonFile, fmt: str, filename: str) -> str:
    """The format to parse doc as: fmt, or the detected one for "auto"."""
    detected = detect_format(doc)
    if fmt == "auto":
        if detected is None:
            raise FormatError(
                filename, "", "", f"cannot tell the file's format; known: {KNOWN_FORMATS}"
            )
        fmt = detected
    elif detected is not None and detected != fmt:
        raise FormatError(
            filename,
            "",
            "",
            f"this looks like {FORMATS[detected].DESCRIPTION}, not "
            # Worded for both the upload page and the command line.
            f"{FORMATS[fmt].DESCRIPTION}: import it as format {detected!r}, or let the "
            "format be detected",
        )
    return fmt


def _check_lengths(record: native.LineFacts, filename: str) -> None:
    """Refuse names too long for their column, including those a format derives.

    The formats check the fields they read; this also covers ids and system names they
    build (an ALCE run's model and tag, a file's name), so nothing reaches the database
    to be cut there.
    """
    fields = [
        ("question_id", record.question_id, MAX_ID),
        ("answer_id", record.answer_id, MAX_ID),
        ("system", record.system, MAX_SYSTEM),
    ]
    for i, label in enumerate(record.labels):
        fields.append((f"labels[{i}].rater", label.rater, MAX_RATER))
        fields.append((f"labels[{i}].raw_label", label.raw_label, MAX_RAW_LABEL))
    for field, value, limit in fields:
        if len(value) > limit:
            raise FormatError(filename, record.location, field, too_long(value, limit))


def detect_format(doc: JsonFile) -> str | None:
    """The format the content looks like, judged on its shape and first record, or None."""
    if isinstance(doc, JsonDocument):
        value = doc.value
        if ragas.looks_like_document(value):
            return ragas.FORMAT
        if alce.looks_like_document(value):
            return alce.FORMAT
        if isinstance(value, list):
            first = value[0] if value else None
            return _record_format(first) if isinstance(first, dict) else None
        return _record_format(value) if isinstance(value, dict) else None
    first = doc.first.value if doc.first else None
    return _record_format(first) if isinstance(first, dict) else None


def _record_format(record: dict) -> str | None:
    # Citeaudit's export first: its lines carry "passages" too, like native ones. ExpertQA
    # next: its lines also carry "question", which says little on its own.
    for module in (citeaudit, expertqa, ragas, alce, native):
        if module.looks_like(record):
            return module.FORMAT
    return None
