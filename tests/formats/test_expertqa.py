"""ExpertQA: the real released file, the fixture slice, passage building and label mapping.

Pure Python; no database. The full file lives outside the repository and is skipped if absent.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from audit.formats import FormatError, LabelRecord, PassageRecord, parse_file
from audit.formats.expertqa import SUPPORT_JUDGMENTS
from audit.formats.reading import stable_id
from tests.formats.helpers import EXPERTQA_FULL, EXPERTQA_SLICE, jsonl


def _line(answer: dict[str, Any], question: str = "Why is the sky blue?") -> dict[str, Any]:
    return {
        "question": question,
        "annotator_id": "x",
        "answers": {"gpt4": answer},
        "metadata": {"field": "Physics", "specific_field": "Optics", "question_type": "Why"},
    }


def _answer(attribution: Any, evidence: list[list[str]], support: str = "Complete") -> dict:
    return {
        "answer_string": "Rayleigh scattering [1]. Shorter wavelengths scatter more [2].",
        "attribution": attribution,
        "claims": [
            {"claim_string": f"Claim {i} [1].", "evidence": items, "support": support}
            for i, items in enumerate(evidence)
        ],
    }


def _passages(attribution: Any, evidence: list[list[str]]) -> tuple[PassageRecord, ...]:
    parsed = parse_file(jsonl(_line(_answer(attribution, evidence))), "e.jsonl")
    return parsed.records[0].passages


def test_full_released_test_file_parses_with_exact_counts():
    parsed = parse_file(EXPERTQA_FULL.read_bytes(), EXPERTQA_FULL.name)

    records = parsed.records
    labels = [label for record in records for label in record.labels]
    passages = [passage for record in records for passage in record.passages]
    assert parsed.format == "expertqa"
    assert len({record.question_id for record in records}) == 219
    assert len(records) == 219
    assert sum(len(record.claims) for record in records) == 1292
    assert Counter(label.raw_label for label in labels) == {
        "Complete": 733,
        "Missing": 227,
        "Incomplete": 200,
        "Partial": 70,
        "N/A": 62,
    }
    assert Counter(label.judgment for label in labels) == {
        "supported": 733,
        "not_supported": 427,
        "partially_supported": 70,
        None: 62,
    }
    assert Counter(label.verification_worthy for label in labels) == {
        True: 1007,
        False: 284,
        None: 1,
    }
    assert Counter(record.system for record in records) == {
        "bing_chat": 49,
        "post_hoc_sphere_gpt4": 45,
        "rr_gs_gpt4": 42,
        "post_hoc_gs_gpt4": 38,
        "rr_sphere_gpt4": 28,
        "gpt4": 17,
    }
    assert (len(passages), sum(1 for p in passages if p.text)) == (1237, 727)


def test_fixture_slice_parses_with_exact_counts():
    parsed = parse_file(EXPERTQA_SLICE.read_bytes(), EXPERTQA_SLICE.name)

    labels = [label for record in parsed.records for label in record.labels]
    assert parsed.format == "expertqa"
    assert len(parsed.records) == 15
    assert sum(len(record.claims) for record in parsed.records) == 110
    assert Counter(label.raw_label for label in labels) == {
        "Complete": 55,
        "Incomplete": 27,
        "Missing": 19,
        "Partial": 7,
        "N/A": 2,
    }


def test_fixture_slice_first_answer():
    parsed = parse_file(EXPERTQA_SLICE.read_bytes(), EXPERTQA_SLICE.name)

    first = parsed.records[0]

    assert first.location == "line 1"
    assert first.question_id == "q-d05ba5f524b6d81c"
    assert first.answer_id == "q-d05ba5f524b6d81c:rr_sphere_gpt4"
    assert first.system == "rr_sphere_gpt4"
    assert first.metadata == {
        "field": "Healthcare / Medicine",
        "specific_field": "Psychotherapy",
        "question_type": (
            "Question that describes a hypothetical scenario and asks a question based on "
            "this scenario"
        ),
    }
    assert first.claims[0] == (
        "The psycho-therapeutic approaches for a client with a substance addiction, trauma from "
        "childhood abuse, and dissociative personality disorder should involve a "
        "best-practices, multidisciplinary approach [2] [3]."
    )
    assert first.labels[0] == LabelRecord(
        rater="expertqa-expert",
        claim_index=0,
        judgment="not_supported",
        raw_label="Incomplete",
        verification_worthy=True,
        note="",
    )
    assert [p.url for p in first.passages] == [
        "https://www.rehabcenter.net/dissociative-identity-disorder-addiction/",
        "https://www.treatmentalternatives.com/treatment/therapies/",
        "https://www.treatmentalternatives.com/treatment/therapies/",
        "http://www.minddisorders.com/A-Br/Abuse.html",
        "https://americanaddictioncenters.org/dissociative-disorders",
    ]
    assert first.passages[1].text.startswith(
        "Psycho-Therapeutic Approaches for Addiction | Treatment Alternatives"
    )


def test_support_mapping():
    assert SUPPORT_JUDGMENTS == {
        "Complete": "supported",
        "Partial": "partially_supported",
        "Incomplete": "not_supported",
        "Missing": "not_supported",
        "N/A": None,
    }


def test_answer_string_and_question_id_come_from_the_line():
    parsed = parse_file(jsonl(_line(_answer(["[1] https://a.example"], [[]]))), "e.jsonl")

    record = parsed.records[0]
    assert record.question_id == stable_id("Why is the sky blue?")
    assert record.answer == "Rayleigh scattering [1]. Shorter wavelengths scatter more [2]."
    assert record.claims == ("Claim 0 [1].",)


def test_evidence_text_fills_the_numbered_passage():
    passages = _passages(
        ["[1] https://a.example", "[2] https://b.example"],
        [["[2] https://b.example\n\nBlue light scatters more."], ["[1] https://a.example"]],
    )

    assert passages == (
        PassageRecord("", "https://a.example", ""),
        PassageRecord("", "https://b.example", "Blue light scatters more."),
    )


def test_distinct_excerpts_are_joined_and_contained_ones_dropped():
    passages = _passages(
        ["[1] https://a.example"],
        [
            ["[1] https://a.example\n\nBlue light scatters."],
            ["[1] https://a.example\n\nBlue light scatters. Red does not."],
            ["[1] https://a.example\n\nThe sky looks blue at noon."],
            ["[1] https://a.example\n\nBlue light scatters."],
        ],
    )

    assert passages[0].text == "Blue light scatters. Red does not.\n\nThe sky looks blue at noon."


def test_missing_attribution_takes_urls_from_evidence():
    passages = _passages(None, [["[2] https://b.example\n\nText b."]])

    assert passages == (
        PassageRecord("", "", ""),
        PassageRecord("", "https://b.example", "Text b."),
    )


def test_unnumbered_attribution_is_positional_and_gaps_keep_their_place():
    passages = _passages(["https://a.example", "[3] https://c.example"], [])

    assert passages == (
        PassageRecord("", "https://a.example", ""),
        PassageRecord("", "", ""),
        PassageRecord("", "https://c.example", ""),
    )


def test_unnumbered_evidence_is_matched_by_url():
    passages = _passages(
        ["[1] https://a.example", "[2] https://b.example"],
        [["https://b.example\n\nText b."], ["https://elsewhere.example\n\nDropped."]],
    )

    assert [p.text for p in passages] == ["", "Text b."]


def test_worthiness_and_reason_become_label_fields():
    answer = _answer(["[1] https://a.example"], [[]], support="Partial")
    answer["claims"][0]["worthiness"] = "No"
    answer["claims"][0]["reason_missing_support"] = "Only half of it."

    parsed = parse_file(jsonl(_line(answer)), "e.jsonl")

    assert parsed.records[0].labels == (
        LabelRecord(
            "expertqa-expert", 0, "partially_supported", "Partial", False, "Only half of it."
        ),
    )


def test_unknown_support_value_lists_the_known_ones():
    data = jsonl(_line(_answer(["[1] https://a.example"], [[]], support="Mostly")))

    with pytest.raises(FormatError) as error:
        parse_file(data, "e.jsonl")

    assert str(error.value) == (
        'e.jsonl: line 1: answers.gpt4.claims[0].support: unknown value "Mostly": expected one '
        "of Complete, Partial, Incomplete, Missing, N/A"
    )


def test_absurd_citation_number_is_refused():
    data = jsonl(_line(_answer(["[99999999] https://a.example"], [[]])))

    with pytest.raises(FormatError) as error:
        parse_file(data, "e.jsonl")

    assert str(error.value) == (
        "e.jsonl: line 1: answers.gpt4.attribution[0]: citation number [99999999] is over 1000"
    )


def test_same_question_on_two_lines_names_both():
    line = _line(_answer(["[1] https://a.example"], [[]]))
    other = _line(_answer(["[1] https://a.example"], [[]]), question="Why is grass green?")

    with pytest.raises(FormatError) as error:
        parse_file(jsonl(line, other, line), "e.jsonl")

    answer_id = stable_id("Why is the sky blue?") + ":gpt4"
    assert str(error.value) == (
        f'e.jsonl: line 3: answers.gpt4: duplicate answer_id "{answer_id}": the same question '
        "and system are on line 1"
    )


def test_missing_answer_string():
    answer = _answer(["[1] https://a.example"], [[]])
    del answer["answer_string"]

    with pytest.raises(FormatError) as error:
        parse_file(jsonl(_line(answer)), "e.jsonl")

    assert (
        str(error.value) == "e.jsonl: line 1: answers.gpt4.answer_string: required field is missing"
    )


def test_system_names_that_are_not_identifiers_are_quoted_in_paths():
    line = _line({})
    line["answers"] = {"bing chat": {"answer_string": None}}

    with pytest.raises(FormatError) as error:
        parse_file(json.dumps(line).encode(), "e.jsonl", fmt="expertqa")

    assert str(error.value) == (
        'e.jsonl: line 1: answers["bing chat"].answer_string: expected a string, got null'
    )
