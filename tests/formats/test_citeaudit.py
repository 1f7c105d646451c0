"""The citeaudit JSONL format: what export_jsonl writes, citeaudit reads back unchanged, and a
broken file is refused with the line and field that are wrong. Pure Python; no database."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.formats import FormatError, labelled, parse_file
from audit.formats.export_jsonl import answer_lines
from tests.formats.helpers import ROOT

T0 = datetime(2025, 3, 4, 9, 30, 15, 123456, tzinfo=UTC)
HASH_A = "a" * 64
HASH_B = "b" * 64


def _sheet(reviewer: str, **fields: Any) -> labelled.Sheet:
    values: dict[str, Any] = {
        "reviewer": reviewer,
        "status": "submitted",
        "answer_statement": "The warranty lasts two years.",
        "cited_urls": ["https://example.com/w"],
        "judgment": "supported",
        "wrong_citation_passage": None,
        "evidence": [{"passage": 1, "start": 0, "end": 10, "text": "Two years."}],
        "unsupported_assertions": [],
        "verification_worthy": True,
        "notes": "",
        "active_seconds": 12,
        "version": 2,
        "created_at": T0,
        "updated_at": T0 + timedelta(seconds=5),
        "submitted_at": T0 + timedelta(seconds=6),
        "db_id": 40,
    }
    return labelled.Sheet(**(values | fields))


def _answer(**fields: Any) -> labelled.Answer:
    claims = (
        labelled.Claim(
            order=0,
            parent_order=None,
            text="The warranty lasts two years.",
            start=0,
            end=33,
            location="split",
            citations=(1,),
            cited_unknown=(),
            is_uncited=False,
            assigned=("alice", "bob"),
            check=labelled.MachineCheck(
                matcher_version="m3",
                label="verified",
                best_score=0.9375,
                highlights=[{"passage": 1, "start": 0, "end": 10, "score": 0.9375}],
                numbers=[{"token": "two", "grounded": True}],
                wrong_citation=None,
                computed_at=T0,
            ),
            sheets=(_sheet("alice"), _sheet("bob", judgment="partially_supported", db_id=41)),
            rater_labels=(
                labelled.RaterLabel("expert", "human", "supported", "Complete", None, "ok"),
            ),
            gold=labelled.Gold(
                judgment="supported",
                source="sheet",
                wrong_citation_passage=None,
                evidence=[{"passage": 1, "start": 0, "end": 10, "text": "Two years."}],
                unsupported_assertions=[],
                verification_worthy=True,
                from_sheet="alice",
                sheets=("alice", "bob"),
                reason="reviewer_error",
                note="",
                lead="lena",
                version=1,
                created_at=T0 + timedelta(hours=1),
                updated_at=T0 + timedelta(hours=1),
                db_id=7,
            ),
            db_id=100,
        ),
        labelled.Claim(
            order=1,
            parent_order=None,
            text="Repairs are free [3].",
            start=34,
            end=55,
            location="exact",
            citations=(),
            cited_unknown=(3,),
            is_uncited=False,
            split_by="lena",
            split_at=T0,
            db_id=101,
        ),
        labelled.Claim(
            order=0,
            parent_order=1,
            text="Repairs are free.",
            start=34,
            end=55,
            location="atomic",
            citations=(2,),
            cited_unknown=(),
            is_uncited=False,
            assigned=("alice",),
            sheets=(_sheet("alice", status="draft", judgment="", submitted_at=None),),
            db_id=102,
        ),
    )
    values: dict[str, Any] = {
        "question_id": "q1",
        "question": "How long is the warranty?",
        "answer_id": "a1",
        "system": "gpt-4o rerank v3",
        "text": "The warranty lasts two years [1]. Repairs are free [3].",
        "is_partial": True,
        "content_hash": HASH_A,
        "metadata": {"run": "2025-03", "ü": [1, 2.5, None]},
        "passages": (
            labelled.Passage(1, "Warranty", "https://example.com/w", "Two years.", True, 1),
            labelled.Passage(2, "", "https://example.com/r", "", False, 2),
        ),
        "claims": claims,
        "db_id": 9,
        "question_db_id": 3,
    }
    return labelled.Answer(**(values | fields))


def _bare_answer() -> labelled.Answer:
    return _answer(answer_id="", content_hash=HASH_B, claims=(), passages=(), db_id=10)


def _file(*answers: labelled.Answer) -> bytes:
    return "".join(line for a in answers for line in answer_lines(a)).encode()


def _parsed(data: bytes) -> list[labelled.Answer]:
    return [record.labelled for record in parse_file(data, "set.jsonl").records]


def _edited(line: int, change: Callable[[dict[str, Any]], None]) -> bytes:
    lines = _file(_answer(), _bare_answer()).decode().splitlines()
    value = json.loads(lines[line - 1])
    change(value)
    lines[line - 1] = json.dumps(value)
    return "\n".join(lines).encode()


def _error(data: bytes) -> str:
    with pytest.raises(FormatError) as error:
        parse_file(data, "set.jsonl")
    return str(error.value)


# ------------------------------------------------------------------------------ reading


def test_written_answers_read_back_unchanged():
    answers = [_answer(), _bare_answer()]

    assert _parsed(_file(*answers)) == answers


def test_an_export_is_recognised_without_naming_the_format():
    assert parse_file(_file(_answer()), "set.jsonl").format == "citeaudit"


def test_an_export_given_as_native_gets_a_pointer():
    with pytest.raises(FormatError) as error:
        parse_file(_file(_answer()), "set.jsonl", fmt="native")

    assert str(error.value) == (
        "set.jsonl: this looks like a citeaudit export (JSONL), not native JSONL: "
        "import it as format 'citeaudit', or let the format be detected"
    )


def test_the_answer_record_carries_the_answer_and_its_top_level_claims():
    record = parse_file(_file(_answer()), "set.jsonl").records[0]

    assert (record.location, record.question_id, record.answer_id, record.system) == (
        "line 1",
        "q1",
        "a1",
        "gpt-4o rerank v3",
    )
    assert record.claims == ("The warranty lasts two years.", "Repairs are free [3].")
    assert [p.url for p in record.passages] == ["https://example.com/w", "https://example.com/r"]
    assert record.labels == ()


def test_claims_are_put_in_reading_order():
    data = _file(_answer()).decode().splitlines()
    shuffled = "\n".join([data[2], data[0], data[1]]).encode()

    assert [(c.parent_order, c.order) for c in _parsed(shuffled)[0].claims] == [
        (None, 0),
        (None, 1),
        (1, 0),
    ]


def test_each_line_is_one_claim_and_repeats_its_answer():
    lines = [json.loads(line) for line in _file(_answer()).decode().splitlines()]

    assert [line["claim"]["db_id"] for line in lines] == [100, 101, 102]
    assert all(line["answer"] == lines[0]["answer"] for line in lines)
    assert [line["gold_source"] for line in lines] == ["adjudicated", "unresolved", "unresolved"]


def test_line_breaks_inside_text_are_escaped():
    text = "The warranty lasts two years [1].\u2028Repairs are free [3].\x85"
    answer = _answer(text=text)

    data = _file(answer)

    assert data.decode().count("\n") == 3
    assert "\u2028" not in data.decode()
    assert _parsed(data)[0].text == text


_TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=40)


@settings(max_examples=60)
@given(
    notes=_TEXT,
    title=_TEXT,
    free=st.lists(_TEXT, max_size=3),
    span_notes=st.lists(_TEXT, max_size=2),
    extra=_TEXT,
)
def test_any_text_survives_the_trip(notes, title, free, span_notes, extra):
    # Spans of "The warranty lasts two years.", each with any note, then any free text.
    spans = [(13, 18, "lasts"), (19, 28, "two years")]
    assertions = [
        {"text": text, "start": start, "end": end, "note": note}
        for (start, end, text), note in zip(spans, span_notes, strict=False)
    ] + [{"text": text, "start": None, "end": None, "note": ""} for text in free]
    answer = _answer(
        text="The warranty lasts two years [1]. Repairs are free [3]." + extra,
        metadata={"note": extra, extra: [notes]},
        passages=(labelled.Passage(1, title, "", "Two years.", True, 1),) + _answer().passages[1:],
        claims=(
            replace(
                _answer().claims[0],
                sheets=(_sheet("alice", notes=notes, unsupported_assertions=assertions),),
                gold=None,
            ),
        ),
    )

    assert _parsed(_file(answer)) == [answer]


def test_unsupported_assertions_written_as_plain_strings_read_as_free_text():
    def strings(line: dict[str, Any]) -> None:
        line["sheets"][0]["unsupported_assertions"] = ["lasts", "<b>two</b>"]

    answer = _parsed(_edited(1, strings))[0]

    assert answer.claims[0].sheets[0].unsupported_assertions == [
        {"text": "lasts", "start": None, "end": None, "note": ""},
        {"text": "<b>two</b>", "start": None, "end": None, "note": ""},
    ]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            {"text": "lasts", "start": 12, "end": 17, "note": ""},
            "line 1: sheets[0].unsupported_assertions[0].text: does not match "
            "answer_statement[12:17]",
        ),
        (
            {"text": "lasts", "start": 13, "end": None, "note": ""},
            "line 1: sheets[0].unsupported_assertions[0].end: start and end are both null or a "
            "span, got 13, None",
        ),
        (
            {"text": "lasts", "start": 18, "end": 13, "note": ""},
            "line 1: sheets[0].unsupported_assertions[0].end: start and end are both null or a "
            "span, got 18, 13",
        ),
        (
            {"text": "lasts", "start": 13, "end": 18},
            "line 1: sheets[0].unsupported_assertions[0].note: required field is missing",
        ),
        (
            {"text": "", "start": None, "end": None, "note": ""} | {"colour": "red"},
            "line 1: sheets[0].unsupported_assertions[0].colour: unknown field (known fields: "
            "text, start, end, note)",
        ),
        (
            7,
            "line 1: sheets[0].unsupported_assertions[0]: expected an object, got number",
        ),
    ],
)
def test_an_unsupported_span_that_does_not_fit_its_statement_is_refused(item, message):
    def change(line: dict[str, Any]) -> None:
        line["sheets"][0]["unsupported_assertions"] = [item]

    assert _error(_edited(1, change)) == "set.jsonl: " + message


# ------------------------------------------------------------------------------- errors


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(line: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = line
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        if value is _DROP:
            del target[last]
        else:
            target[int(last) if last.isdigit() else last] = value

    return change


_DROP = object()


@pytest.mark.parametrize(
    ("line", "path", "value", "message"),
    [
        (1, "citeaudit", 2, "line 1: citeaudit: unsupported version 2 (expected 1)"),
        (1, "sheets.0.reviewer", _DROP, "line 1: sheets[0].reviewer: required field is missing"),
        (
            1,
            "claim.colour",
            "red",
            "line 1: claim.colour: unknown field (known fields: db_id, order, parent_order, "
            "text, start, end, location, citations, cited_unknown, is_uncited, split_by, "
            "split_at)",
        ),
        (
            1,
            "claim.end",
            99,
            "line 1: claim.end: span 0-99 does not fit the answer (55 characters)",
        ),
        (
            1,
            "claim.citations",
            [3],
            "line 1: claim.citations[0]: expected a whole number from 1 to 2, got 3",
        ),
        (
            2,
            "claim.cited_unknown",
            [2],
            "line 2: claim.cited_unknown[0]: expected a whole number from 3 to 2147483647, got 2",
        ),
        (
            1,
            "claim.start",
            -1,
            "line 1: claim.start: expected a whole number from 0 to 2147483647, got -1",
        ),
        (1, "claim.order", True, "line 1: claim.order: expected a whole number, got boolean"),
        (
            3,
            "claim.location",
            "split",
            'line 3: claim.location: is atomic exactly when parent_order is given (got "split" '
            "with parent_order 1)",
        ),
        (
            3,
            "claim.parent_order",
            5,
            "line 3: claim.parent_order: the answer has no top-level claim with order 5",
        ),
        (1, "sheets.1.reviewer", "alice", 'line 1: sheets[1].reviewer: "alice" repeats sheets[0]'),
        (
            1,
            "sheets.0.judgment",
            "fine",
            'line 1: sheets[0].judgment: unknown judgment "fine": expected one of contradicted, '
            "not_supported, partially_supported, source_inaccessible, supported, unclear, "
            "wrong_citation",
        ),
        (
            1,
            "sheets.0.status",
            "done",
            'line 1: sheets[0].status: unknown value "done": expected one of "draft", "submitted"',
        ),
        (
            1,
            "sheets.0.created_at",
            "yesterday",
            'line 1: sheets[0].created_at: expected an ISO 8601 timestamp, got "yesterday"',
        ),
        (
            1,
            "sheets.0.wrong_citation_passage",
            3,
            "line 1: sheets[0].wrong_citation_passage: expected a whole number from 1 to 2, got 3",
        ),
        (
            1,
            "sheets.0.evidence.0.passage",
            0,
            "line 1: sheets[0].evidence[0].passage: expected a whole number from 1 to 2, got 0",
        ),
        (
            1,
            "gold_source",
            "unanimous",
            'line 1: gold_source: expected "adjudicated" for gold.source "sheet"',
        ),
        (2, "gold_source", "adjudicated", 'line 2: gold_source: is "adjudicated" but gold is null'),
        (
            1,
            "gold.from_sheet",
            "carol",
            'line 1: gold.from_sheet: no sheet of this claim by "carol"',
        ),
        (1, "gold.sheets.1", "carol", 'line 1: gold.sheets[1]: no sheet of this claim by "carol"'),
        (1, "gold.judgment", "", "line 1: gold.judgment: must not be empty"),
        (
            1,
            "machine_check.best_score",
            "high",
            "line 1: machine_check.best_score: expected a number, got string",
        ),
        (
            1,
            "machine_check.label",
            "sure",
            'line 1: machine_check.label: unknown value "sure": expected one of "verified", '
            '"likely", "unknown"',
        ),
        (
            1,
            "rater_labels.0.kind",
            "robot",
            'line 1: rater_labels[0].kind: unknown value "robot": '
            'expected one of "human", "automatic"',
        ),
        (1, "assigned.1", "alice", 'line 1: assigned[1]: "alice" repeats assigned[0]'),
        (
            1,
            "answer.content_hash",
            "abc",
            "line 1: answer.content_hash: expected 64 lowercase hex digits",
        ),
        (
            2,
            "answer.text",
            "Other.",
            "line 2: answer.text: differs from line 1, the first line of this answer",
        ),
        (
            2,
            "passages.0.position",
            2,
            "line 2: passages: differs from line 1, the first line of this answer",
        ),
        (1, "passages.1.position", 3, "line 1: passages[1].position: expected 2, got 3"),
        (
            1,
            "question.id",
            "x" * 201,
            "line 1: question.id: is 201 characters long; at most 200 fit",
        ),
        (
            4,
            "question.text",
            "Other?",
            'line 4: question.text: question id "q1" has a different text on line 1',
        ),
        (
            4,
            "gold_source",
            "unanimous",
            "line 4: gold_source: must be empty on a line whose claim is null",
        ),
    ],
)
def test_broken_line_is_refused_with_its_line_and_field(line, path, value, message):
    assert _error(_edited(line, _set(path, value))) == f"set.jsonl: {message}"


def test_lines_of_an_answer_must_stay_together():
    lines = _file(_answer(), _bare_answer()).decode().splitlines()
    data = "\n".join([lines[0], lines[3], lines[1]]).encode()

    assert _error(data) == (
        "set.jsonl: line 3: answer.content_hash: this answer's lines already ended (line 1); "
        "keep the lines of an answer together"
    )


def test_a_claim_cannot_appear_twice():
    lines = _file(_answer()).decode().splitlines()

    assert _error("\n".join([lines[0], lines[0]]).encode()) == (
        "set.jsonl: line 2: claim.order: claim order 0 appears twice in this answer "
        "(also on line 1)"
    )


def test_an_answer_without_claims_has_a_single_line():
    lines = _file(_bare_answer()).decode().splitlines()

    assert _error("\n".join([lines[0], lines[0]]).encode()) == (
        "set.jsonl: line 1: claim: null (an answer without claims) on an answer that has claims"
    )


def test_a_naive_timestamp_is_refused():
    data = _edited(1, _set("claim.split_at", "2025-03-04T09:30:00"))

    assert _error(data) == (
        'set.jsonl: line 1: claim.split_at: timestamp "2025-03-04T09:30:00" needs a UTC offset'
    )


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    paths = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            paths += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            paths += _paths(item, (*prefix, i))
    return paths


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**40) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=5,
)
_LINES = [json.loads(line) for line in _file(_answer(), _bare_answer()).decode().splitlines()]


@settings(max_examples=300)
@given(data=st.data())
def test_any_changed_value_is_read_or_refused_with_a_format_error(data):
    lines = json.loads(json.dumps(_LINES))
    line = data.draw(st.sampled_from(lines))
    path = data.draw(st.sampled_from(_paths(line)[1:]))
    target = line
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = data.draw(_JSON)

    with contextlib.suppress(FormatError):
        parse_file("\n".join(map(json.dumps, lines)).encode(), "set.jsonl")


def test_the_documented_example_is_a_valid_line():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    doc = readme.split("### The citeaudit JSONL export", 1)[1]
    example = doc.split("```json\n", 1)[1].split("```", 1)[0]
    line = json.dumps(json.loads(example))

    answer = _parsed(line.encode())[0]

    assert answer.claims[0].gold_status == "adjudicated"
    assert "".join(answer_lines(answer)) == line + "\n"
