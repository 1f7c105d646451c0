"""ALCE result files: the sample run, system labels, question ids and validation messages.

Pure Python; no database.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from audit.formats import FormatError, PassageRecord, parse_file
from audit.formats.reading import stable_id
from tests.formats.helpers import SAMPLES, jsonl


def _sample() -> dict[str, Any]:
    return json.loads((SAMPLES / "alce_sample.json").read_text())


def _parse(document: Any, filename: str = "alce.json"):
    return parse_file(json.dumps(document, indent=4).encode(), filename, fmt="alce")


def _error(document: Any, filename: str = "alce.json") -> str:
    with pytest.raises(FormatError) as error:
        _parse(document, filename)
    return str(error.value)


def test_sample_file_parses_to_three_answers():
    parsed = parse_file((SAMPLES / "alce_sample.json").read_bytes(), "alce_sample.json")

    assert parsed.format == "alce"
    assert [(r.location, r.question_id, len(r.passages)) for r in parsed.records] == [
        ("data[0]", "-3204178731512960021", 3),
        ("data[1]", "7781265407731530006", 2),
        ("data[2]", "-1185733290011470112", 3),
    ]
    assert {r.system for r in parsed.records} == {"gpt-3.5-turbo-0301 gtr ndoc3"}
    assert {r.answer_id for r in parsed.records} == {""}
    assert {r.claims for r in parsed.records} == {None}


def test_sample_answer_passages_and_metadata():
    parsed = parse_file((SAMPLES / "alce_sample.json").read_bytes(), "alce_sample.json")

    second = parsed.records[1]

    assert second.question == "When was the Eiffel Tower completed?"
    assert second.answer == (
        "The Eiffel Tower was completed on 31 March 1889 for the World's Fair [1]. "
        "It remained the tallest man-made structure until 1930 [2][4]."
    )
    assert second.passages[0] == PassageRecord(
        "Eiffel Tower",
        "",
        "The tower was built as the entrance arch to the 1889 World's Fair and was completed "
        "on 31 March 1889.",
    )
    assert second.metadata == {
        "dataset_name": "asqa",
        "tag": "gtr",
        "shot": 2,
        "ndoc": 3,
        "config": "configs/asqa_turbo_shot2_ndoc3_gtr_default.yaml",
        "gold_answer": (
            "The Eiffel Tower was completed in March 1889 for the Exposition Universelle."
        ),
    }


def test_sample_keeps_uncited_sentence():
    parsed = parse_file((SAMPLES / "alce_sample.json").read_bytes(), "alce_sample.json")

    assert parsed.records[2].answer.endswith(
        " Cooking food therefore takes noticeably longer at altitude."
    )


def test_model_path_is_shortened_and_tag_and_ndoc_kept():
    document = _sample()
    document["args"] = {"model": "meta-llama/Llama-2-7b-chat-hf", "tag": "bm25", "ndoc": 5}

    assert _parse(document).records[0].system == "Llama-2-7b-chat-hf bm25 ndoc5"


def test_config_stem_labels_the_system_without_a_model():
    document = _sample()
    document["args"] = {"config": "configs/eli5_turbo_shot2_ndoc5_bm25_default.yaml"}

    assert _parse(document).records[0].system == "eli5_turbo_shot2_ndoc5_bm25_default"


def test_file_stem_labels_the_system_without_args():
    document = {"data": _sample()["data"]}

    parsed = _parse(document, "asqa-gpt-3.5-turbo-gtr-shot2-ndoc3-42.json")

    assert parsed.records[0].system == "asqa-gpt-3.5-turbo-gtr-shot2-ndoc3-42"


def test_question_id_falls_back_to_a_hash_of_the_question():
    document = _sample()
    del document["data"][0]["sample_id"]
    document["data"][1]["id"] = 17

    parsed = _parse(document)

    assert [r.question_id for r in parsed.records] == [
        stable_id("Who designed the first practical telephone?"),
        "17",
        "-1185733290011470112",
    ]


def test_several_samples_become_several_answers():
    document = _sample()
    document["data"] = document["data"][:1]
    document["data"][0]["output"] = ["Bell patented it [1].", "Bell did [1]; Meucci too [2]."]

    parsed = _parse(document)

    assert [(r.answer_id, r.answer) for r in parsed.records] == [
        ("-3204178731512960021#1", "Bell patented it [1]."),
        ("-3204178731512960021#2", "Bell did [1]; Meucci too [2]."),
    ]


def test_qa_extracted_docs_use_sent():
    document = _sample()
    document["data"][0]["docs"] = [{"title": "Bell", "sent": "Bell got the patent."}]

    assert _parse(document).records[0].passages == (
        PassageRecord("Bell", "", "Bell got the patent."),
    )


def test_doc_url_is_kept():
    document = _sample()
    document["data"][0]["docs"][0]["url"] = "https://en.wikipedia.org/wiki/Telephone"

    assert _parse(document).records[0].passages[0].url == "https://en.wikipedia.org/wiki/Telephone"


def test_items_as_json_lines_are_accepted():
    items = _sample()["data"]

    parsed = parse_file(jsonl(*items), "items.jsonl")

    assert parsed.format == "alce"
    assert [r.location for r in parsed.records] == ["line 1", "line 2", "line 3"]
    assert parsed.records[0].system == "items"


def test_docs_of_wrong_type():
    document = _sample()
    document["data"][1]["docs"] = {"title": "Eiffel Tower"}

    assert _error(document) == "alce.json: data[1].docs: expected a list, got object"


def test_missing_output():
    document = _sample()
    del document["data"][0]["output"]

    assert _error(document) == "alce.json: data[0].output: required field is missing"


def test_empty_output():
    document = _sample()
    document["data"][2]["output"] = ""

    assert _error(document) == "alce.json: data[2].output: must not be empty"


def test_null_doc_text():
    document = _sample()
    document["data"][0]["docs"][2]["text"] = None

    assert _error(document) == "alce.json: data[0].docs[2].text: expected a string, got null"


def test_data_of_wrong_type():
    assert _error({"args": {}, "data": {"question": "x"}}) == (
        "alce.json: data: expected a list, got object"
    )


def test_duplicate_question_id_names_both_items():
    document = _sample()
    document["data"][2]["sample_id"] = "7781265407731530006"

    assert _error(document) == (
        'alce.json: data[2]: duplicate question id "7781265407731530006" (also at data[1])'
    )
