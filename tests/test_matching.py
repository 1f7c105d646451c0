import re
from dataclasses import replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from audit.matching import (
    DEFAULT_WEIGHTS,
    LIKELY_MIN_SCORE,
    MATCHER_VERSION,
    VERIFIED_MIN_SCORE,
    ClaimChecks,
    Highlight,
    QuoteCheck,
    _query,
    _rank,
    _wrong_citation,
    _wrong_citation_scored,
    cached_passage,
    check_claim,
    find_wrong_citation,
    fold,
    prepare_passage,
    rank_sentences,
    sentence_spans,
    trust_label,
    ungrounded_numbers,
    verify_quote,
)
from tests.conftest import is_word_char

REPORT = "Revenue rose to 45.2 million dollars.\n\nHeadcount grew to 1,204."
TEN_WORDS = "the committee approved the new budget after a long debate"


# ---------------------------------------------------------------------------- verify_quote


def test_worked_example_scores_the_longest_whole_word_run():
    check = verify_quote("Revenue rose to 88.9 billion dollars on record demand.", REPORT)

    assert check == QuoteCheck(verified=False, match=0.333)


def test_exact_quote_at_word_boundaries_verifies():
    assert verify_quote("Headcount grew to 1,204.", REPORT) == QuoteCheck(verified=True, match=1.0)


def test_changing_the_last_word_of_a_ten_word_quote_scores_point_nine():
    span = TEN_WORDS.rsplit(" ", 1)[0] + " vote"

    assert verify_quote(span, TEN_WORDS) == QuoteCheck(verified=False, match=0.9)


def test_changing_a_middle_word_scores_about_half():
    words = TEN_WORDS.split()
    words[5] = "old"

    assert verify_quote(" ".join(words), TEN_WORDS) == QuoteCheck(verified=False, match=0.5)


def test_a_word_inside_another_word_does_not_match():
    assert verify_quote("rose", "The question arose twice.") == QuoteCheck(False, 0.0)


def test_a_number_inside_a_longer_number_does_not_verify():
    assert verify_quote("5%", "It fell 15% last year.").verified is False


@pytest.mark.parametrize(
    ("span", "source"),
    [
        ("", REPORT),
        ("   ", REPORT),
        ("\u201c\u2026\u201d", REPORT),
        ("Revenue rose", ""),
        ("Revenue rose", " \n "),
    ],
)
def test_empty_span_or_source_gives_no_verdict(span, source):
    assert verify_quote(span, source) == QuoteCheck(verified=None, match=None)


@pytest.mark.parametrize(
    ("span", "source"),
    [
        ("10\u00a0000 people", "about 10 000 people came"),  # no-break space
        ("10\u2009000 people", "about 10 000 people came"),  # thin space
        ("10\u202f000 people", "about 10 000 people came"),  # narrow no-break space
        ("ten  \n\t people", "about ten people came"),  # a run of mixed whitespace
        ("don\u2019t stop", "we don't stop"),  # right single quote
        ("don\u2018t stop", "we don't stop"),  # left single quote
        ("don\u201at stop", "we don't stop"),  # single low quote
        ("don\u2032t stop", "we don't stop"),  # prime
        ("say \u201chi\u201d now", 'we say "hi" now'),  # curly double quotes
        ("say \u201ehi\u201d now", 'we say "hi" now'),  # double low quote
        ("say \u2033hi\u2033 now", 'we say "hi" now'),  # double prime
        ("1990\u20131995 data", "the 1990-1995 data"),  # en dash
        ("1990\u20141995 data", "the 1990-1995 data"),  # em dash
        ("1990\u20101995 data", "the 1990-1995 data"),  # hyphen
        ("1990\u20151995 data", "the 1990-1995 data"),  # horizontal bar
        ("a \u22125 change", "a -5 change"),  # minus sign
        ("REVENUE ROSE", "revenue rose"),  # case
    ],
)
def test_folding_rules(span, source):
    assert verify_quote(span, source) == QuoteCheck(verified=True, match=1.0)


def test_folding_applies_to_the_source_as_well():
    assert verify_quote("we don't stop", "We don\u2019t\u00a0stop") == QuoteCheck(True, 1.0)


def test_fold_gives_one_plain_lower_case_line():
    assert fold("  \u201cA\u00a0\u00a0B\u2019s\u201d \u2013 C\n") == '"a b\'s" - c'


