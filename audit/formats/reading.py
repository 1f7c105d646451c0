"""Reading shared by the import formats: bytes to text, text to JSON, typed field access.

Every problem becomes a FormatError naming the file, the place in it and the field.
"""

from __future__ import annotations

import hashlib
import json
import json.decoder
import json.scanner
import math
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit.formats.records import FormatError

MAX_DEPTH = 100
KNOWN_FORMATS = (
    "native (JSONL, one answer per line), alce (ALCE result JSON), "
    "ragas (RAGAS samples as JSONL or a JSON list), expertqa (ExpertQA JSONL), "
    "citeaudit (Citeaudit's own JSONL export)"
)

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# JSON's own whitespace; str.strip() would also eat \x0b, \xa0, \u2028... which JSON rejects.
_JSON_SPACE = " \t\r\n"
_NON_SPACE = re.compile(r"[^ \t\r\n]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON string, skipped when looking for where a refused number stands outside strings.
_STRING_TOKEN = r'"(?:[^"\\]|\\.)*"'
_KEY_BEFORE = re.compile(r'"((?:[^"\\]|\\.)*)"[ \t\r\n]*:[ \t\r\n]*\Z')


class _NotJson(ValueError):
    """Raised from inside the decoder's hooks: valid to Python's json, refused here."""

    def __init__(self, key: str = "") -> None:
        super().__init__(key)
        self.key = key
        self.pos: int | None = None


class _Constant(_NotJson):
    pass


class _HugeNumber(_NotJson):
    pass


class _DuplicateKey(_NotJson):
    pass


def _refuse_constant(name: str) -> Any:
    # Python's json reads NaN and Infinity, which JSON does not have and PostgreSQL's jsonb
    # refuses; a judge's score of NaN is a bug in the file, not a number.
    raise _Constant(name)


def _finite_float(literal: str) -> float:
    # 1e400 reads as inf: the same number JSON cannot hold, written another way.
    value = float(literal)
    if not math.isfinite(value):
        raise _HugeNumber(literal)
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys; a file saying two things is refused.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
)


@dataclass(frozen=True)
class JsonLine:
    number: int  # 1-based line in the file
    value: Any


class JsonLines:
    """A file read as JSON Lines: one JSON value per non-blank line.

    Lines are parsed as they are iterated, so a parser that stops early (a web import over
    its limit, a bad line) never holds the whole file as Python objects.
    """

    def __init__(self, text: str, filename: str) -> None:
        self._text = text
        self._filename = filename
        # Parsed now: a file whose first line is broken fails before anything else runs,
        # and format detection looks at it.
        self.first: JsonLine | None = next(iter(self), None)

    def __iter__(self) -> Iterator[JsonLine]:
        filename = self._filename
        for number, raw in enumerate(self._raw_lines(), start=1):
            if raw.strip(_JSON_SPACE):
                yield JsonLine(number, _parse_line(raw, filename, number))

    def _raw_lines(self) -> Iterator[str]:
        text = self._text
        pos = 0
        while pos <= len(text):
            # Split on "\n" only: U+2028 and friends may sit inside JSON strings.
            end = text.find("\n", pos)
            if end == -1:
                end = len(text)
            yield text[pos:end]
            pos = end + 1


class JsonLinesFile(JsonLines):
    """JSON Lines read from a file one line at a time, never held whole.

    Only for a file that check_file() has passed: its lines are known to decode.
    """

    def __init__(self, path: str | Path, filename: str) -> None:
        self._path = path
        super().__init__("", filename)

    def _raw_lines(self) -> Iterator[str]:
        with open(self._path, "rb") as file:
            for number, line in enumerate(file, start=1):
                if number == 1 and line.startswith(_UTF8_BOM):
                    line = line[len(_UTF8_BOM) :]
                yield line.removesuffix(b"\n").decode("utf-8")

    def numbered_lines(self) -> Iterator[tuple[int, bytes]]:
        """The lines that iteration would parse, as (line number, bytes) left unparsed: an
        import parses them in worker processes with parse_line."""
        with open(self._path, "rb") as file:
            for number, line in enumerate(file, start=1):
                if number == 1 and line.startswith(_UTF8_BOM):
                    line = line[len(_UTF8_BOM) :]
                line = line.removesuffix(b"\n")
                # JSON's whitespace is ASCII, so stripping the bytes strips what the text
                # would lose.
                if line.strip(b" \t\r\n"):
                    yield number, line


