"""The citeaudit JSONL format: what export_jsonl writes (version 2), citeaudit reads back
unchanged, as it reads version 1 files, and a broken file is refused with the line and field
that are wrong. Pure Python; no database."""

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
from tests.formats.helpers import CITEAUDIT_V1, ROOT, as_citeaudit_v1

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
        "answers_question": False,
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
                answers_question=False,
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


def _edited(line: int, change: Callable[[dict[str, Any]], None], *, version: int = 2) -> bytes:
    data = _file(_answer(), _bare_answer())
    lines = (as_citeaudit_v1(data) if version == 1 else data).decode().splitlines()
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


def test_a_version_1_export_still_reads():
    answers = [_answer(), _bare_answer()]

    assert _parsed(CITEAUDIT_V1.read_bytes()) == answers


def test_the_tests_version_1_rewrite_matches_what_version_1_wrote():
    # tests/test_exports.py imports version 1 files made by this rewrite.
    assert as_citeaudit_v1(_file(_answer(), _bare_answer())) == CITEAUDIT_V1.read_bytes()


def test_an_export_is_recognised_without_naming_the_format():
    assert parse_file(_file(_answer()), "set.jsonl").format == "citeaudit"
    assert parse_file(CITEAUDIT_V1.read_bytes(), "set.jsonl").format == "citeaudit"


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
    shuffled = "\n".join([data[0], data[3], data[1], data[2]]).encode()

    assert [(c.parent_order, c.order) for c in _parsed(shuffled)[0].claims] == [
        (None, 0),
        (None, 1),
        (1, 0),
    ]


def test_passages_are_written_once_on_the_answer_record():
    lines = [json.loads(line) for line in _file(_answer(), _bare_answer()).decode().splitlines()]

    assert [(line["citeaudit"], line["record"]) for line in lines] == [
        (2, "answer"),
        (2, "claim"),
        (2, "claim"),
        (2, "claim"),
        (2, "answer"),
    ]
    assert [len(line.get("passages", ())) for line in lines] == [2, 0, 0, 0, 0]
    assert [line.get("answer_hash") for line in lines] == [None, HASH_A, HASH_A, HASH_A, None]
    assert [line["claim"]["db_id"] for line in lines[1:4]] == [100, 101, 102]
    assert [line["gold_source"] for line in lines[1:4]] == [
        "adjudicated",
        "unresolved",
        "unresolved",
    ]
    assert list(lines[0]) == ["citeaudit", "record", "question", "answer", "passages"]


def test_line_breaks_inside_text_are_escaped():
    text = "The warranty lasts two years [1].\u2028Repairs are free [3].\x85"
    answer = _answer(text=text)

    data = _file(answer)

    assert data.decode().count("\n") == 4
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


# Strings that have broken exporters and readers: markup, JSON look-alikes, the line breaks
# that are not "\n", NaN spelt out, right-to-left and astral characters, a BOM.
_HOSTILE = st.sampled_from(
    [
        "<script>alert(1)</script>",
        '"}]},\n{"citeaudit": 2, "record": "answer"',
        "NaN",
        "-Infinity",
        "\u2028\u2029\x85\r\n",
        "\\u0000",
        '=HYPERLINK("x")',
        "\u202egnp.exe",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 👩🏽‍🔬",
        "\ufeff",
    ]
)
_ANY_TEXT = st.one_of(_TEXT, _HOSTILE)
_SOME_TEXT = _ANY_TEXT.filter(lambda text: text.strip() != "")
_ID = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=200),
    st.just("é" * 200),
).filter(lambda text: text.strip() != "")
_NAME = st.one_of(_SOME_TEXT, st.just("x" * 150))
# A free-text unsupported assertion, as a file stores it (no offsets into the statement).
_FREE_TEXT_ASSERTION = st.builds(
    lambda text, note: {"text": text, "start": None, "end": None, "note": note},
    _SOME_TEXT,
    _ANY_TEXT,
)
_WHEN = st.datetimes(timezones=st.just(UTC))
_SCORE = st.floats(allow_nan=False, allow_infinity=False)
_DB_ID = st.none() | st.integers(1, 2**63 - 1)
_JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _SCORE | _ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_ANY_TEXT, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def _sheets(draw: st.DrawFn, n_passages: int) -> tuple[labelled.Sheet, ...]:
    reviewers = draw(st.lists(_NAME, max_size=2, unique=True))
    passage = st.none() | st.integers(1, n_passages) if n_passages else st.none()
    return tuple(
        labelled.Sheet(
            reviewer=reviewer,
            status="submitted",
            answer_statement=draw(_ANY_TEXT),
            cited_urls=draw(st.lists(_ANY_TEXT, max_size=2)),
            judgment=draw(st.sampled_from(["", "supported", "wrong_citation"])),
            wrong_citation_passage=draw(passage),
            evidence=[{"passage": draw(passage), "text": draw(_ANY_TEXT), "x": draw(_JSON_VALUE)}],
            unsupported_assertions=draw(st.lists(_FREE_TEXT_ASSERTION, max_size=2)),
            verification_worthy=draw(st.booleans()),
            # False: the version 1 rewrite of the same answers cannot carry it.
            answers_question=False,
            notes=draw(_ANY_TEXT),
            active_seconds=draw(st.integers(0, 2**31 - 1)),
            version=draw(st.integers(1, 9)),
            created_at=draw(_WHEN),
            updated_at=draw(_WHEN),
            submitted_at=draw(st.none() | _WHEN),
            db_id=draw(_DB_ID),
        )
        for reviewer in sorted(reviewers)
    )