@pytest.mark.parametrize(
    "span",
    [
        '"Revenue rose to 45.2 million dollars."',
        "\u201cRevenue rose to 45.2 million dollars\u201d",
        "...revenue rose to 45.2 million dollars...",
        "\u2026revenue rose to 45.2 million dollars\u2026",
        "[...] revenue rose to 45.2 million dollars",
        "revenue rose to 45.2 million dollars;",
        "revenue rose to 45.2 million dollars:",
        "revenue rose to 45.2 million dollars,",
    ],
)
def test_quote_marks_ellipses_and_trailing_punctuation_are_trimmed(span):
    assert verify_quote(span, REPORT) == QuoteCheck(verified=True, match=1.0)


def test_a_leading_minus_before_a_digit_is_kept():
    assert verify_quote("-5%", "Sales changed by -5% this year.").verified is True
    assert verify_quote("-5%", "Sales changed by 5% this year.").verified is False


def test_verify_quote_accepts_a_prepared_passage():
    prepared = prepare_passage(REPORT)

    assert verify_quote("headcount grew to 1,204", prepared) == QuoteCheck(True, 1.0)
    assert verify_quote("Revenue rose to 88.9 billion dollars on record demand.", prepared) == (
        QuoteCheck(verified=False, match=0.333)
    )


# ---------------------------------------------------------------------------- numbers


def test_numbers_found_character_for_character_are_grounded():
    assert ungrounded_numbers("Headcount grew to 1,204 in 2021.", [REPORT, "In 2021"]) == ()


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        ("It grew 7,5 percent.", "It grew 7.5 percent.", ("7,5",)),
        ("It cost 1.500 euros.", "It cost 1500 euros.", ("1.500",)),
        ("It cost 1500 euros.", "It cost 1,500 euros.", ("1500",)),
        ("It rose 5 times.", "It rose 15 times.", ("5",)),
    ],
)
def test_numbers_are_compared_without_normalising(claim, evidence, expected):
    assert ungrounded_numbers(claim, [evidence]) == expected


@pytest.mark.parametrize("marker", ["[2]", "[1, 2]", "[1-3]", "[1\u20133]", "[chunk 3]", "[1][2]"])
def test_citation_markers_are_not_numbers(marker):
    assert ungrounded_numbers(f"Revenue rose sharply {marker}.", ["Revenue rose."]) == ()


def test_a_citation_marker_in_the_evidence_does_not_ground_a_number():
    assert ungrounded_numbers("It happened 2 times.", ["It happened, as shown [2]."]) == ("2",)


def test_ungrounded_numbers_are_listed_once_in_order():
    assert ungrounded_numbers("3 of 12 rose, then 3 fell to 40.", ["12"]) == ("3", "40")


# ---------------------------------------------------------------------------- ranking

PASSAGE = (
    "Acme Corp annual report\n"
    "The company was founded in 1999 in Ohio. "
    "Revenue rose to 45.2 million dollars in 2023, driven by record demand. "
    "Headcount grew to 1,204 employees. "
    "The board approved a new dividend policy."
)


def _text(passages: list[str], highlight: Highlight) -> str:
    return passages[highlight.passage][highlight.start : highlight.end]


def test_rank_sentences_puts_the_matching_sentence_first():
    highlights = rank_sentences("Revenue rose to 45.2 million dollars [1].", [PASSAGE])

    assert _text([PASSAGE], highlights[0]) == (
        "Revenue rose to 45.2 million dollars in 2023, driven by record demand."
    )
    assert highlights[0].passage == 0
    assert [h.score for h in highlights] == sorted((h.score for h in highlights), reverse=True)


def test_rank_sentences_searches_across_passages():
    passages = ["Cats sleep a lot. They purr.", PASSAGE]

    highlights = rank_sentences("Headcount grew to 1,204 employees.", passages, k=1)

    assert len(highlights) == 1
    assert _text(passages, highlights[0]) == "Headcount grew to 1,204 employees."
    assert highlights[0].passage == 1


def test_a_heading_without_full_stop_is_its_own_sentence():
    highlights = rank_sentences("Acme Corp annual report", [PASSAGE], k=1)

    assert _text([PASSAGE], highlights[0]) == "Acme Corp annual report"


