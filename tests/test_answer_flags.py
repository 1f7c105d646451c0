from __future__ import annotations

import pytest

from audit.answer_flags import CitationChecks, no_citation_verifies

PASSING = CitationChecks(
    cited=True, cited_unknown=False, best_score=0.8, ungrounded=False, wrong_citation=False
)
UNCITED = CitationChecks(
    cited=False, cited_unknown=False, best_score=0.0, ungrounded=False, wrong_citation=False
)


def _failing(**why: object) -> CitationChecks:
    fields = {
        "cited": True,
        "cited_unknown": False,
        "best_score": 0.8,
        "ungrounded": False,
        "wrong_citation": False,
    }
    return CitationChecks(**{**fields, **why})


FAILURES = {
    "cited unknown": _failing(cited_unknown=True),
    "cited unknown, no check": _failing(cited_unknown=True, best_score=None),
    "quote not found": _failing(best_score=0.49),
    "numbers ungrounded": _failing(ungrounded=True),
    "wrong citation": _failing(wrong_citation=True),
}


@pytest.mark.parametrize("claim", FAILURES.values(), ids=FAILURES.keys())
def test_each_failing_check_fails_a_cited_claim(claim: CitationChecks) -> None:
    assert claim.fails is True


def test_a_likely_match_with_grounded_numbers_passes() -> None:
    assert _failing(best_score=0.5).fails is False


def test_a_cited_claim_without_a_check_does_not_fail() -> None:
    assert _failing(best_score=None).fails is False


def test_an_answer_whose_every_cited_claim_fails_at_once_is_flagged() -> None:
    assert no_citation_verifies([*FAILURES.values(), UNCITED]) is True


def test_one_passing_citation_clears_the_answer() -> None:
    assert no_citation_verifies([*FAILURES.values(), PASSING]) is False


@pytest.mark.parametrize("claims", [[], [UNCITED, UNCITED]], ids=["no claims", "uncited"])
def test_an_answer_without_citations_is_not_flagged(claims: list[CitationChecks]) -> None:
    assert no_citation_verifies(claims) is False


def test_from_stored_reads_the_stored_values() -> None:
    assert CitationChecks.from_stored(
        is_uncited=False,
        cited_unknown=[0],
        best_score=0.9,
        numbers=[{"token": "5", "grounded": True}, {"token": "7", "grounded": False}],
        wrong_citation={"passage": 2, "start": 0, "end": 4, "score": 0.9},
    ) == CitationChecks(
        cited=True, cited_unknown=True, best_score=0.9, ungrounded=True, wrong_citation=True
    )
    assert CitationChecks.from_stored(
        is_uncited=True, cited_unknown=[], best_score=None, numbers=None, wrong_citation=None
    ) == CitationChecks(
        cited=False, cited_unknown=False, best_score=None, ungrounded=False, wrong_citation=False
    )