@st.composite
def _hostile_answers(draw: st.DrawFn) -> labelled.Answer:
    text = draw(_SOME_TEXT)
    n_passages = draw(st.integers(0, 3))
    claims = []
    for order in range(draw(st.integers(0, 2))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, len(text)))
        sheets = draw(_sheets(n_passages))
        reviewers = [s.reviewer for s in sheets]
        claims.append(
            labelled.Claim(
                order=order,
                parent_order=None,
                text=draw(_SOME_TEXT),
                start=start,
                end=end,
                location=draw(st.sampled_from(["split", "exact", "not_located"])),
                citations=tuple(range(1, n_passages + 1)),
                cited_unknown=(n_passages + 7,),
                is_uncited=draw(st.booleans()),
                split_by=draw(st.none() | _NAME),
                split_at=draw(st.none() | _WHEN),
                assigned=tuple(reviewers),
                check=labelled.MachineCheck(
                    matcher_version=draw(_SOME_TEXT.filter(lambda t: len(t) <= 40)),
                    label="likely",
                    best_score=draw(_SCORE),
                    highlights=draw(st.lists(_JSON_VALUE, max_size=2)),
                    numbers=draw(st.lists(_JSON_VALUE, max_size=2)),
                    wrong_citation=draw(st.none() | st.dictionaries(_ANY_TEXT, _JSON_VALUE)),
                    computed_at=draw(st.none() | _WHEN),
                ),
                sheets=sheets,
                rater_labels=(
                    labelled.RaterLabel(
                        draw(_ID),
                        "automatic",
                        "",
                        draw(_ANY_TEXT.filter(lambda t: len(t) <= 100)),
                        draw(st.none() | st.booleans()),
                        draw(_ANY_TEXT),
                    ),
                ),
                gold=None
                if not reviewers
                else labelled.Gold(
                    judgment="contradicted",
                    source="sheet",
                    wrong_citation_passage=None,
                    evidence=[],
                    unsupported_assertions=draw(st.lists(_FREE_TEXT_ASSERTION, max_size=2)),
                    verification_worthy=False,
                    answers_question=False,
                    from_sheet=reviewers[0],
                    sheets=tuple(reviewers),
                    reason="other",
                    note=draw(_ANY_TEXT),
                    lead=draw(st.none() | _NAME),
                    version=1,
                    created_at=draw(_WHEN),
                    updated_at=draw(_WHEN),
                    db_id=draw(_DB_ID),
                ),
                db_id=draw(_DB_ID),
            )
        )
    return labelled.Answer(
        question_id=draw(_ID),
        question=draw(_SOME_TEXT),
        answer_id=draw(st.just("") | _ID),
        system=draw(_ID),
        text=text,
        is_partial=draw(st.booleans()),
        content_hash=draw(st.text("0123456789abcdef", min_size=64, max_size=64)),
        metadata=draw(st.dictionaries(_ANY_TEXT, _JSON_VALUE, max_size=3)),
        passages=tuple(
            labelled.Passage(
                i,
                draw(_ANY_TEXT),
                draw(_ANY_TEXT),
                draw(_ANY_TEXT),
                draw(st.booleans()),
                draw(_DB_ID),
            )
            for i in range(1, n_passages + 1)
        ),
        claims=tuple(claims),
        db_id=draw(_DB_ID),
        question_db_id=draw(_DB_ID),
    )