def test_later_places_go_to_the_neighbour_of_a_strong_match():
    passage = (
        "By law, the Secret Service is authorized to protect:\n"
        "The president, the vice president and their families.\n"
        "Secret agents also protect visiting heads of state. "
        "The service was founded to fight counterfeiting. "
        "Law enforcement careers are competitive."
    )

    highlights = rank_sentences(
        "The Secret Service is authorized by law to protect the president.", [passage], k=5
    )

    assert _text([passage], highlights[0]) == "By law, the Secret Service is authorized to protect:"
    assert "The president, the vice president and their families." in [
        _text([passage], h) for h in highlights
    ]


@pytest.mark.parametrize(
    ("claim", "inflected"),
    [
        ("Officials denied entry to visitors.", "Officials deny entry to visitors."),
        ("Prices increased sharply.", "Sharp price increases followed."),
        ("Several studies compared treatments.", "The team studied how treatments compare."),
    ],
)
def test_an_inflected_claim_word_matches_its_other_forms(claim, inflected):
    # The distractor shares one uninflected word; the evidence matches only through stems.
    passage = f"Entry, prices and treatments vary.\n{inflected}\nThe weather was fine."

    highlights = rank_sentences(claim, [passage], k=1)

    assert _text([passage], highlights[0]) == inflected


def test_a_heading_matching_one_claim_word_does_not_beat_a_full_sentence():
    passage = (
        "Vaccines\nHospital admissions fell sharply after the vaccines arrived.\nVaccines are free."
    )

    highlights = rank_sentences("Vaccines reduced hospital admissions.", [passage], k=3)

    assert _text([passage], highlights[0]) == (
        "Hospital admissions fell sharply after the vaccines arrived."
    )


ZOO = "\n".join(
    [
        "Lions and zebras live in the park.",
        "Lions and zebras graze in the park.",
        "Lions and zebras sleep in the park.",
        "Tourists arrive by bus.",
        "Lions hunt zebras at dusk.",
        "Guides carry radios.",
        "Tickets are sold at the gate.",
        "Rhinos wallow in mud.",
        "Rhinos are shy.",
        "Rhinos charge when scared.",
    ]
)


def test_later_places_go_to_a_sentence_covering_a_claim_word_no_earlier_place_has():
    claim = "Lions, zebras and rhinos live in the park."

    highlights = rank_sentences(claim, [ZOO], k=5)

    texts = [_text([ZOO], h) for h in highlights]
    assert texts[:3] == [
        "Lions and zebras live in the park.",
        "Lions and zebras graze in the park.",
        "Lions and zebras sleep in the park.",
    ]
    assert texts[3] == "Rhinos are shy."
    # Every highlight carries its own score: the lion sentence matches more of the claim
    # by itself, but adds nothing that the first three places do not already say.
    own = {_text([ZOO], h): h.score for h in rank_sentences(claim, [ZOO], k=10)}
    assert own["Lions hunt zebras at dusk."] > own["Rhinos are shy."]


def test_a_later_place_goes_to_a_date_line_giving_the_claims_year():
    # Real pages give an event's date on a line of its own; the year is one claim word of
    # many, so its share alone does not win the line a place.
    claim = (
        "In 2013, Gaetz announced that he would run for the state Senate seat held by his father."
    )
    page = "\n".join(
        [
            "Gaetz makes it official: he will run for his father's Senate seat",
            "Rep. Matt Gaetz filed to run for the Florida Senate seat held by his father, "
            "Don Gaetz.",
            "The seat ranks as one of the most Republican Senate districts in the state.",
            "Don Gaetz is Senate President and will leave the seat in 2016.",
            "Gaetz announced a fundraiser in Pensacola.",
            "The state Senate meets in March.",
            "Posted May 12, 2013 6:00pm",
        ]
    )
    date_line = "Posted May 12, 2013 6:00pm"

    texts = [_text([page], h) for h in rank_sentences(claim, [page], k=4)]
    without = _rank(claim, [page], 4, replace(DEFAULT_WEIGHTS, date=0.0))

    assert texts[3] == date_line
    assert date_line not in [_text([page], h) for h in without]


