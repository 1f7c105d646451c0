"""Native JSONL: the sample file, and every validation rule with its exact message.

Pure Python; no database.
"""

from __future__ import annotations

import json

import pytest

from audit.formats import AnswerRecord, FormatError, LabelRecord, PassageRecord, parse_file
from tests.formats.helpers import MISSING, SAMPLES, jsonl, native_line

WATER = PassageRecord(
    title="Drinking water hardness",
    url="https://water.example.org/hardness",
    text=(
        "Water hardness is caused mainly by dissolved calcium and magnesium. Water with more "
        "than 180 mg/L as calcium carbonate is classed as very hard. Hard water is not a "
        "health risk, but it leaves limescale in kettles and pipes."
    ),
)


def _error(data: bytes, filename: str = "answers.jsonl") -> str:
    with pytest.raises(FormatError) as error:
        parse_file(data, filename, fmt="native")
    return str(error.value)


def test_sample_file_parses_to_four_answers():
    parsed = parse_file((SAMPLES / "native_sample.jsonl").read_bytes(), "native_sample.jsonl")

    assert parsed.format == "native"
    assert [(r.location, r.answer_id, r.system, len(r.passages)) for r in parsed.records] == [
        ("line 1", "a1", "gpt-4o rerank v3", 2),
        ("line 2", "a2", "llama-3-8b baseline", 2),
        ("line 3", "a3", "gpt-4o rerank v3", 2),
        ("line 4", "a4", "llama-3-8b baseline", 0),
    ]


def test_sample_first_answer_keeps_claims_labels_and_metadata():
    parsed = parse_file((SAMPLES / "native_sample.jsonl").read_bytes(), "native_sample.jsonl")

    first = parsed.records[0]

    assert first.question_id == "q-hard-water"
    assert first.passages[0] == WATER
    assert first.claims == (
        "Hard water is caused by dissolved calcium and magnesium [1].",
        "It is not a health risk, although it leaves limescale [1].",
        "Softeners swap calcium and magnesium for sodium ions [2].",
    )
    assert first.labels == (
        LabelRecord("alice", 0, "supported", "supported", True, ""),
        LabelRecord("alice", 2, "supported", "supported", True, "resin detail not needed"),
    )
    assert first.metadata == {"run": "2024-06-01"}


def test_sample_keeps_marker_past_passages_and_uncited_sentence_for_later():
    parsed = parse_file((SAMPLES / "native_sample.jsonl").read_bytes(), "native_sample.jsonl")

    second, third = parsed.records[1], parsed.records[2]

    assert second.answer.endswith("The resin lasts for years without salt [3].")
    assert len(second.passages) == 2
    assert second.claims is None
    assert "Boiling a mix of water and white vinegar, then rinsing well, usually removes it. " in (
        third.answer
    )
    assert third.passages[1] == PassageRecord(
        "Descaling guide", "https://paywalled.example.com/descaling", ""
    )


def test_answer_without_passages_imports():
    parsed = parse_file(jsonl(native_line(passages=[])), "answers.jsonl")

    assert parsed.records == (
        AnswerRecord(
            location="line 1",
            question_id="q1",
            question="How long is the warranty?",
            answer_id="",
            system="gpt-4o rerank v3",
            answer="The warranty lasts two years [1].",
            passages=(),
            claims=None,
        ),
    )


def test_answer_text_is_kept_exactly():
    answer = "  Two years [1].\n\nNothing else.  "

    parsed = parse_file(jsonl(native_line(answer=answer)), "answers.jsonl")

    assert parsed.records[0].answer == answer


def test_blank_lines_are_skipped_and_lines_counted_physically():
    data = (
        b"\n" + jsonl(native_line(answer_id="a1")) + b"   \r\n" + jsonl(native_line(answer_id="a2"))
    )

    parsed = parse_file(data, "answers.jsonl")

    assert [r.location for r in parsed.records] == ["line 2", "line 4"]


def test_title_and_url_default_to_empty():
    parsed = parse_file(jsonl(native_line(passages=[{"text": "Two years."}])), "answers.jsonl")

    assert parsed.records[0].passages == (PassageRecord("", "", "Two years."),)


def test_null_passage_text_names_line_and_field():
    passages = [{"text": "Two years."}, {"title": "t", "url": "u", "text": None}]
    data = jsonl(native_line(answer_id="a1"), native_line(answer_id="a2", passages=passages))

    assert _error(data) == "answers.jsonl: line 2: passages[1].text: expected a string, got null"


def test_missing_passages_key():
    assert _error(jsonl(native_line(passages=MISSING))) == (
        "answers.jsonl: line 1: passages: required field is missing"
    )


def test_passages_of_wrong_type():
    assert _error(jsonl(native_line(passages={"text": "x"}))) == (
        "answers.jsonl: line 1: passages: expected a list, got object"
    )


def test_empty_passage_text_needs_a_url():
    data = jsonl(native_line(passages=[{"title": "t", "text": ""}]))

    assert _error(data) == (
        "answers.jsonl: line 1: passages[0].text: must not be empty unless url is given "
        "(a source that could not be fetched)"
    )