@settings(max_examples=100)
@given(
    answers=st.lists(_hostile_answers(), min_size=1, max_size=3, unique_by=lambda a: a.content_hash)
)
def test_hostile_answers_survive_the_trip_in_both_versions(answers):
    # One question id, one text: a file that gives a question two texts is refused.
    texts: dict[str, str] = {}
    answers = [replace(a, question=texts.setdefault(a.question_id, a.question)) for a in answers]
    data = _file(*answers)

    assert data.decode().count("\n") == sum(1 + len(a.claims) for a in answers)
    assert _parsed(data) == answers
    assert _parsed(as_citeaudit_v1(data)) == answers
    assert _file(*_parsed(data)) == data


def test_an_id_too_long_for_its_column_is_refused_not_cut():
    data = _edited(1, _set("answer.id", "é" * 300))

    assert _error(data) == "set.jsonl: line 1: answer.id: is 300 characters long; at most 200 fit"


def test_unsupported_assertions_written_as_plain_strings_read_as_free_text():
    def strings(line: dict[str, Any]) -> None:
        line["sheets"][0]["unsupported_assertions"] = ["lasts", "<b>two</b>"]

    answer = _parsed(_edited(2, strings))[0]

    assert answer.claims[0].sheets[0].unsupported_assertions == [
        {"text": "lasts", "start": None, "end": None, "note": ""},
        {"text": "<b>two</b>", "start": None, "end": None, "note": ""},
    ]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            {"text": "lasts", "start": 12, "end": 17, "note": ""},
            "line 2: sheets[0].unsupported_assertions[0].text: does not match "
            "answer_statement[12:17]",
        ),
        (
            {"text": "lasts", "start": 13, "end": None, "note": ""},
            "line 2: sheets[0].unsupported_assertions[0].end: start and end are both null or a "
            "span, got 13, None",
        ),
        (
            {"text": "lasts", "start": 18, "end": 13, "note": ""},
            "line 2: sheets[0].unsupported_assertions[0].end: start and end are both null or a "
            "span, got 18, 13",
        ),
        (
            {"text": "lasts", "start": 13, "end": 18},
            "line 2: sheets[0].unsupported_assertions[0].note: required field is missing",
        ),
        (
            {"text": "", "start": None, "end": None, "note": ""} | {"colour": "red"},
            "line 2: sheets[0].unsupported_assertions[0].colour: unknown field (known fields: "
            "text, start, end, note)",
        ),
        (
            7,
            "line 2: sheets[0].unsupported_assertions[0]: expected an object, got number",
        ),
    ],
)
def test_an_unsupported_span_that_does_not_fit_its_statement_is_refused(item, message):
    def change(line: dict[str, Any]) -> None:
        line["sheets"][0]["unsupported_assertions"] = [item]

    assert _error(_edited(2, change)) == "set.jsonl: " + message


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
        (1, "citeaudit", 3, "citeaudit: unsupported version 3 (expected 1 or 2)"),
        (5, "citeaudit", 1, "citeaudit: version 1 in a file whose line 1 is version 2"),
        (1, "record", _DROP, "record: required field is missing"),
        (
            2,
            "record",
            "passage",
            'record: unknown value "passage": expected one of "answer", "claim"',
        ),
        (2, "sheets.0.reviewer", _DROP, "sheets[0].reviewer: required field is missing"),
        (
            2,
            "claim.colour",
            "red",
            "claim.colour: unknown field (known fields: db_id, order, parent_order, "
            "text, start, end, location, citations, cited_unknown, is_uncited, "
            "answers_question, split_by, "
            "split_at)",
        ),
        (
            2,
            "claim.end",
            99,
            "claim.end: span 0-99 does not fit the answer (55 characters)",
        ),
        (
            2,
            "claim.citations",
            [3],
            "claim.citations[0]: expected a whole number from 1 to 2, got 3",
        ),
        (
            3,
            "claim.cited_unknown",
            [2],
            "claim.cited_unknown[0]: expected 0 or a whole number from 3 to 2147483647, got 2",
        ),
        (
            2,
            "claim.start",
            -1,
            "claim.start: expected a whole number from 0 to 2147483647, got -1",
        ),
        (2, "claim.order", True, "claim.order: expected a whole number, got boolean"),
        (
            4,
            "claim.location",
            "split",
            'claim.location: is atomic exactly when parent_order is given (got "split" '
            "with parent_order 1)",
        ),
        (
            4,
            "claim.parent_order",
            5,
            "claim.parent_order: the answer has no top-level claim with order 5",
        ),
        (2, "sheets.1.reviewer", "alice", 'sheets[1].reviewer: "alice" repeats sheets[0]'),
        (
            2,
            "sheets.0.judgment",
            "fine",
            'sheets[0].judgment: unknown judgment "fine": expected one of contradicted, '
            "not_supported, partially_supported, source_inaccessible, supported, unclear, "
            "wrong_citation",
        ),
        (
            2,
            "sheets.0.status",
            "done",
            'sheets[0].status: unknown value "done": expected one of "draft", "submitted"',
        ),
        (
            2,
            "sheets.0.created_at",
            "yesterday",
            'sheets[0].created_at: expected an ISO 8601 timestamp, got "yesterday"',
        ),
        (
            2,
            "sheets.0.wrong_citation_passage",
            3,
            "sheets[0].wrong_citation_passage: expected a whole number from 1 to 2, got 3",
        ),
        (
            2,
            "sheets.0.evidence.0.passage",
            0,
            "sheets[0].evidence[0].passage: expected a whole number from 1 to 2, got 0",
        ),
        (
            2,
            "gold_source",
            "unanimous",
            'gold_source: expected "adjudicated" for gold.source "sheet"',
        ),
        (3, "gold_source", "adjudicated", 'gold_source: is "adjudicated" but gold is null'),
        (
            2,
            "gold.from_sheet",
            "carol",
            'gold.from_sheet: no sheet of this claim by "carol"',
        ),
        (2, "gold.sheets.1", "carol", 'gold.sheets[1]: no sheet of this claim by "carol"'),
        (2, "gold.judgment", "", "gold.judgment: must not be empty"),
        (
            2,
            "machine_check.best_score",
            "high",
            "machine_check.best_score: expected a number, got string",
        ),
        (
            2,
            "machine_check.label",
            "sure",
            'machine_check.label: unknown value "sure": expected one of "verified", '
            '"likely", "unknown"',
        ),
        (
            2,
            "rater_labels.0.kind",
            "robot",
            'rater_labels[0].kind: unknown value "robot": expected one of "human", "automatic"',
        ),
        (2, "assigned.1", "alice", 'assigned[1]: "alice" repeats assigned[0]'),
        (
            1,
            "answer.content_hash",
            "abc",
            "answer.content_hash: expected 64 lowercase hex digits",
        ),
        (
            3,
            "answer_hash",
            HASH_B,
            "answer_hash: a claim record follows its answer's record, and this one follows "
            "the answer on line 1",
        ),
        (
            2,
            "claim",
            None,
            "claim: expected an object, got null (an answer without claims has no claim records)",
        ),
        (
            2,
            "passages",
            [],
            "passages: unknown field (known fields: citeaudit, record, answer_hash, claim, "
            "assigned, machine_check, sheets, rater_labels, gold_source, gold, suggestions)",
        ),
        (1, "passages.1.position", 3, "passages[1].position: expected 2, got 3"),
        (
            1,
            "question.id",
            "x" * 201,
            "question.id: is 201 characters long; at most 200 fit",
        ),
        (
            5,
            "question.text",
            "Other?",
            'question.text: question id "q1" has a different text on line 1',
        ),
    ],
)
def test_broken_line_is_refused_with_its_line_and_field(line, path, value, message):
    assert _error(_edited(line, _set(path, value))) == f"set.jsonl: line {line}: {message}"