def test_a_later_place_does_not_go_to_a_share_line():
    claim = "Lions and zebras live in the park."
    page = "\n".join(
        [
            "Lions and zebras live in the park.",
            "Lions and zebras graze in the park.",
            "Lions and zebras sleep in the park.",
            "Tourists arrive by bus.",
            "Share on Facebook: lions in the park",
            "Guides carry radios.",
            "Old lions rest in the shade of the park at noon.",
        ]
    )

    texts = [_text([page], h) for h in rank_sentences(claim, [page], k=4)]
    without = _rank(claim, [page], 4, replace(DEFAULT_WEIGHTS, chrome=0.0))

    # The share line matches more of the claim by itself, and wins without the penalty.
    assert texts[3] == "Old lions rest in the shade of the park at noon."
    assert _text([page], without[3]) == "Share on Facebook: lions in the park"


def test_the_first_places_of_a_longer_ranking_are_the_shorter_ranking():
    claim = "Lions, zebras and rhinos live in the park."

    assert rank_sentences(claim, [ZOO], k=5)[:4] == rank_sentences(claim, [ZOO], k=4)


def test_a_repeated_sentence_is_highlighted_once():
    passage = "Revenue rose sharply. Revenue rose sharply. Costs fell."

    highlights = rank_sentences("Revenue rose sharply.", [passage, passage], k=3)

    assert [_text([passage, passage], h) for h in highlights].count("Revenue rose sharply.") == 1


def test_rank_sentences_accepts_prepared_passages():
    prepared = prepare_passage(PASSAGE)

    assert rank_sentences("Headcount grew", [prepared]) == rank_sentences(
        "Headcount grew", [PASSAGE]
    )


def test_a_claim_sharing_no_word_gets_no_highlight():
    assert rank_sentences("Zebras migrate.", [PASSAGE]) == []


def test_rank_sentences_handles_a_50000_word_document():
    filler = " ".join(
        f"Paragraph {i} discusses topic number {i} at some length." for i in range(6000)
    )
    document = filler + "\nThe rare quokka was sighted near Perth in 2019.\n" + filler
    assert len(document.split()) > 50_000

    highlights = rank_sentences("A quokka was sighted near Perth in 2019.", [document], k=3)

    assert _text([document], highlights[0]) == "The rare quokka was sighted near Perth in 2019."


# ---------------------------------------------------------------------------- wrong citation


def test_an_uncited_passage_that_clearly_supports_the_claim_is_named():
    cited = ["The weather in Paris was mild in spring."]
    uncited = ["Cats sleep a lot.", PASSAGE]

    found = find_wrong_citation("Headcount grew to 1,204 employees [1].", cited, uncited)

    assert found is not None
    assert found.passage == 1
    assert _text(uncited, found) == "Headcount grew to 1,204 employees."


def test_no_wrong_citation_when_the_cited_passage_supports_the_claim():
    assert find_wrong_citation("Headcount grew to 1,204 employees.", [PASSAGE], [PASSAGE]) is None


def test_no_wrong_citation_when_nothing_supports_the_claim():
    assert find_wrong_citation("Zebras migrate in herds.", [PASSAGE], ["Cats sleep."]) is None


# ---------------------------------------------------------------------------- trust label


@pytest.mark.parametrize(
    ("cited", "unknown", "score", "ungrounded", "label"),
    [
        (True, False, 1.0, (), "verified"),
        (True, False, VERIFIED_MIN_SCORE, (), "verified"),
        (True, False, VERIFIED_MIN_SCORE - 0.01, (), "likely"),
        (True, False, LIKELY_MIN_SCORE, (), "likely"),
        (True, False, LIKELY_MIN_SCORE - 0.01, (), "unknown"),
        (False, False, 1.0, (), "unknown"),  # uncited
        (True, True, 1.0, (), "unknown"),  # cites a passage that does not exist
        (True, False, 1.0, ("88.9",), "unknown"),  # a number not in the cited passages
        (True, False, 0.0, (), "unknown"),
    ],
)
def test_trust_label(cited, unknown, score, ungrounded, label):
    assert (
        trust_label(
            cited=cited, has_unknown_citation=unknown, best_score=score, ungrounded=ungrounded
        )
        == label
    )


# ---------------------------------------------------------------------------- check_claim


def test_check_claim_verifies_a_claim_its_cited_passage_states():
    checks = check_claim("Revenue rose to 45.2 million dollars in 2023 [1].", [PASSAGE], [])

    assert checks.label == "verified"
    assert checks.best_score == 1.0
    assert checks.numbers == (("45.2", True), ("2023", True))
    assert checks.ungrounded == ()
    assert checks.wrong_citation is None
    assert _text([PASSAGE], checks.highlights[0]).startswith("Revenue rose to 45.2 million")


