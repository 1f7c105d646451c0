import json

import pytest

from audit.formats import FormatError
from audit.formats.verdicts import Verdict, parse_verdicts


def _file(*objs) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


def test_verdicts_name_claims_by_index_or_text():
    data = _file(
        {
            "judge": "nli-v1",
            "answer_id": "a1",
            "claim_index": 0,
            "judgment": "supported",
            "evidence": ["The rate is 7.5%."],
            "rationale": "entailed",
        },
        {
            "judge": "nli-v1",
            "answer_id": "a1",
            "claim_text": "Second claim.",
            "judgment": "not_supported",
        },
    )

    verdicts = parse_verdicts(data, "judge.jsonl", max_bytes=10_000)

    assert verdicts == (
        Verdict("line 1", "nli-v1", "a1", 0, "", "supported", ("The rate is 7.5%.",), "entailed"),
        Verdict("line 2", "nli-v1", "a1", None, "Second claim.", "not_supported", (), ""),
    )


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            {"answer_id": "a", "claim_index": 0, "judgment": "supported"},
            "judge.jsonl: line 1: judge: required field is missing",
        ),
        (
            {"judge": "j", "answer_id": "a", "judgment": "supported"},
            "judge.jsonl: line 1: claim_index: give claim_index or claim_text to name the claim",
        ),
        (
            {"judge": "j", "answer_id": "a", "claim_index": -1, "judgment": "supported"},
            "judge.jsonl: line 1: claim_index: expected a whole number from 0",
        ),
        (
            {"judge": "j", "answer_id": "a", "claim_index": 0, "judgment": "yes"},
            "judge.jsonl: line 1: judgment: unknown judgment 'yes' (one of contradicted, "
            "not_supported, partially_supported, source_inaccessible, supported, unclear, "
            "wrong_citation)",
        ),
        (
            {
                "judge": "j",
                "answer_id": "a",
                "claim_index": 0,
                "judgment": "supported",
                "evidence": "text",
            },
            "judge.jsonl: line 1: evidence: expected a list, got string",
        ),
        (
            {"judge": "j", "answer_id": "a", "claim_index": 0, "judgment": "supported", "x": 1},
            "judge.jsonl: line 1: x: unknown field (expected one of answer_id, claim_index, "
            "claim_text, evidence, judge, judgment, rationale)",
        ),
    ],
)
def test_bad_verdicts_name_line_and_field(obj, message):
    with pytest.raises(FormatError) as error:
        parse_verdicts(_file(obj), "judge.jsonl", max_bytes=10_000)

    assert str(error.value) == message


def test_duplicate_verdict_for_one_claim_is_refused():
    row = {"judge": "j", "answer_id": "a", "claim_index": 0, "judgment": "supported"}

    with pytest.raises(FormatError) as error:
        parse_verdicts(_file(row, row), "judge.jsonl", max_bytes=10_000)

    assert str(error.value) == (
        "judge.jsonl: line 2: a second verdict by 'j' for the same claim (line 1)"
    )