@pytest.mark.parametrize(
    ("line", "path", "value", "message"),
    [
        (1, "citeaudit", 2, "record: required field is missing"),
        (1, "sheets.0.reviewer", _DROP, "sheets[0].reviewer: required field is missing"),
        (
            3,
            "claim.location",
            "split",
            'claim.location: is atomic exactly when parent_order is given (got "split" '
            "with parent_order 1)",
        ),
        (
            2,
            "answer.text",
            "Other.",
            "answer.text: differs from line 1, the first line of this answer",
        ),
        (
            2,
            "passages.0.position",
            2,
            "passages: differs from line 1, the first line of this answer",
        ),
        (
            4,
            "question.text",
            "Other?",
            'question.text: question id "q1" has a different text on line 1',
        ),
        (
            4,
            "gold_source",
            "unanimous",
            "gold_source: must be empty on a line whose claim is null",
        ),
    ],
)
def test_broken_version_1_line_is_refused_with_its_line_and_field(line, path, value, message):
    data = _edited(line, _set(path, value), version=1)

    assert _error(data) == f"set.jsonl: line {line}: {message}"


def test_lines_of_an_answer_must_stay_together():
    lines = _file(_answer(), _bare_answer()).decode().splitlines()
    data = "\n".join([lines[0], lines[1], lines[4], lines[0]]).encode()

    assert _error(data) == (
        "set.jsonl: line 4: answer.content_hash: this answer's lines already ended "
        "(lines 1-2); keep the lines of an answer together"
    )


