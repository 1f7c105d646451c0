from __future__ import annotations

import pytest

from audit.answer_flags import CitationChecks, no_citation_verifies
from audit.matching import check_claim

PASSING = CitationChecks(cited=True, cited_unknown=False, label="likely", wrong_citation=False)
UNCITED = CitationChecks(cited=False, cited_unknown=False, label="unknown", wrong_citation=False)


def _cited(**why: object) -> CitationChecks:
    fields = {"cited": True, "cited_unknown": False, "label": "verified", "wrong_citation": False}
    return CitationChecks(**{**fields, **why})


FAILURES = {
    "cited unknown": _cited(cited_unknown=True, label="unknown"),
    "cited unknown, no check": _cited(cited_unknown=True, label=None),
    "quote not found or numbers ungrounded": _cited(label="unknown"),
    "wrong citation": _cited(wrong_citation=True),
}


@pytest.mark.parametrize("claim", FAILURES.values(), ids=FAILURES.keys())
def test_each_failing_check_fails_a_cited_claim(claim: CitationChecks) -> None:
    assert claim.fails is True


@pytest.mark.parametrize("label", ["verified", "likely"])
def test_a_verified_or_likely_claim_without_a_better_passage_passes(label: str) -> None:
    assert _cited(label=label).fails is False


def test_a_cited_claim_without_a_check_does_not_fail() -> None:
    assert _cited(label=None).fails is False


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        ("Revenue rose to 5 million in 2025.", ""),
        ("Revenue rose to 9 million in 2025.", "numbers ungrounded"),
        ("Headcount at the plant doubled overnight.", "quote not found"),
    ],
)
def test_the_label_is_unknown_exactly_when_words_or_numbers_are_missing(claim, why) -> None:
    checks = check_claim(claim, ["Revenue rose to 5 million in 2025."], [])

    assert (checks.label == "unknown") == bool(why)
    assert bool(checks.ungrounded) == (why == "numbers ungrounded")


def test_an_answer_whose_every_cited_claim_fails_at_once_is_flagged() -> None:
    assert no_citation_verifies([*FAILURES.values(), UNCITED]) is True


def test_one_passing_citation_clears_the_answer() -> None:
    assert no_citation_verifies([*FAILURES.values(), PASSING]) is False


@pytest.mark.parametrize("claims", [[], [UNCITED, UNCITED]], ids=["no claims", "uncited"])
def test_an_answer_without_citations_is_not_flagged(claims: list[CitationChecks]) -> None:
    assert no_citation_verifies(claims) is False
