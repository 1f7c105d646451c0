"""How the matcher's score is shown: one number, the one the label's thresholds apply to."""

from __future__ import annotations

import pytest

from audit.models import Claim, ClaimCheck
from audit.views.display import MatchScore, match_score


def _check(label: str, best_score: float, numbers: list[dict] = ()) -> ClaimCheck:
    # The ranking scores of the highlights are on another scale and must not leak into it.
    highlights = [{"passage": 1, "start": 0, "end": 5, "score": 0.1234}]
    return ClaimCheck(label=label, best_score=best_score, highlights=highlights, numbers=numbers)


@pytest.mark.parametrize(
    ("check", "claim", "expected"),
    [
        (
            _check("verified", 0.9091),
            Claim(),
            MatchScore(
                90,
                "All words found",
                "every word of the claim in one cited sentence, every number found",
            ),
        ),
        (
            _check("likely", 0.7499),
            Claim(),
            MatchScore(
                74,
                "Most words found",
                "most words from 50%, all found from 75% with none differing",
            ),
        ),
        (
            # Enough words for the top label, but a word of scope differs (audit.scope_words).
            _check("likely", 0.8),
            Claim(),
            MatchScore(80, "Most words found", "words of the claim differ from the best sentence"),
        ),
        (
            _check("unknown", 1.0, [{"token": "4", "grounded": False}]),
            Claim(),
            MatchScore(100, "Weak or no match", "a number is not in the cited passages"),
        ),
        (
            _check("unknown", 0.0),
            Claim(is_uncited=True),
            MatchScore(0, "Weak or no match", "the claim cites no passage"),
        ),
        (
            _check("unknown", 0.8),
            Claim(cited_unknown=[4]),
            MatchScore(80, "Weak or no match", "it cites a passage that was never supplied"),
        ),
        (
            _check("unknown", 0.57),
            Claim(),
            MatchScore(57, "Weak or no match", "most words from 50%"),
        ),
    ],
)
def test_match_score_is_the_best_score_as_a_floored_percent_with_the_labels_reason(
    check, claim, expected
):
    assert match_score(check, claim) == expected


def test_no_page_calls_a_string_match_verified():
    # "Verified" is kept for what a person decided or an exact quote check.
    for label in ClaimCheck.Label.values:
        shown = match_score(_check(label, 1.0), Claim())
        assert "verif" not in f"{shown.label} {shown.why}".lower()


def test_no_check_shows_no_score():
    assert match_score(None, Claim()) is None