def test_a_claim_record_follows_its_answer_record():
    lines = _file(_answer(), _bare_answer()).decode().splitlines()

    assert _error("\n".join([lines[0], lines[4], lines[1]]).encode()) == (
        "set.jsonl: line 3: answer_hash: a claim record follows its answer's record, and this "
        "one follows the answer on line 2"
    )
    assert _error(lines[1].encode()) == (
        "set.jsonl: line 1: answer_hash: a claim record follows its answer's record, and this "
        "one follows no answer record"
    )


def test_version_1_lines_of_an_answer_must_stay_together():
    lines = as_citeaudit_v1(_file(_answer(), _bare_answer())).decode().splitlines()
    data = "\n".join([lines[0], lines[3], lines[1]]).encode()

    assert _error(data) == (
        "set.jsonl: line 3: answer.content_hash: this answer's lines already ended (line 1); "
        "keep the lines of an answer together"
    )


def test_a_claim_cannot_appear_twice():
    lines = _file(_answer()).decode().splitlines()

    assert _error("\n".join([lines[0], lines[1], lines[1]]).encode()) == (
        "set.jsonl: line 3: claim.order: claim order 0 appears twice in this answer "
        "(also on line 2)"
    )


def test_a_version_1_answer_without_claims_has_a_single_line():
    lines = as_citeaudit_v1(_file(_bare_answer())).decode().splitlines()

    assert _error("\n".join([lines[0], lines[0]]).encode()) == (
        "set.jsonl: line 1: claim: null (an answer without claims) on an answer that has claims"
    )


def test_a_naive_timestamp_is_refused():
    data = _edited(2, _set("claim.split_at", "2025-03-04T09:30:00"))

    assert _error(data) == (
        'set.jsonl: line 2: claim.split_at: timestamp "2025-03-04T09:30:00" needs a UTC offset'
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
_FILE = _file(_answer(), _bare_answer())
_LINES = {
    version: [json.loads(line) for line in data.decode().splitlines()]
    for version, data in ((2, _FILE), (1, as_citeaudit_v1(_FILE)))
}


@settings(max_examples=300)
@given(data=st.data(), version=st.sampled_from([1, 2]))
def test_any_changed_value_is_read_or_refused_with_a_format_error(data, version):
    lines = json.loads(json.dumps(_LINES[version]))
    line = data.draw(st.sampled_from(lines))
    path = data.draw(st.sampled_from(_paths(line)[1:]))
    target = line
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = data.draw(_JSON)

    with contextlib.suppress(FormatError):
        parse_file("\n".join(map(json.dumps, lines)).encode(), "set.jsonl")


def test_the_documented_example_is_a_valid_file():
    reference = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    doc = reference.split("### The citeaudit JSONL export", 1)[1]
    records = [part.split("```", 1)[0] for part in doc.split("```json\n")[1:3]]
    data = "".join(json.dumps(json.loads(record), ensure_ascii=False) + "\n" for record in records)

    answer = _parsed(data.encode())[0]

    assert answer.claims[0].gold_status == "adjudicated"
    assert "".join(answer_lines(answer)) == data