def parse_line(raw: bytes, filename: str, number: int) -> Any:
    """One line of numbered_lines as JsonLinesFile's iteration parses it, same errors."""
    return _parse_line(raw.decode("utf-8"), filename, number)


@dataclass(frozen=True)
class JsonDocument:
    """A file holding a single JSON value, possibly spread over many lines."""

    value: Any
    first_line: int


JsonFile = JsonLines | JsonDocument


@dataclass(frozen=True)
class Where:
    """The file and the place in it (a line or a JSON path) that errors are reported against."""

    filename: str
    location: str

    def error(self, field: str, message: str) -> FormatError:
        return FormatError(self.filename, self.location, field, message)


class FileTooLarge(FormatError):
    """A file over a size limit: refused for its size, not its content (the API's 413)."""


def check_size(size: int, filename: str, max_bytes: int) -> None:
    """Raise FileTooLarge for a file of `size` bytes over the limit, naming both. An upload
    is read only to one byte past the limit, so a page checks the upload's own size first:
    the bytes it read would name the limit plus one as the file's size."""
    if size > max_bytes:
        raise FileTooLarge(
            filename,
            "",
            "",
            f"file is {human_size(size)}, over the limit of {human_size(max_bytes)}",
        )


def decode_text(data: bytes, filename: str, max_bytes: int) -> str:
    """Return the file as text, or raise for oversize, empty, NUL-bearing or non-UTF-8 files."""
    check_size(len(data), filename, max_bytes)
    bom = len(_UTF8_BOM) if data.startswith(_UTF8_BOM) else 0
    if not data[bom:].strip():
        raise FormatError(filename, "", "", "file is empty")
    if data.startswith(_UTF16_BOMS):
        raise FormatError(filename, "", "", "file is UTF-16 encoded; save it as UTF-8")
    nul = data.find(b"\x00")
    if nul != -1:
        raise FormatError(
            filename, _line_at(data, nul), "", f"NUL byte at byte {nul} (not a UTF-8 text file?)"
        )
    try:
        return data[bom:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = bom + err.start
        raise FormatError(
            filename, _line_at(data, offset), "", f"not valid UTF-8 at byte {offset}"
        ) from None


@dataclass(frozen=True)
class FileCheck:
    sha256: str
    lines: int  # lines holding more than JSON whitespace


def check_file(path: str | Path, filename: str, max_bytes: int) -> FileCheck:
    """What decode_text checks, read a line at a time: the same errors, in the same order
    (size, empty, UTF-16, then the first NUL byte, then the first byte that is not UTF-8,
    wherever each is in the file). Also the file's SHA-256 and its count of non-blank lines.
    """
    check_size(os.stat(path).st_size, filename, max_bytes)
    digest = hashlib.sha256()
    offset, number, lines = 0, 0, 0
    blank, utf16 = True, False
    nul: tuple[int, int] | None = None
    bad_utf8: tuple[int, int] | None = None
    with open(path, "rb") as file:
        for line in file:
            digest.update(line)
            number += 1
            body = line
            if number == 1:
                utf16 = line.startswith(_UTF16_BOMS)
                if line.startswith(_UTF8_BOM):
                    body = line[len(_UTF8_BOM) :]
            if blank and body.strip():
                blank = False
            if body.strip(b" \t\r\n"):
                lines += 1
            if nul is None and (at := line.find(b"\x00")) != -1:
                nul = (offset + at, number)
            if bad_utf8 is None:
                try:
                    body.decode("utf-8")
                except UnicodeDecodeError as err:
                    bad_utf8 = (offset + len(line) - len(body) + err.start, number)
            offset += len(line)
    if blank:
        raise FormatError(filename, "", "", "file is empty")
    if utf16:
        raise FormatError(filename, "", "", "file is UTF-16 encoded; save it as UTF-8")
    if nul is not None:
        raise FormatError(
            filename, f"line {nul[1]}", "", f"NUL byte at byte {nul[0]} (not a UTF-8 text file?)"
        )
    if bad_utf8 is not None:
        raise FormatError(
            filename, f"line {bad_utf8[1]}", "", f"not valid UTF-8 at byte {bad_utf8[0]}"
        )
    return FileCheck(sha256=digest.hexdigest(), lines=lines)


def too_big_to_read_whole(filename: str, size: int, limit: int) -> FormatError:
    return FormatError(
        filename,
        "",
        "",
        f"file is {human_size(size)}, over the limit of {human_size(limit)} for a file read "
        "whole; only native JSON Lines files are read a line at a time",
    )


def load_json_file(path: str | Path, filename: str, max_whole_bytes: int = sys.maxsize) -> JsonFile:
    """load_json for a file that check_file() has passed, streaming it when it is JSON
    Lines whose first record is an object on one line; anything else is read whole and
    given to load_json, so every other case is decided and reported exactly as there. A
    file to read whole over `max_whole_bytes` is refused before it is read."""
    first: JsonLine | None = None
    with open(path, "rb") as file:
        for number, line in enumerate(file, start=1):
            if number == 1 and line.startswith(_UTF8_BOM):
                line = line[len(_UTF8_BOM) :]
            raw = line.removesuffix(b"\n").decode("utf-8")
            if not raw.strip(_JSON_SPACE):
                continue
            if first is not None:
                # A second record: JSON Lines.
                return JsonLinesFile(path, filename)
            try:
                value = _DECODER.decode(raw)
                check_depth(value, Where(filename, f"line {number}"))
            except (ValueError, RecursionError, FormatError):
                break
            if not isinstance(value, dict):
                break
            first = JsonLine(number, value)
    size = os.stat(path).st_size
    if size > max_whole_bytes:
        raise too_big_to_read_whole(filename, size, max_whole_bytes)
    with open(path, "rb") as file:
        return load_json(decode_text(file.read(), filename, sys.maxsize), filename)


def load_json(text: str, filename: str) -> JsonFile:
    """Read text as one JSON document or as JSON Lines, whichever it is."""
    start = _skip_space(text, 0)
    first_line = text.count("\n", 0, start) + 1
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as err:
        head = text[start : _line_end(text, start)].strip(_JSON_SPACE)
        # Pretty-printed documents open with a lone bracket; anything more on the first line
        # of a multi-line file is a JSON Lines record, best reported on its own line.
        if err.lineno > first_line and head not in ("{", "["):
            return JsonLines(text, filename)
        if err.pos == start and head[:1] not in ("{", "[", '"'):
            raise _not_json(filename, first_line, head) from None
        raise _syntax_error(filename, f"line {err.lineno}", err, text) from None
    except _NotJson as err:
        raise _refusal(err, text, start, filename) from None
    except RecursionError:
        raise _too_deep(filename, f"line {first_line}") from None
    except ValueError as err:  # e.g. an integer literal longer than Python converts
        raise FormatError(filename, f"line {first_line}", "", f"invalid JSON: {err}") from None
    trailing = _NON_SPACE.search(text, end)
    if (
        trailing is not None
        and not isinstance(value, dict | list)
        and text[trailing.start()] in ",;\t"
    ):
        # "1,2,3" or "a","b": a table's first row, whose first cell happens to be JSON.
        raise _not_json(filename, first_line, text[start : _line_end(text, start)])
    if trailing is None:
        check_depth(value, Where(filename, ""))
        return JsonDocument(value, first_line)
    if "\n" in text[start:end]:
        # A JSON Lines record never spans lines, so this is one document with junk after it.
        line = text.count("\n", 0, trailing.start()) + 1
        column = trailing.start() - text.rfind("\n", 0, trailing.start())
        raise FormatError(
            filename, f"line {line}", "", f"invalid JSON at column {column}: extra data"
        )
    return JsonLines(text, filename)


def _parse_line(raw: str, filename: str, number: int) -> Any:
    location = f"line {number}"
    try:
        value = _DECODER.decode(raw)
    except json.JSONDecodeError as err:
        raise _syntax_error(filename, location, err, raw) from None
    except _NotJson as err:
        raise _refusal(err, raw, 0, filename, first_line=number) from None
    except RecursionError:
        raise _too_deep(filename, location) from None
    except ValueError as err:
        raise FormatError(filename, location, "", f"invalid JSON: {err}") from None
    if raw.count("{") + raw.count("[") > MAX_DEPTH:
        # Each level opens a bracket, so fewer brackets than MAX_DEPTH, strings' own
        # included, cannot nest past it: counting them in C spares walking the value.
        check_depth(value, Where(filename, location))
    return value


def _refusal(
    err: _NotJson, text: str, start: int, filename: str, first_line: int = 1
) -> FormatError:
    """Where in text (parsed from start; its first line is first_line) a hook refused."""
    if isinstance(err, _Constant | _HugeNumber):
        pos = _token_position(text, start, err.key)
        field = _key_before(text, pos) if pos is not None else ""
        if isinstance(err, _Constant):
            message = f"{err.key} is not a number JSON allows; write a number or null"
        else:
            literal = err.key if len(err.key) <= 20 else err.key[:19] + "…"
            message = f"{literal} is too large a number to store; JSON readers make it infinite"
    else:
        pos = _duplicate_position(text, start)
        field = err.key
        message = "the same key appears twice in one object; give it once"
    if pos is None:
        return FormatError(filename, f"line {first_line}", field, message)
    line = first_line + text.count("\n", 0, pos)
    column = pos - text.rfind("\n", 0, pos)
    return FormatError(filename, f"line {line}", field, f"{message} (column {column})")


def _token_position(text: str, start: int, token: str) -> int | None:
    """Where a number or constant first stands outside a string, from start."""
    pattern = re.compile(f"{_STRING_TOKEN}|(?<![0-9A-Za-z.+-])({re.escape(token)})(?![0-9A-Za-z.])")
    for match in pattern.finditer(text, start):
        if match.group(1):
            return match.start(1)
    return None


def _key_before(text: str, pos: int) -> str:
    """The object key a value at pos belongs to, or "" for a list item."""
    match = _KEY_BEFORE.search(text, max(0, pos - 1000), pos)
    if match is None:
        return ""
    try:
        return json.loads(f'"{match.group(1)}"')
    except ValueError:
        return ""


def _duplicate_position(text: str, start: int) -> int | None:
    """The opening brace of the first object that repeats a key.

    Only on the error path: parses again with the pure-Python scanner, whose object hook is
    told where each object starts.
    """

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[dict, int]:
        try:
            return json.decoder.JSONObject(s_and_end, *args)
        except _DuplicateKey as err:
            if err.pos is None:
                err.pos = s_and_end[1] - 1
            raise

    context = json.JSONDecoder(
        parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
    )
    context.parse_object = parse_object
    context.scan_once = json.scanner.py_make_scanner(context)
    try:
        context.raw_decode(text, start)
    except _DuplicateKey as err:
        return err.pos
    except (ValueError, RecursionError):
        return None
    return None


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end == -1 else end


def _not_json(filename: str, line: int, head: str) -> FormatError:
    if head.count(",") >= 2 or head.count("\t") >= 2 or head.count(";") >= 2:
        message = (
            "this is not JSON: it looks like a CSV or TSV table. Citeaudit imports JSON "
            f"and JSON Lines files ({KNOWN_FORMATS})"
        )
    else:
        message = f"this is not JSON or JSON Lines. Citeaudit imports {KNOWN_FORMATS}"
    return FormatError(filename, f"line {line}", "", message)


def check_depth(value: Any, where: Where) -> None:
    """Refuse JSON nested past MAX_DEPTH, without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep(where.filename, where.location)
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def as_lines(doc: JsonFile, filename: str) -> Iterable[JsonLine]:
    """The records of a JSON Lines format; a file holding a single object is one record."""
    if isinstance(doc, JsonLines):
        return doc
    if isinstance(doc.value, list):
        raise FormatError(
            filename, "", "", "expected JSON Lines (one JSON object per line), got a JSON list"
        )
    return (JsonLine(doc.first_line, doc.value),)


def type_name(value: Any) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "object"


def join(prefix: str, key: str | int) -> str:
    """Extend a JSON path: join("passages", 2) == "passages[2]"."""
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else key


def quote(text: str, limit: int = 60) -> str:
    """A value quoted for an error message, shortened so one bad field cannot flood it."""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return json.dumps(text, ensure_ascii=False)


def expect_object(value: Any, where: Where, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise where.error(field, f"expected an object, got {type_name(value)}")
    return value


def expect_list(value: Any, where: Where, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise where.error(field, f"expected a list, got {type_name(value)}")
    return value


def expect_text(
    value: Any, where: Where, field: str, *, allow_empty: bool = False, limit: int | None = None
) -> str:
    """A string, kept exactly as given; blank counts as empty; over limit is refused."""
    if not isinstance(value, str):
        raise where.error(field, f"expected a string, got {type_name(value)}")
    if "\x00" in value:
        # PostgreSQL text columns cannot store NUL, so refuse it here with a place attached.
        raise where.error(field, "contains a NUL character (\\u0000)")
    # isascii() reads a flag CPython keeps on every string: most texts skip the search.
    if not value.isascii() and _SURROGATE.search(value):
        raise where.error(field, "contains an unpaired surrogate escape (\\ud800-\\udfff)")
    if not allow_empty and not value.strip():
        raise where.error(field, "must not be empty")
    if limit is not None and len(value) > limit:
        raise where.error(field, too_long(value, limit))
    return value


def too_long(value: str, limit: int) -> str:
    return f"is {len(value)} characters long; at most {limit} fit"


def is_clean_text(value: str) -> bool:
    """True when the string can be stored as text (no NUL, no unpaired surrogate)."""
    return "\x00" not in value and (value.isascii() or not _SURROGATE.search(value))


def check_clean_json(value: Any, where: Where, field: str) -> None:
    """Refuse NUL characters and unpaired surrogates anywhere inside a JSON value."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not is_clean_text(item):
                raise where.error(field, "contains a NUL character or an unpaired surrogate")
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def require(obj: dict[str, Any], key: str, where: Where, prefix: str = "") -> Any:
    if key not in obj:
        raise where.error(join(prefix, key), "required field is missing")
    return obj[key]


def required_text(
    obj: dict[str, Any], key: str, where: Where, prefix: str = "", *, limit: int | None = None
) -> str:
    return expect_text(require(obj, key, where, prefix), where, join(prefix, key), limit=limit)


def optional_text(
    obj: dict[str, Any], key: str, where: Where, prefix: str = "", *, limit: int | None = None
) -> str:
    """An optional string: absent or null reads as ""."""
    value = obj.get(key)
    if value is None:
        return ""
    return expect_text(value, where, join(prefix, key), allow_empty=True, limit=limit)


def stable_id(text: str) -> str:
    """An id derived from text, so the same question from two systems groups together.

    Whitespace runs are collapsed first: a stray double space or trailing newline in one
    system's copy of the question should not split it from the others.
    """
    normalized = " ".join(text.split())
    return "q-" + hashlib.sha256(normalized.encode("utf-8")).hexdigest()[:16]


def file_stem(filename: str) -> str:
    """The file's name without folders or extension, as a fallback system label."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    # Only the last suffix goes: run names like "asqa-gpt-3.5-turbo-shot2.json" hold dots.
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return stem.strip() or "imported"


def _syntax_error(
    filename: str, location: str, err: json.JSONDecodeError, source: str
) -> FormatError:
    message = err.msg
    truncated = message.startswith("Unterminated string") or not _NON_SPACE.search(source, err.pos)
    if message.startswith("Unterminated string"):
        message = "unterminated string"
    else:
        message = message.removesuffix(" at")
        message = message[:1].lower() + message[1:]
    if truncated:
        message += " (the JSON ends early: is the file truncated?)"
    return FormatError(filename, location, "", f"invalid JSON at column {err.colno}: {message}")


def _too_deep(filename: str, location: str) -> FormatError:
    return FormatError(filename, location, "", f"JSON is nested more than {MAX_DEPTH} levels deep")


def _skip_space(text: str, pos: int) -> int:
    match = _NON_SPACE.search(text, pos)
    return len(text) if match is None else match.start()


def _line_at(data: bytes, offset: int) -> str:
    return f"line {data.count(b'\n', 0, offset) + 1}"


def human_size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n:,} bytes ({n / (1024 * 1024):.1f} MB)"
    return f"{n:,} bytes"