def test_blank_required_field_is_refused():
    assert _error(jsonl(native_line(question="   "))) == (
        "answers.jsonl: line 1: question: must not be empty"
    )


def test_number_where_string_expected():
    assert _error(jsonl(native_line(question_id=7))) == (
        "answers.jsonl: line 1: question_id: expected a string, got number"
    )


def test_line_that_is_not_an_object():
    data = jsonl(native_line(), ["q1", "answer"])

    assert _error(data) == "answers.jsonl: line 2: expected an object, got list"


def test_unknown_field_is_refused():
    assert _error(jsonl(native_line(passage=[]))) == (
        "answers.jsonl: line 1: passage: unknown field (known fields: question_id, question, "
        "answer_id, system, answer, passages, claims, labels, metadata)"
    )


def test_escaped_nul_character_in_text_is_refused():
    data = jsonl(native_line(answer="Two\u0000 years"))

    assert _error(data) == "answers.jsonl: line 1: answer: contains a NUL character (\\u0000)"


def test_duplicate_answer_id_names_both_lines():
    data = jsonl(
        native_line(answer_id="a1"), native_line(answer_id="a2"), native_line(answer_id="a1")
    )

    assert (
        _error(data)
        == 'answers.jsonl: line 3: answer_id: duplicate answer_id "a1" (also on line 1)'
    )


def test_second_answer_from_one_system_needs_an_answer_id():
    data = jsonl(native_line(), native_line())

    assert _error(data) == (
        'answers.jsonl: line 2: second answer to question_id "q1" from system '
        '"gpt-4o rerank v3" (first on line 1); give each answer an answer_id'
    )


def test_one_question_id_with_two_question_texts():
    data = jsonl(native_line(system="a"), native_line(system="b", question="Another?"))

    assert _error(data) == (
        'answers.jsonl: line 2: question: question_id "q1" has a different question on line 1'
    )


def test_empty_claims_list_is_refused():
    assert _error(jsonl(native_line(claims=[]))) == (
        "answers.jsonl: line 1: claims: must not be an empty list "
        "(leave claims out to split the answer)"
    )


def test_unknown_judgment_lists_the_codes():
    labels = [{"rater": "alice", "claim": 0, "judgment": "yes"}]

    assert _error(jsonl(native_line(labels=labels))) == (
        'answers.jsonl: line 1: labels[0].judgment: unknown judgment "yes": expected one of '
        "supported, partially_supported, not_supported, contradicted, wrong_citation, "
        "source_inaccessible, unclear"
    )


def test_label_past_given_claims_is_refused():
    line = native_line(
        claims=["The warranty lasts two years [1]."],
        labels=[{"rater": "alice", "claim": 1, "judgment": "supported"}],
    )

    assert _error(jsonl(line)) == (
        "answers.jsonl: line 1: labels[0].claim: claim 1 does not exist "
        "(the answer has 1 claims, numbered from 0)"
    )


def test_label_index_is_left_for_the_splitter_when_claims_are_not_given():
    line = native_line(labels=[{"rater": "alice", "claim": 7, "judgment": "unclear"}])

    parsed = parse_file(jsonl(line), "answers.jsonl")

    assert parsed.records[0].labels == (LabelRecord("alice", 7, "unclear", "unclear"),)


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        (True, "expected a number, got boolean"),
        ("0", "expected a number, got string"),
        (1.5, "expected a whole number from 0, got 1.5"),
        (-1, "expected a whole number from 0, got -1"),
    ],
)
def test_label_claim_must_be_a_whole_number(claim, message):
    line = native_line(labels=[{"rater": "alice", "claim": claim, "judgment": "supported"}])

    assert _error(jsonl(line)) == f"answers.jsonl: line 1: labels[0].claim: {message}"


def test_two_labels_from_one_rater_for_one_claim():
    label = {"rater": "alice", "claim": 0, "judgment": "supported"}

    assert _error(jsonl(native_line(labels=[label, label]))) == (
        'answers.jsonl: line 1: labels[1]: rater "alice" already labelled claim 0 in labels[0]'
    )


def test_verification_worthy_must_be_boolean():
    label = {"rater": "alice", "claim": 0, "judgment": "supported", "verification_worthy": "yes"}

    assert _error(jsonl(native_line(labels=[label]))) == (
        "answers.jsonl: line 1: labels[0].verification_worthy: expected a boolean or null, "
        "got string"
    )


def test_metadata_must_be_an_object():
    assert _error(jsonl(native_line(metadata=["x"]))) == (
        "answers.jsonl: line 1: metadata: expected an object, got list"
    )


def test_single_pretty_printed_object_is_one_answer():
    data = json.dumps(native_line(), indent=2).encode()

    parsed = parse_file(data, "answers.jsonl")

    assert [r.location for r in parsed.records] == ["line 1"]


def test_json_list_is_not_native():
    data = json.dumps([native_line()]).encode()

    assert _error(data) == (
        "answers.jsonl: expected JSON Lines (one JSON object per line), got a JSON list"
    )