def test_check_claim_refuses_a_changed_figure():
    checks = check_claim("Revenue rose to 88.9 million dollars in 2023 [1].", [PASSAGE], [])

    assert checks.label == "unknown"
    assert checks.numbers == (("88.9", False), ("2023", True))
    assert checks.ungrounded == ("88.9",)


def test_check_claim_without_citation_is_unknown_but_points_to_support():
    checks = check_claim("Headcount grew to 1,204 employees.", [], [PASSAGE])

    assert checks == ClaimChecks(
        label="unknown",
        highlights=(),
        best_score=0.0,
        numbers=(("1,204", False),),
        ungrounded=("1,204",),
        wrong_citation=checks.wrong_citation,
    )
    assert checks.wrong_citation is not None
    assert _text([PASSAGE], checks.wrong_citation) == "Headcount grew to 1,204 employees."


def test_check_claim_with_an_unknown_citation_is_unknown():
    checks = check_claim("Headcount grew to 1,204.", [PASSAGE], [], has_unknown_citation=True)

    assert checks.label == "unknown"


def test_check_claim_with_moderate_overlap_is_likely():
    checks = check_claim(
        "The board approved a generous new dividend policy for shareholders.", [PASSAGE], []
    )

    assert checks.label == "likely"
    assert LIKELY_MIN_SCORE <= checks.best_score < VERIFIED_MIN_SCORE


def test_check_claim_accepts_prepared_passages():
    prepared = prepare_passage(PASSAGE)

    assert check_claim("Headcount grew to 1,204.", [prepared], []) == check_claim(
        "Headcount grew to 1,204.", [PASSAGE], []
    )


def test_matcher_version_is_set():
    assert re.fullmatch(r"\d{4}\.\d{2}-\d+", MATCHER_VERSION)


# ---------------------------------------------------------------------------- properties

# Realistic characters, including everything folding touches; exotic code points whose
# case folding turns a mark into a letter would move word boundaries and are left out.
_CHARS = st.sampled_from(
    list("abcdefghij ABC 0123456789 .,;:!?-'\"()[]\n\t")
    + list("\u00a0\u2009\u202f\u2018\u2019\u201c\u201d\u2013\u2014\u2212\u2026\u00e9\u00df")
)


def _word_boundaries(text: str) -> list[int]:
    return [
        i
        for i in range(len(text) + 1)
        if (i > 0 and is_word_char(text[i - 1])) != (i < len(text) and is_word_char(text[i]))
    ]


@settings(max_examples=300)
@given(st.text(alphabet=_CHARS, min_size=1, max_size=80), st.data())
def test_an_exact_substring_between_word_boundaries_always_verifies(source, data):
    boundaries = _word_boundaries(source)
    assume(len(boundaries) >= 2)
    start = data.draw(st.sampled_from(boundaries[:-1]))
    end = data.draw(st.sampled_from([b for b in boundaries if b > start]))
    span = source[start:end]
    assume(any(is_word_char(c) for c in span))

    assert verify_quote(span, source) == QuoteCheck(verified=True, match=1.0)


def _longest_run_brute_force(span_words: list[str], source_words: list[str]) -> int:
    best = 0
    for i in range(len(span_words)):
        for j in range(len(source_words)):
            n = 0
            while (
                i + n < len(span_words)
                and j + n < len(source_words)
                and span_words[i + n] == source_words[j + n]
            ):
                n += 1
            best = max(best, n)
    return best


@given(
    st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=12),
    st.lists(st.sampled_from(["a", "b", "c", "x"]), min_size=1, max_size=30),
)
def test_match_is_the_longest_run_of_whole_words(span_words, source_words):
    check = verify_quote(" ".join(span_words), " ".join(source_words))

    if check.verified:
        assert check.match == 1.0
    else:
        run = _longest_run_brute_force(span_words, source_words)
        assert check.match == round(run / len(span_words), 3)


@settings(max_examples=150)
@given(
    st.text(alphabet=_CHARS, max_size=120),
    st.lists(st.text(alphabet=_CHARS, max_size=300), max_size=3),
    st.integers(0, 6),
)
def test_highlight_offsets_slice_back_to_a_sentence_of_the_passage(claim, passages, k):
    highlights = rank_sentences(claim, passages, k=k)

    assert len(highlights) <= k
    for h in highlights:
        assert (h.start, h.end) in sentence_spans(passages[h.passage])
        assert 0.0 <= h.score <= 1.0


