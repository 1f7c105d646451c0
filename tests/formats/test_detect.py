"""parse_file(): format detection, file-level errors, and that nothing but FormatError escapes.

Pure Python; no database. The property tests feed arbitrary and mutated bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.formats import FORMATS, FormatError, ParsedFile, parse_file
from tests.formats.helpers import EXPERTQA_SLICE, SAMPLES, jsonl, native_line

SAMPLE_FILES = {
    "native_sample.jsonl": "native",
    "alce_sample.json": "alce",
    "ragas_sample.jsonl": "ragas",
    "ragas_sample.json": "ragas",
}
KNOWN = (
    "native (JSONL, one answer per line), alce (ALCE result JSON), ragas (RAGAS samples as "
    "JSONL or a JSON list), expertqa (ExpertQA JSONL), citeaudit (Citeaudit's own JSONL export)"
)
SMALL_FILES = [(SAMPLES / name).read_bytes() for name in SAMPLE_FILES]
FMTS = ["auto", *FORMATS]


def _error(data: bytes, filename: str = "answers.jsonl", **kwargs: Any) -> str:
    with pytest.raises(FormatError) as error:
        parse_file(data, filename, **kwargs)
    return str(error.value)


def _parse_or_format_error(data: bytes, fmt: str = "auto") -> None:
    try:
        result = parse_file(data, "fuzz.jsonl", fmt=fmt)
    except FormatError:
        return
    assert isinstance(result, ParsedFile)
    assert result.records


@pytest.mark.parametrize(("name", "fmt"), SAMPLE_FILES.items())
def test_sample_files_are_detected(name, fmt):
    assert parse_file((SAMPLES / name).read_bytes(), name).format == fmt


def test_expertqa_slice_is_detected():
    assert parse_file(EXPERTQA_SLICE.read_bytes(), EXPERTQA_SLICE.name).format == "expertqa"


@pytest.mark.parametrize(("name", "fmt"), SAMPLE_FILES.items())
def test_matching_explicit_format_is_accepted(name, fmt):
    assert parse_file((SAMPLES / name).read_bytes(), name, fmt=fmt).format == fmt


def test_wrong_explicit_format_is_told_what_the_file_looks_like():
    data = (SAMPLES / "alce_sample.json").read_bytes()

    assert _error(data, "answers.json", fmt="native") == (
        "answers.json: this looks like an ALCE result file, not native JSONL: "
        "import it as format 'alce', or let the format be detected"
    )


def test_expertqa_file_given_as_ragas():
    assert _error(EXPERTQA_SLICE.read_bytes(), "e.jsonl", fmt="ragas") == (
        "e.jsonl: this looks like an ExpertQA file, not a RAGAS dataset: "
        "import it as format 'expertqa', or let the format be detected"
    )


def test_unknown_content_lists_known_formats():
    assert (
        _error(b'{"foo": 1}\n', "x.json")
        == f"x.json: cannot tell the file's format; known: {KNOWN}"
    )


def test_json_scalar_is_unknown_content():
    assert _error(b"42", "x.json") == f"x.json: cannot tell the file's format; known: {KNOWN}"


def test_unknown_format_name():
    assert _error(b"{}", "x.jsonl", fmt="csv") == (
        "x.jsonl: unknown format 'csv': choose auto, native, alce, ragas, expertqa, citeaudit"
    )


def test_file_without_answers():
    assert _error(b'{"args": {}, "data": []}', "x.json") == "x.json: the file holds no answers"


def test_oversize_file_names_size_and_limit():
    assert _error(b"x" * 11, "big.jsonl", max_bytes=10) == (
        "big.jsonl: file is 11 bytes, over the limit of 10 bytes"
    )


def test_default_limit_is_50_megabytes():
    data = b" " * (50 * 1024 * 1024 + 1)

    assert _error(data, "big.jsonl") == (
        "big.jsonl: file is 52,428,801 bytes (50.0 MB), over the limit of "
        "52,428,800 bytes (50.0 MB)"
    )


@pytest.mark.parametrize("data", [b"", b" \n\t\r\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf\n\n"])
def test_empty_file(data):
    assert _error(data) == "answers.jsonl: file is empty"


def test_bad_utf8_names_line_and_byte():
    assert _error(b'{"a": 1}\n{"b": "\xff"}\n') == (
        "answers.jsonl: line 2: not valid UTF-8 at byte 16"
    )


def test_bad_utf8_offset_counts_the_bom():
    assert (
        _error(b'\xef\xbb\xbf{"b": "\xc3"}') == "answers.jsonl: line 1: not valid UTF-8 at byte 10"
    )


def test_utf8_bom_is_accepted():
    data = (SAMPLES / "native_sample.jsonl").read_bytes()

    with_bom = parse_file(b"\xef\xbb\xbf" + data, "native_sample.jsonl")

    assert with_bom == parse_file(data, "native_sample.jsonl")


def test_utf16_file_is_refused():
    data = "\n".join(json.dumps(native_line())).encode("utf-16")

    assert _error(data) == "answers.jsonl: file is UTF-16 encoded; save it as UTF-8"


def test_nul_byte_names_line():
    assert _error(b'{"a": 1}\n{"b": "\x00"}\n') == (
        "answers.jsonl: line 2: NUL byte at byte 16 (not a UTF-8 text file?)"
    )


def test_truncated_jsonl_line():
    data = jsonl(native_line()) + b'{"question_id": "q2", "question": "Wh'

    assert _error(data) == (
        "answers.jsonl: line 2: invalid JSON at column 35: unterminated string "
        "(the JSON ends early: is the file truncated?)"
    )


def test_truncated_json_document():
    data = (SAMPLES / "alce_sample.json").read_bytes()[:1500]

    assert _error(data, "alce.json") == (
        "alce.json: line 40: invalid JSON at column 8: expecting property name enclosed in "
        "double quotes (the JSON ends early: is the file truncated?)"
    )


def test_broken_first_jsonl_line_is_reported_on_its_line():
    data = b'{"question_id": "q1", "answer": \n' + jsonl(native_line())

    assert _error(data) == (
        "answers.jsonl: line 1: invalid JSON at column 33: expecting value "
        "(the JSON ends early: is the file truncated?)"
    )


def test_junk_after_json_document():
    data = (SAMPLES / "alce_sample.json").read_bytes() + b"\n}\n"

    assert _error(data, "alce.json") == "alce.json: line 121: invalid JSON at column 1: extra data"


def test_nesting_past_python_recursion_is_a_format_error():
    assert _error(b"[" * 100_000, "deep.json") == (
        "deep.json: line 1: JSON is nested more than 100 levels deep"
    )


def test_nesting_past_100_levels_is_refused():
    data = b"[" * 101 + b"]" * 101

    assert _error(data, "deep.json") == "deep.json: JSON is nested more than 100 levels deep"


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def test_100_levels_are_allowed():
    # The answer object is level 1, so metadata may hold 99 more.
    parsed = parse_file(jsonl(native_line(metadata=_nested(99))), "answers.jsonl")

    assert len(parsed.records) == 1


def test_nesting_limit_names_the_line():
    data = jsonl(native_line(answer_id="a1"), native_line(answer_id="a2", metadata=_nested(100)))

    assert _error(data) == "answers.jsonl: line 2: JSON is nested more than 100 levels deep"


# Property tests: whatever the bytes, parse_file returns a ParsedFile or raises FormatError.

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
KEYS = st.sampled_from(
    [
        "question_id", "question", "answer_id", "system", "answer", "passages", "claims",
        "labels", "metadata", "title", "url", "text", "rater", "claim", "judgment",
        "verification_worthy", "note", "args", "data", "docs", "output", "id", "sent",
        "user_input", "response", "retrieved_contexts", "retrieved_context_ids", "reference",
        "samples", "answers", "answer_string", "attribution", "claim_string", "evidence",
        "support", "worthiness", "reason_missing_support", "gpt4",
    ]
)  # fmt: skip
JSON_VALUES = st.recursive(
    JSON_SCALARS | st.sampled_from(["[1] https://a.example\n\nText", "supported", "Complete"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=6),
    max_leaves=30,
)
FUZZ = settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(data=st.binary(max_size=2000), fmt=st.sampled_from(FMTS))
def test_arbitrary_bytes_only_raise_format_error(data, fmt):
    _parse_or_format_error(data, fmt)


@FUZZ
@given(records=st.lists(st.dictionaries(KEYS, JSON_VALUES, max_size=8), min_size=1, max_size=4))
def test_json_shaped_like_the_formats_only_raises_format_error(records):
    for fmt in FMTS:
        _parse_or_format_error(jsonl(*records), fmt)
        _parse_or_format_error(json.dumps(records).encode(), fmt)
        _parse_or_format_error(json.dumps({"args": records[0], "data": records}).encode(), fmt)


@FUZZ
@given(sample=st.sampled_from(SMALL_FILES), cut=st.floats(0, 1), fmt=st.sampled_from(FMTS))
def test_truncated_samples_only_raise_format_error(sample, cut, fmt):
    _parse_or_format_error(sample[: int(len(sample) * cut)], fmt)


@FUZZ
@given(
    sample=st.sampled_from(SMALL_FILES),
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), max_size=8),
    fmt=st.sampled_from(FMTS),
)
def test_byte_flipped_samples_only_raise_format_error(sample, flips, fmt):
    data = bytearray(sample)
    for where, byte in flips:
        data[int(len(data) * where)] = byte
    _parse_or_format_error(bytes(data), fmt)


@settings(max_examples=40)
@given(cut=st.integers(0, 269_489), flips=st.lists(st.integers(0, 269_488), max_size=4))
def test_mutated_expertqa_slice_only_raises_format_error(cut, flips):
    data = bytearray(EXPERTQA_SLICE.read_bytes())
    for where in flips:
        data[where % len(data)] ^= 0x5A
    _parse_or_format_error(bytes(data[:cut]))


def test_samples_exist():
    assert sorted(path.name for path in SAMPLES.iterdir()) == sorted(SAMPLE_FILES)
    assert Path(EXPERTQA_SLICE).stat().st_size == 269_489
