"""The judge's prompt and the check every reply passes (audit/judge_prompt.py), no database."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.judge_prompt import (
    DEFAULT_TEMPLATE,
    REPLY_FORMAT,
    ClaimPrompt,
    PassageText,
    ReplyError,
    check_reply,
    render_prompt,
)

ANSWER = "Returns take 30 days. [1] Refunds are fast. [2]"
CLAIM = ClaimPrompt(
    guidelines="Cited passages only.",
    question="How long do returns take?",
    answer=ANSWER,
    claim="Returns take 30 days.",
    claim_start=0,
    claim_end=21,
    passages=(
        PassageText(1, "Returns", "Returns take 30 days. Shipping is free.", cited=True),
        PassageText(2, "Refunds", "Refunds take a week.", cited=False),
    ),
)


def test_the_default_prompt_marks_the_claim_and_numbers_the_sentences():
    prompt = render_prompt(DEFAULT_TEMPLATE, CLAIM)

    assert "⟦Returns take 30 days.⟧ [1] Refunds are fast. [2]" in prompt
    assert (
        "[1] Returns (cited by the claim)\n  S1: Returns take 30 days.\n  S2: Shipping is free."
        in prompt
    )
    assert "[2] Refunds (not cited by the claim)\n  S3: Refunds take a week." in prompt
    assert "Cited passages only." in prompt
    assert '"judgment": one of "supported", "partially_supported"' in prompt


def test_a_template_may_leave_out_parts_and_keep_unknown_dollar_names():
    assert render_prompt("Q: $question costs $5 $unknown", CLAIM) == (
        "Q: How long do returns take? costs $5 $unknown"
    )


def test_a_valid_reply_becomes_spans():
    reply = check_reply(
        '```json\n{"judgment": "partially_supported", "evidence": [1, 1], '
        '"unsupported_spans": ["30 days"], "rationale": " ok "}\n```',
        CLAIM,
    )

    assert reply.judgment == "partially_supported"
    assert [(s.number, s.passage, s.start, s.end) for s in reply.evidence] == [(1, 1, 0, 21)]
    assert reply.unsupported_spans == ({"text": "30 days", "start": 13, "end": 20},)
    assert reply.rationale == "ok"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("It is supported.", "The reply is not JSON: 'It is supported.'."),
        ("[1, 2]", "The reply is JSON but not an object."),
        ('{"judgment": "true"}', "judgment 'true' is not one of"),
        ('{"judgment": "supported", "evidence": [4]}', "evidence sentence 4 is out of range"),
        ('{"judgment": "supported", "evidence": [0]}', "evidence sentence 0 is out of range"),
        ('{"judgment": "supported", "evidence": ["1"]}', "evidence '1' is not a sentence number"),
        ('{"judgment": "supported", "evidence": [true]}', "evidence True is not a sentence"),
        ('{"judgment": "supported"}', "needs at least one evidence sentence"),
        ('{"judgment": "wrong_citation"}', "needs the passage that does support"),
        ('{"judgment": "wrong_citation", "wrong_citation_passage": 1}', "already cited"),
        ('{"judgment": "wrong_citation", "wrong_citation_passage": 7}', "not a passage"),
        (
            '{"judgment": "not_supported", "unsupported_spans": ["forty"]}',
            "unsupported span 'forty' is not in the claim",
        ),
        ('{"judgment": "unclear", "rationale": 3}', "rationale is not text"),
        ('{"judgment": "unclear", "answers_question": "yes"}', "answers_question 'yes' is not"),
        (None, "The reply is not JSON"),
    ],
)
def test_an_invalid_reply_is_refused_naming_why(content, message):
    with pytest.raises(ReplyError) as refused:
        check_reply(content, CLAIM)

    assert message in str(refused.value)


@pytest.mark.parametrize(
    ("said", "read"),
    [(', "answers_question": true', True), (', "answers_question": false', False), ("", None)],
)
def test_answers_question_is_read_when_the_reply_says_it(said, read):
    reply = check_reply('{"judgment": "unclear"' + said + "}", CLAIM)

    assert reply.answers_question is read


def test_the_reply_format_asks_whether_the_claim_answers_the_question():
    assert '"answers_question": true if the claim states what the question asks' in REPLY_FORMAT


@given(st.text(max_size=200))
def test_any_reply_text_is_a_verdict_or_a_reply_error(content):
    try:
        reply = check_reply(content, CLAIM)
    except ReplyError:
        return
    assert reply.judgment


def test_the_reference_shows_the_default_template_as_shipped():
    from pathlib import Path

    reference = (Path(__file__).resolve().parents[1] / "docs" / "reference.md").read_text()

    assert DEFAULT_TEMPLATE.strip() in reference