@settings(max_examples=150)
@given(
    st.text(max_size=120),
    st.lists(st.text(max_size=200), max_size=3),
    st.lists(st.text(max_size=200), max_size=3),
    st.booleans(),
)
def test_no_input_raises(claim, cited, uncited, unknown):
    checks = check_claim(claim, cited, uncited, has_unknown_citation=unknown)
    verify_quote(claim, cited[0] if cited else "")
    ungrounded_numbers(claim, cited)
    find_wrong_citation(claim, cited, uncited)

    assert checks.label in ("verified", "likely", "unknown")
    assert 0.0 <= checks.best_score <= 1.0
    for h in checks.highlights:
        assert cited[h.passage][h.start : h.end].strip()
    if checks.wrong_citation is not None:
        w = checks.wrong_citation
        assert uncited[w.passage][w.start : w.end].strip()


_WORDS = ["leave", "salary", "notice", "period", "annual", "bonus", "the", "is", "not", "25", "7.5"]
_SENTENCE = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=8).map(
    lambda words: " ".join(words).capitalize() + "."
)
_PASSAGE_TEXT = st.lists(_SENTENCE, min_size=0, max_size=5).map(" ".join)


@settings(max_examples=300)
@given(
    claim=st.lists(st.sampled_from(_WORDS), min_size=0, max_size=8).map(" ".join),
    cited=st.lists(_PASSAGE_TEXT, min_size=0, max_size=3),
    uncited=st.lists(_PASSAGE_TEXT, min_size=0, max_size=3),
)
def test_wrong_citation_quick_exits_agree_with_scoring_every_sentence(claim, cited, uncited):
    query = _query(claim)
    cited_prepared = [prepare_passage(p) for p in cited]
    uncited_prepared = [prepare_passage(p) for p in uncited]

    assert _wrong_citation(query, cited_prepared, uncited_prepared) == _wrong_citation_scored(
        query, cited_prepared, uncited_prepared
    )


@settings(max_examples=300)
@given(
    claim=st.lists(st.sampled_from(_WORDS), min_size=0, max_size=8).map(" ".join),
    cited=st.lists(_PASSAGE_TEXT, min_size=0, max_size=3),
    uncited=st.lists(_PASSAGE_TEXT, min_size=0, max_size=3),
)
def test_check_claim_finds_the_wrong_citation_that_scoring_every_sentence_finds(
    claim, cited, uncited
):
    # check_claim hands its ranking's best support to the search, which may then never
    # read the uncited passages.
    expected = _wrong_citation_scored(
        _query(claim), [prepare_passage(p) for p in cited], [prepare_passage(p) for p in uncited]
    )

    assert check_claim(claim, cited, uncited).wrong_citation == expected


def test_an_uncited_passage_is_not_split_when_the_cited_one_states_the_claim():
    cited, uncited = prepare_passage(PASSAGE), prepare_passage("Salary is paid monthly.")

    check_claim("Headcount grew to 1,204 employees [1].", [cited], [uncited])

    assert "spans" not in vars(uncited)
    assert "index" not in vars(uncited)


@pytest.mark.parametrize(
    ("claim", "passage", "evidence"),
    [
        (
            "The article appeared in April 2014.",
            "Updated March 2014\nPosted 2014-04-23",
            "Posted 2014-04-23",
        ),
        (
            "Prices rose in February.",
            "Prices rose in March.\nPrices rose in Feb. and fell later.",
            "Prices rose in Feb. and fell later.",
        ),
    ],
)
def test_a_date_written_another_way_still_matches(claim, passage, evidence):
    # Without month names read across formats, the shorter wrong-month line would win.
    highlights = rank_sentences(claim, [passage], k=1)

    assert _text([passage], highlights[0]) == evidence


def test_a_cached_passage_is_prepared_once_per_text_and_checks_like_a_fresh_one():
    text = "Revenue rose to 45.2 million dollars. Headcount grew to 1,204 employees."
    claim = "Revenue rose to 45 million dollars."

    first, again = cached_passage(text), cached_passage("".join([text]))

    assert first is again
    assert first.text == text
    assert rank_sentences(claim, [first]) == rank_sentences(claim, [text])
    assert cached_passage(text + " ") is not first
