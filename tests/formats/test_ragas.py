"""RAGAS samples: JSONL, JSON list and {"samples": [...]}, grouping by question, validation.

Pure Python; no database.
"""

from __future__ import annotations

import json

import pytest

from audit.formats import AnswerRecord, FormatError, PassageRecord, parse_file
from audit.formats.reading import stable_id
from tests.formats.helpers import SAMPLES, jsonl

DEADLINE = "When is the self-assessment tax return deadline?"


def _sample_lines() -> list[dict]:
    text = (SAMPLES / "ragas_sample.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def _error(data: bytes, filename: str = "ragas.jsonl") -> str:
    with pytest.raises(FormatError) as error:
        parse_file(data, filename, fmt="ragas")
    return str(error.value)


def test_jsonl_sample_groups_one_question_across_systems():
    parsed = parse_file((SAMPLES / "ragas_sample.jsonl").read_bytes(), "ragas_sample.jsonl")

    assert parsed.format == "ragas"
    assert [(r.location, r.question_id, r.system) for r in parsed.records] == [
        ("line 1", stable_id(DEADLINE), "gpt-4o rerank v3"),
        ("line 2", stable_id(DEADLINE), "llama-3-8b baseline"),
        ("line 3", stable_id("When do I have to register for VAT?"), "gpt-4o rerank v3"),
    ]


def test_jsonl_sample_first_answer():
    parsed = parse_file((SAMPLES / "ragas_sample.jsonl").read_bytes(), "ragas_sample.jsonl")

    assert parsed.records[0] == AnswerRecord(
        location="line 1",
        question_id=stable_id(DEADLINE),
        question=DEADLINE,
        answer_id="",
        system="gpt-4o rerank v3",
        answer=(
            "Online returns are due by 31 January after the tax year ends [1]. "
            "Filing late costs at least 100 pounds [2]."
        ),
        passages=(
            PassageRecord(
                "hmrc-deadlines#2",
                "",
                "Self-employed people must file a tax return by 31 January following the end "
                "of the tax year.",
            ),
            PassageRecord(
                "hmrc-penalties#1",
                "",
                "Late filing triggers an initial penalty of 100 pounds, even if no tax is owed.",
            ),
        ),
        claims=None,
        metadata={"reference": "31 January following the end of the tax year."},
    )


def test_jsonl_sample_keeps_marker_past_contexts():
    parsed = parse_file((SAMPLES / "ragas_sample.jsonl").read_bytes(), "ragas_sample.jsonl")

    second = parsed.records[1]

    assert (
        second.answer == "The deadline is 31 January [1]. Paper returns are due on 31 October [2]."
    )
    assert len(second.passages) == 1


def test_json_list_sample_uses_file_stem_as_system():
    parsed = parse_file((SAMPLES / "ragas_sample.json").read_bytes(), "ragas_sample.json")

    assert parsed.format == "ragas"
    assert [(r.location, r.system, r.metadata) for r in parsed.records] == [
        ("[0]", "ragas_sample", {"reference": "10 years for adults, 5 years for children."}),
        ("[1]", "ragas_sample", {}),
        ("[2]", "ragas_sample", {}),
    ]
    assert parsed.records[0].passages == (
        PassageRecord("", "", "An adult passport is valid for 10 years."),
        PassageRecord("", "", "A child passport is valid for 5 years."),
    )


def test_evaluation_dataset_dump_with_samples_key():
    samples = _sample_lines()

    parsed = parse_file(json.dumps({"samples": samples}).encode(), "dump.json")

    assert parsed.format == "ragas"
    assert [r.location for r in parsed.records] == ["samples[0]", "samples[1]", "samples[2]"]


def test_run_key_labels_the_system():
    line = _sample_lines()[0]
    del line["system"]
    line["run"] = "nightly-42"

    assert parse_file(jsonl(line), "r.jsonl").records[0].system == "nightly-42"


def test_numeric_context_ids_become_titles():
    line = _sample_lines()[0]
    line["retrieved_context_ids"] = [101, 102]

    parsed = parse_file(jsonl(line), "r.jsonl")

    assert [p.title for p in parsed.records[0].passages] == ["101", "102"]


def test_context_ids_must_match_contexts():
    line = _sample_lines()[0]
    line["retrieved_context_ids"] = ["only-one"]

    assert _error(jsonl(line)) == (
        "ragas.jsonl: line 1: retrieved_context_ids: has 1 ids for 2 retrieved_contexts"
    )


def test_contexts_must_be_strings():
    lines = _sample_lines()
    lines[1]["retrieved_contexts"] = ["fine", None]

    assert _error(jsonl(*lines)) == (
        "ragas.jsonl: line 2: retrieved_contexts[1]: expected a string, got null"
    )


def test_missing_contexts():
    line = _sample_lines()[0]
    del line["retrieved_contexts"]

    assert (
        _error(jsonl(line)) == "ragas.jsonl: line 1: retrieved_contexts: required field is missing"
    )


def test_missing_response():
    lines = _sample_lines()
    del lines[2]["response"]

    assert _error(jsonl(*lines)) == "ragas.jsonl: line 3: response: required field is missing"


def test_same_question_twice_for_one_system():
    lines = _sample_lines()
    lines[1]["system"] = "gpt-4o rerank v3"

    assert _error(jsonl(*lines)) == (
        'ragas.jsonl: line 2: user_input: same question and system "gpt-4o rerank v3" as line 1'
    )


def test_empty_context_list_imports():
    line = _sample_lines()[0]
    line["retrieved_contexts"] = []
    del line["retrieved_context_ids"]

    assert parse_file(jsonl(line), "r.jsonl").records[0].passages == ()
