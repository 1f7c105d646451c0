"""What every import format refuses, with the file, line and field: numbers JSON does not
have, repeated keys, names too long for their column, NUL and lone surrogates, tables
that are not JSON, and files over an import's budget.

Pure Python; no database.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from audit.formats import FormatError, parse_file
from audit.formats.records import Budget
from audit.formats.verdicts import parse_verdicts
from tests.formats.helpers import DATASETS, jsonl, native_line
from tests.formats.test_citeaudit import _answer, _file


def _error(data: bytes, filename: str, **kwargs: Any) -> str:
    with pytest.raises(FormatError) as error:
        parse_file(data, filename, **kwargs)
    return str(error.value)


def _verdict_error(data: bytes, filename: str = "judge.jsonl") -> str:
    with pytest.raises(FormatError) as error:
        parse_verdicts(data, filename, max_bytes=10**6)
    return str(error.value)


def _alce(**item: Any) -> bytes:
    """A pretty-printed ALCE result file, as run.py writes it."""
    data = {"question": "Q?", "docs": [{"title": "t", "text": "x"}], "output": "A [1]."}
    data.update(item)
    return json.dumps({"args": {"model": "m", "shot": 2}, "data": [data]}, indent=2).encode()


def _ragas(**fields: Any) -> dict[str, Any]:
    line = {"user_input": "Q?", "response": "A [1].", "retrieved_contexts": ["x"]}
    line.update(fields)
    return line


def _expertqa(system: str = "gpt4", **claim: Any) -> dict[str, Any]:
    claim_obj = {"claim_string": "A [1].", "support": "Complete", "evidence": ["[1] http://x"]}
    claim_obj.update(claim)
    return {
        "question": "Q?",
        "answers": {system: {"answer_string": "A [1].", "claims": [claim_obj]}},
    }


def _verdict(**fields: Any) -> dict[str, Any]:
    line = {"judge": "llm", "answer_id": "a1", "claim_index": 0, "judgment": "supported"}
    line.update(fields)
    return line


# ------------------------------------------------------------- NaN, Infinity, -Infinity


@pytest.mark.parametrize(
    ("constant", "value", "column"),
    [
        ("NaN", float("nan"), 254),
        ("Infinity", float("inf"), 254),
        ("-Infinity", -float("inf"), 254),
    ],
)
def test_native_refuses_nan_and_infinity_with_line_and_field(constant, value, column):
    data = jsonl(native_line(), native_line(question_id="q2", metadata={"score": value}))

    assert _error(data, "answers.jsonl") == (
        f"answers.jsonl: line 2: score: {constant} is not a number JSON allows; "
        f"write a number or null (column {column})"
    )


def test_alce_refuses_nan_in_a_pretty_printed_document_at_its_line():
    data = _alce().replace(b'"shot": 2', b'"shot": NaN')

    assert _error(data, "run.json") == (
        "run.json: line 4: shot: NaN is not a number JSON allows; write a number or null "
        "(column 13)"
    )


def test_ragas_refuses_infinity_in_a_list_item():
    data = jsonl(_ragas(scores=[0.5, float("inf")]))

    assert _error(data, "ragas.jsonl") == (
        "ragas.jsonl: line 1: Infinity is not a number JSON allows; write a number or null "
        "(column 89)"
    )


def test_expertqa_refuses_nan():
    data = jsonl(_expertqa(worthiness=float("nan")))

    assert _error(data, "e.jsonl") == (
        "e.jsonl: line 1: worthiness: NaN is not a number JSON allows; write a number or null "
        "(column 173)"
    )


def test_citeaudit_export_refuses_nan_score():
    lines = _file_lines()
    lines[1]["machine_check"]["best_score"] = float("nan")

    message = _error(jsonl(*lines), "set.jsonl")

    assert message.startswith("set.jsonl: line 2: best_score: NaN is not a number JSON allows")


def test_verdicts_refuse_nan():
    assert _verdict_error(jsonl(_verdict(claim_index=float("nan")))) == (
        "judge.jsonl: line 1: claim_index: NaN is not a number JSON allows; "
        "write a number or null (column 52)"
    )


def test_a_number_too_large_for_a_float_is_refused_like_infinity():
    line = json.dumps(native_line(metadata={"score": 1.5})).replace("1.5", "-1e400")

    assert _error(f"{line}\n".encode(), "answers.jsonl") == (
        "answers.jsonl: line 1: score: -1e400 is too large a number to store; JSON readers "
        "make it infinite (column 254)"
    )


def test_nan_inside_a_string_is_text_not_a_number():
    parsed = parse_file(jsonl(native_line(answer="NaN and Infinity [1].")), "answers.jsonl")

    assert parsed.records[0].answer == "NaN and Infinity [1]."


# ------------------------------------------------------------------ repeated keys


def test_native_refuses_a_repeated_key():
    line = json.dumps(native_line()).replace('"system":', '"system": "first", "system":')

    assert _error(f"{line}\n".encode(), "answers.jsonl") == (
        "answers.jsonl: line 1: system: the same key appears twice in one object; "
        "give it once (column 1)"
    )


def test_repeated_key_deep_in_a_document_names_the_line_of_its_object():
    data = _alce(docs=[{"title": "t", "text": "x"}]).replace(
        b'"text": "x"', b'"text": "x",\n          "text": "y"'
    )

    assert _error(data, "run.json") == (
        "run.json: line 10: text: the same key appears twice in one object; give it once (column 9)"
    )


def test_expertqa_refuses_a_system_given_twice():
    line = json.dumps(_expertqa())
    answers = line[line.index('"answers": ') + len('"answers": ') : -1]
    twice = line.replace(answers, answers[:-1] + ", " + answers[1:])

    assert _error(f"{twice}\n".encode(), "e.jsonl") == (
        "e.jsonl: line 1: gpt4: the same key appears twice in one object; give it once (column 31)"
    )


def test_verdicts_refuse_a_repeated_key():
    line = json.dumps(_verdict()).replace('"judgment":', '"judgment": "unclear", "judgment":')

    assert _verdict_error(f"{line}\n".encode()) == (
        "judge.jsonl: line 1: judgment: the same key appears twice in one object; "
        "give it once (column 1)"
    )


# --------------------------------------------------------------- lengths of names


def test_ids_that_differ_only_after_200_characters_are_refused_not_merged():
    long_id = "q" * 200
    data = jsonl(native_line(question_id=long_id + "A"), native_line(question_id=long_id + "B"))

    assert _error(data, "answers.jsonl") == (
        "answers.jsonl: line 1: question_id: is 201 characters long; at most 200 fit"
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [("question_id", "i" * 300), ("answer_id", "a" * 300), ("system", "s" * 300)],
)
def test_native_names_over_their_column_are_refused(field, value):
    assert _error(jsonl(native_line(**{field: value})), "answers.jsonl") == (
        f"answers.jsonl: line 1: {field}: is 300 characters long; at most 200 fit"
    )


def test_native_rater_name_over_its_column_is_refused():
    label = {"rater": "r" * 201, "claim": 0, "judgment": "supported"}

    assert _error(jsonl(native_line(labels=[label])), "answers.jsonl") == (
        "answers.jsonl: line 1: labels[0].rater: is 201 characters long; at most 200 fit"
    )


def test_two_systems_sharing_200_characters_are_refused_not_merged():
    shared = "gpt-4o " * 29  # 203 characters
    data = jsonl(native_line(system=shared + "A"), native_line(system=shared + "B"))

    assert _error(data, "answers.jsonl") == (
        "answers.jsonl: line 1: system: is 204 characters long; at most 200 fit"
    )


def test_ragas_system_over_its_column_is_refused():
    assert _error(jsonl(_ragas(system="s" * 250)), "ragas.jsonl") == (
        "ragas.jsonl: line 1: system: is 250 characters long; at most 200 fit"
    )


def test_alce_question_id_leaves_room_for_the_sample_number():
    data = _alce(id="x" * 199)

    assert (
        _error(data, "run.json") == "run.json: data[0].id: is 199 characters long; at most 196 fit"
    )


def test_alce_system_built_from_a_long_model_name_is_refused():
    data = json.dumps({"args": {"model": "m" * 250}, "data": json.loads(_alce())["data"]})

    assert _error(data.encode(), "run.json") == (
        "run.json: data[0].system: is 250 characters long; at most 200 fit"
    )


def test_expertqa_system_must_leave_room_in_the_answer_id():
    assert _error(jsonl(_expertqa(system="s" * 190)), "e.jsonl") == (
        "e.jsonl: line 1: answers." + "s" * 190 + ": is 190 characters long; at most 181 fit"
    )


def test_verdict_judge_over_its_column_is_refused():
    assert _verdict_error(jsonl(_verdict(judge="j" * 201))) == (
        "judge.jsonl: line 1: judge: is 201 characters long; at most 200 fit"
    )


def test_verdict_answer_id_over_its_column_is_refused():
    assert _verdict_error(jsonl(_verdict(answer_id="a" * 300))) == (
        "judge.jsonl: line 1: answer_id: is 300 characters long; at most 200 fit"
    )


# ------------------------------------------------------------ NUL and surrogates


@pytest.mark.parametrize(
    ("data", "filename", "message"),
    [
        (
            jsonl(native_line(system="a\x00b")),
            "answers.jsonl",
            "answers.jsonl: line 1: system: contains a NUL character (\\u0000)",
        ),
        (
            jsonl(native_line(metadata={"note": "a\x00b"})),
            "answers.jsonl",
            "answers.jsonl: line 1: metadata: contains a NUL character or an unpaired surrogate",
        ),
        (
            jsonl(_ragas(response="\ud800 [1].")),
            "ragas.jsonl",
            "ragas.jsonl: line 1: response: contains an unpaired surrogate escape "
            "(\\ud800-\\udfff)",
        ),
        (
            _alce(output="a\x00 [1]."),
            "run.json",
            "run.json: data[0].output: contains a NUL character (\\u0000)",
        ),
        (
            jsonl(_expertqa(claim_string="\udfff")),
            "e.jsonl",
            "e.jsonl: line 1: answers.gpt4.claims[0].claim_string: contains an unpaired "
            "surrogate escape (\\ud800-\\udfff)",
        ),
        (
            b'{"question_id": "q\xff"}\n',
            "answers.jsonl",
            "answers.jsonl: line 1: not valid UTF-8 at byte 18",
        ),
    ],
)
def test_text_a_database_cannot_store_is_refused(data, filename, message):
    assert _error(data, filename) == message


def test_verdicts_refuse_a_nul_in_the_rationale():
    assert _verdict_error(jsonl(_verdict(rationale="x\x00"))) == (
        "judge.jsonl: line 1: rationale: contains a NUL character (\\u0000)"
    )


# ------------------------------------------------------------- not JSON at all


def test_a_real_csv_file_is_named_as_a_table_not_as_broken_json():
    path = DATASETS / "ais" / "ann_wow.csv"
    if not path.exists():
        pytest.skip(f"the AIS dataset is not at {path} (set CITEAUDIT_DATASETS)")
    data = path.read_bytes()

    assert _error(data, "ann_wow.csv") == (
        "ann_wow.csv: line 1: this is not JSON: it looks like a CSV or TSV table. Citeaudit "
        "imports JSON and JSON Lines files (native (JSONL, one answer per line), alce (ALCE "
        "result JSON), ragas (RAGAS samples as JSONL or a JSON list), expertqa (ExpertQA "
        "JSONL), citeaudit (Citeaudit's own JSONL export))"
    )


def test_a_csv_whose_first_cell_is_a_number_is_named_as_a_table():
    assert _error(b"1,2,3\n4,5,6\n", "t.csv").startswith(
        "t.csv: line 1: this is not JSON: it looks like a CSV or TSV table."
    )


# ------------------------------------------------------------------------- budget


def test_budget_stops_parsing_at_the_first_answer_over_it():
    # The broken last line is never read: parsing stops at line 4.
    data = jsonl(*(native_line(question_id=f"q{i}") for i in range(5))) + b"{broken\n"
    budget = Budget("answers.jsonl", max_answers=3, advice=". Use the command line")

    assert _error(data, "answers.jsonl", budget=budget) == (
        "answers.jsonl: line 4: the file holds more than 3 answers, the most one import "
        "here may bring. Use the command line"
    )


def test_budget_counts_given_claims():
    claims = ["The warranty lasts two years [1]."] * 3
    data = jsonl(native_line(claims=claims), native_line(question_id="q2", claims=claims))
    budget = Budget("answers.jsonl", max_claims=5)

    assert _error(data, "answers.jsonl", budget=budget) == (
        "answers.jsonl: line 2: the file holds more than 5 claims, the most one import here "
        "may bring"
    )


def test_budget_counts_expertqa_answers_within_a_line():
    line = _expertqa()
    line["answers"]["bing"] = line["answers"]["gpt4"]
    budget = Budget("e.jsonl", max_answers=1)

    assert _error(jsonl(line), "e.jsonl", budget=budget) == (
        "e.jsonl: line 1: the file holds more than 1 answers, the most one import here may bring"
    )


def _file_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in _file(_answer()).decode().splitlines()]
