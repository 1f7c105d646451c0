from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.claims import (
    LOCATION_EXACT,
    LOCATION_FUZZY,
    LOCATION_NOT_LOCATED,
    LOCATION_SPLIT,
    Location,
    Marker,
    ParsedClaim,
    claim_from_span,
    find_markers,
    locate_claim,
    plan_claims,
    split_claims,
    strip_markers,
)
from audit.formats.records import AnswerRecord, PassageRecord

EXPERTQA = Path(__file__).resolve().parent.parent / "fixtures" / "expertqa" / "rand_test.jsonl"


def _numbers(text: str) -> list[tuple[int, ...]]:
    return [marker.numbers for marker in find_markers(text)]


def _sentences(answer: str) -> list[tuple[str, str, tuple[int, ...]]]:
    return [(answer[c.start : c.end], c.text, c.citations) for c in split_claims(answer)]


# --- find_markers: accepted forms -------------------------------------------------------


def test_single_marker_has_offsets_and_number() -> None:
    assert find_markers("Paris [1].") == [Marker(start=6, end=9, numbers=(1,))]


def test_adjacent_brackets_are_separate_markers() -> None:
    assert find_markers("x[1][2]") == [
        Marker(start=1, end=4, numbers=(1,)),
        Marker(start=4, end=7, numbers=(2,)),
    ]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("[1, 2]", (1, 2)),
        ("[1,2]", (1, 2)),
        ("[1; 2]", (1, 2)),
        ("[ 3 ]", (3,)),
        ("[1-3]", (1, 2, 3)),
        ("[1–3]", (1, 2, 3)),
        ("[1 - 3]", (1, 2, 3)),
        ("[2-2]", (2,)),
        ("[chunk 3]", (3,)),
        ("[Chunk 3]", (3,)),
        ("[CHUNK 3, chunk 4]", (3, 4)),
        ("[chunk3]", (3,)),
        ("[^1]", (1,)),
        ("[Source 2]", (2,)),
        ("[doc 2]", (2,)),
        ("[Document 2]", (2,)),
        ("[passage 2]", (2,)),
        ("[PASSAGE 2; source 5]", (2, 5)),
        ("[3, 1, 3]", (3, 1)),
        ("[1-3, 2, 5]", (1, 2, 3, 5)),
        ("[99999999999]", (99999999999,)),
        ("[999]", (999,)),
        ("[3000]", (3000,)),
        ("[chunk 2019]", (2019,)),
        ("[^2019]", (2019,)),
        ("[2019, 2020]", (2019, 2020)),
        ("[1-100]", tuple(range(1, 101))),
        # No passage is numbered 0: such a marker is kept, to be counted as cited-unknown.
        ("[0]", (0,)),
        ("[0-2]", (0, 1, 2)),
        ("[1, 0]", (1, 0)),
        ("[^0]", (0,)),
    ],
)
def test_citation_marker_forms(text: str, numbers: tuple[int, ...]) -> None:
    assert find_markers(text) == [Marker(start=0, end=len(text), numbers=numbers)]


@pytest.mark.parametrize(
    "text",
    [
        "[sic]",
        "[citation needed]",
        "[2019]",
        "[1000]",
        "[2999]",
        "[a]",
        "[1a]",
        "[1, see below]",
        "[text](https://example.org)",
        "[1](https://example.org)",
        "[ ]",
        "[]",
        "[1,]",
        "[3-1]",
        "[1-101]",
        "[1-99999999999]",
        "[1\n]",
        "[1.5]",
        "[-1]",
        "[" + "1, " * 100 + "1]",
    ],
)
def test_bracket_that_is_not_a_citation(text: str) -> None:
    assert find_markers(text) == []


def test_markers_found_in_order_with_offsets_into_text() -> None:
    text = "See [1] and [2, 3] but not [sic] or [2019]; then [^4]."
    assert find_markers(text) == [
        Marker(start=4, end=7, numbers=(1,)),
        Marker(start=12, end=18, numbers=(2, 3)),
        Marker(start=49, end=53, numbers=(4,)),
    ]


def test_nested_brackets_keep_the_inner_marker() -> None:
    assert find_markers("[[1]]") == [Marker(start=1, end=4, numbers=(1,))]


def test_find_markers_on_empty_text() -> None:
    assert find_markers("") == []


# --- strip_markers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ten dollars [2].", "Ten dollars."),
        ("Ten dollars. [2]", "Ten dollars."),
        ("Ten dollars.[2][3]", "Ten dollars."),
        ("Ten dollars[2] [3].", "Ten dollars."),
        ("A [1] and B [2].", "A and B."),
        ("A[1] and B[2].", "A and B."),
        ("A [1], B [2]; C [3]: D [4]!", "A, B; C: D!"),
        ("A [1], [2].", "A."),
        ("Is it [1]?", "Is it?"),
        ("(see [1])", "(see)"),
        ("He said “yes” [1].", "He said “yes”."),
        ("word[1]word", "word word"),
        ("[1] Leading marker.", "Leading marker."),
        ("No markers  here,\nreally .", "No markers here, really ."),
        ("In [2019] it was [sic] fine [1].", "In [2019] it was [sic] fine."),
        ("A link [here](https://x.org) [2].", "A link [here](https://x.org)."),
        ("Price\u00a0is 5 [1].", "Price\u00a0is 5."),
        ("[1][2]", ""),
        ("", ""),
        ("   ", ""),
    ],
)
def test_strip_markers(text: str, expected: str) -> None:
    assert strip_markers(text) == expected


# --- split_claims -----------------------------------------------------------------------


def test_split_claims_gives_full_claims_with_offsets_into_the_answer() -> None:
    answer = "A costs ten dollars [1]. B is free [2][3]."
    assert split_claims(answer) == [
        ParsedClaim(
            start=0,
            end=24,
            text="A costs ten dollars.",
            citations=(1,),
            markers=(Marker(start=20, end=23, numbers=(1,)),),
        ),
        ParsedClaim(
            start=25,
            end=42,
            text="B is free.",
            citations=(2, 3),
            markers=(
                Marker(start=35, end=38, numbers=(2,)),
                Marker(start=38, end=41, numbers=(3,)),
            ),
        ),
    ]


@pytest.mark.parametrize(
    ("answer", "first_span"),
    [
        ("It costs ten dollars [2]. Then it rose.", "It costs ten dollars [2]."),
        ("It costs ten dollars. [2] Then it rose.", "It costs ten dollars. [2]"),
        ("It costs ten dollars.[2] Then it rose.", "It costs ten dollars.[2]"),
        ("It costs ten dollars. [2]  Then it rose.", "It costs ten dollars. [2]"),
    ],
)
def test_marker_at_sentence_end_belongs_to_that_sentence(answer: str, first_span: str) -> None:
    assert _sentences(answer) == [
        (first_span, "It costs ten dollars.", (2,)),
        ("Then it rose.", "Then it rose.", ()),
    ]


def test_marker_group_after_punctuation_moves_to_previous_sentence() -> None:
    answer = "It costs ten dollars.[2][3] Then it rose [4]."
    assert _sentences(answer) == [
        ("It costs ten dollars.[2][3]", "It costs ten dollars.", (2, 3)),
        ("Then it rose [4].", "Then it rose.", (4,)),
    ]


def test_markers_after_question_and_exclamation_marks() -> None:
    assert _sentences("Wow!! [1] Really? [2], [3] Yes.") == [
        ("Wow!! [1]", "Wow!!", (1,)),
        ("Really? [2], [3]", "Really?", (2, 3)),
        ("Yes.", "Yes.", ()),
    ]


QUOTE_SHAPES = [
    ('"Revenue rose."', '"Revenue rose."'),
    ("\u201cRevenue rose.\u201d", "\u201cRevenue rose.\u201d"),
    ("\u2018Revenue rose.\u2019", "\u2018Revenue rose.\u2019"),
    ("'Revenue rose.'", "'Revenue rose.'"),
    ('"Revenue rose?"', '"Revenue rose?"'),
    ("\u201cRevenue rose!\u201d", "\u201cRevenue rose!\u201d"),
    ("(revenue rose.)", "(revenue rose.)"),
    ('"Revenue (and profit) rose."', '"Revenue (and profit) rose."'),
    ('"Revenue rose".', '"Revenue rose".'),
]


@pytest.mark.parametrize(("quoted", "text"), QUOTE_SHAPES)
@pytest.mark.parametrize("gap", [" ", ""])
def test_marker_after_a_closing_quote_ends_the_sentence(quoted: str, text: str, gap: str) -> None:
    answer = f"The filing says {quoted}{gap}[1] Headcount grew [2]."

    assert _sentences(answer) == [
        (f"The filing says {quoted}{gap}[1]", f"The filing says {text}", (1,)),
        ("Headcount grew [2].", "Headcount grew.", (2,)),
    ]


@pytest.mark.parametrize(
    ("quoted", "text"),
    [
        ('"Revenue rose. [1]"', '"Revenue rose."'),
        ('"Revenue rose [1]."', '"Revenue rose."'),
        ("\u201cRevenue rose. [1]\u201d", "\u201cRevenue rose.\u201d"),
        ("\u201cRevenue rose.[1]\u201d", "\u201cRevenue rose.\u201d"),
        ("\u2018Revenue rose? [1]\u2019", "\u2018Revenue rose?\u2019"),
        ("'Revenue rose! [1]'", "'Revenue rose!'"),
        ("(revenue rose [1].)", "(revenue rose.)"),
    ],
)
def test_marker_inside_a_closing_quote_ends_the_sentence(quoted: str, text: str) -> None:
    answer = f"The filing says {quoted} Headcount grew [2]."

    assert _sentences(answer) == [
        (f"The filing says {quoted}", f"The filing says {text}", (1,)),
        ("Headcount grew [2].", "Headcount grew.", (2,)),
    ]


@pytest.mark.parametrize(
    "answer",
    [
        # A title in quotes, then the sentence goes on in lower case.
        'The report "Why revenue rose." [1] was widely read [2].',
        'He asked "why?" [1] and nobody answered [2].',
        # An abbreviation inside the parentheses, not a sentence end.
        "It rose (see Fig. [1]) sharply [2].",
    ],
)
def test_a_quote_or_parenthesis_mid_sentence_keeps_one_claim(answer: str) -> None:
    assert [c.citations for c in split_claims(answer)] == [(1, 2)]


def test_markers_mid_sentence_make_one_claim() -> None:
    assert _sentences("A [1] and B [2].") == [("A [1] and B [2].", "A and B.", (1, 2))]


def test_citations_keep_first_appearance_order_without_duplicates() -> None:
    assert _sentences("X [3] then Y [1, 3] then Z [2].") == [
        ("X [3] then Y [1, 3] then Z [2].", "X then Y then Z.", (3, 1, 2))
    ]


def test_marker_only_sentence_merges_into_previous_sentence() -> None:
    assert _sentences("Fact one. [1]") == [("Fact one. [1]", "Fact one.", (1,))]


def test_marker_only_paragraph_merges_into_previous_sentence() -> None:
    assert _sentences("Fact one.\n\n[1]\n\nFact two.") == [
        ("Fact one.\n\n[1]", "Fact one.", (1,)),
        ("Fact two.", "Fact two.", ()),
    ]


def test_markers_opening_a_new_line_stay_with_that_line() -> None:
    assert _sentences("Fact one.\n[1] Fact two.") == [
        ("Fact one.", "Fact one.", ()),
        ("[1] Fact two.", "Fact two.", (1,)),
    ]


def test_paragraphs_and_single_newlines_are_sentence_boundaries() -> None:
    assert _sentences("Heading\nFirst paragraph [1]\n\nSecond paragraph [2].") == [
        ("Heading", "Heading", ()),
        ("First paragraph [1]", "First paragraph", (1,)),
        ("Second paragraph [2].", "Second paragraph.", (2,)),
    ]


def test_bullet_lists_keep_their_bullets_in_the_text() -> None:
    answer = "Steps:\n- Contain it [1]\n* Triage it [2].\n1. Eradicate it [3].\n2) Recover."
    assert _sentences(answer) == [
        ("Steps:", "Steps:", ()),
        ("- Contain it [1]", "- Contain it", (1,)),
        ("* Triage it [2].", "* Triage it.", (2,)),
        ("1. Eradicate it [3].", "1. Eradicate it.", (3,)),
        ("2) Recover.", "2) Recover.", ()),
    ]


def test_answer_without_markers_gives_claims_without_citations() -> None:
    answer = "The sky is blue. Grass is green."
    assert split_claims(answer) == [
        ParsedClaim(start=0, end=16, text="The sky is blue.", citations=(), markers=()),
        ParsedClaim(start=17, end=32, text="Grass is green.", citations=(), markers=()),
    ]


@pytest.mark.parametrize("answer", ["", "   ", "\n\n\t ", "[1]", "[1][2]", "[1]\n\n[2, 3]"])
def test_answers_without_claim_text_give_no_claims(answer: str) -> None:
    assert split_claims(answer) == []


def test_first_sentence_opening_with_a_marker_keeps_it() -> None:
    assert _sentences("[1] Fact one. Fact two [2].") == [
        ("[1] Fact one.", "Fact one.", (1,)),
        ("Fact two [2].", "Fact two.", (2,)),
    ]


def test_abbreviations_and_decimals_do_not_split() -> None:
    answer = "The U.S. economy grew 3.5% in Q1, e.g. in exports [1]. Dr. Smith agreed [2]."
    assert _sentences(answer) == [
        (
            "The U.S. economy grew 3.5% in Q1, e.g. in exports [1].",
            "The U.S. economy grew 3.5% in Q1, e.g. in exports.",
            (1,),
        ),
        ("Dr. Smith agreed [2].", "Dr. Smith agreed.", (2,)),
    ]


def test_unicode_text_keeps_offsets() -> None:
    answer = "He said “hello” [1]. The price\u00a0is 5 € 🎉 [2]. Café ’s fine."
    assert _sentences(answer) == [
        ("He said “hello” [1].", "He said “hello”.", (1,)),
        ("The price\u00a0is 5 € 🎉 [2].", "The price\u00a0is 5 € 🎉.", (2,)),
        ("Café ’s fine.", "Café ’s fine.", ()),
    ]


def test_repeated_sentences_get_their_own_offsets() -> None:
    claims = split_claims("Same [1]. Same [1]. Same [1].")
    assert [(c.start, c.end) for c in claims] == [(0, 9), (10, 19), (20, 29)]


def test_non_citation_brackets_stay_in_claim_text() -> None:
    assert _sentences("In [2019] he [sic] said so [citation needed].") == [
        (
            "In [2019] he [sic] said so [citation needed].",
            "In [2019] he [sic] said so [citation needed].",
            (),
        )
    ]


def test_markdown_link_is_not_a_citation() -> None:
    assert _sentences("See [the report](https://x.org) [3].") == [
        ("See [the report](https://x.org) [3].", "See [the report](https://x.org).", (3,))
    ]


def test_marker_offsets_point_into_the_answer() -> None:
    answer = "First [1]. Second [chunk 2, chunk 3]."
    second = split_claims(answer)[1]
    assert [answer[m.start : m.end] for m in second.markers] == ["[chunk 2, chunk 3]"]
    assert second.citations == (2, 3)


def test_split_claims_of_a_2000_word_answer_keeps_every_sentence() -> None:
    # Its speed is measured by bench/bench_claims.py, not asserted here.
    sentence = "The U.S. agency reported a 3.5% rise in costs, e.g. for fuel [1][2]. "
    paragraph = sentence * 10 + "Dr. Smith disagreed. [3]\n\n"
    answer = paragraph * 17
    assert len(answer.split()) > 2000
    claims = split_claims(answer)
    assert len(claims) == 17 * 11


# --- claim_from_span --------------------------------------------------------------------


def test_claim_from_span_trims_whitespace_and_strips_markers() -> None:
    answer = "A [1].  B is true [2][3]. "
    assert claim_from_span(answer, 6, 26) == ParsedClaim(
        start=8,
        end=25,
        text="B is true.",
        citations=(2, 3),
        markers=(
            Marker(start=18, end=21, numbers=(2,)),
            Marker(start=21, end=24, numbers=(3,)),
        ),
    )


def test_claim_from_span_keeps_empty_text_for_the_caller() -> None:
    assert claim_from_span("Fact. [4]", 6, 9) == ParsedClaim(
        start=6, end=9, text="", citations=(4,), markers=(Marker(start=6, end=9, numbers=(4,)),)
    )


def test_claim_from_span_ignores_a_link_cut_by_the_span() -> None:
    assert claim_from_span("See [1](https://x.org)", 0, 7).citations == ()


def test_claim_from_span_ignores_a_marker_cut_by_the_span() -> None:
    assert claim_from_span("Fact [12].", 0, 7).citations == ()


@pytest.mark.parametrize(("start", "end"), [(-1, 2), (2, 1), (0, 99)])
def test_claim_from_span_rejects_a_span_outside_the_answer(start: int, end: int) -> None:
    with pytest.raises(ValueError):
        claim_from_span("Short answer.", start, end)


# --- locate_claim -----------------------------------------------------------------------


ANSWER = (
    "In 2023, DataOps grows [2]. The adoption of cloud technologies is predicted to "
    "increase significantly, with the cloud managing 75% of all data workloads[3].\n\n"
    "This framework includes the following steps:\n\n- Contain it [1]."
)


def test_locate_claim_exact_hit() -> None:
    claim = "The adoption of cloud technologies is predicted"
    assert locate_claim(claim, ANSWER) == Location(start=28, end=75, score=1.0, exact=True)


def test_locate_claim_ignores_surrounding_whitespace_of_the_claim() -> None:
    assert locate_claim("  In 2023, DataOps grows [2]. ", ANSWER) == Location(
        start=0, end=27, score=1.0, exact=True
    )


def test_locate_claim_prefers_the_hit_after_the_hint() -> None:
    answer = "Same [1]. Other. Same [1]."
    assert locate_claim("Same [1].", answer, start_hint=9) == Location(17, 26, 1.0, True)
    assert locate_claim("Same [1].", answer, start_hint=20) == Location(0, 9, 1.0, True)


def test_locate_claim_with_different_markers_and_whitespace() -> None:
    claim = "This framework includes the following steps:  - Contain it [1] [4]."
    location = locate_claim(claim, ANSWER)
    assert location == Location(start=158, end=221, score=1.0, exact=False)
    assert ANSWER[location.start : location.end] == (
        "This framework includes the following steps:\n\n- Contain it [1]."
    )


def test_locate_claim_without_markers_widens_over_the_answer_markers() -> None:
    location = locate_claim("In 2023, DataOps grows", ANSWER)
    assert location == Location(start=0, end=22, score=1.0, exact=True)
    location = locate_claim("In 2023,  DataOps grows.", ANSWER)
    assert location == Location(start=0, end=27, score=1.0, exact=False)


def test_locate_claim_fuzzy_match_of_an_edited_claim() -> None:
    claim = (
        "The adoption of cloud technology is predicted to increase significantly, "
        "with cloud managing 75 percent of all data workloads [3]."
    )
    location = locate_claim(claim, ANSWER)
    assert location == Location(start=28, end=156, score=0.9286, exact=False)
    assert ANSWER[location.end - 4 : location.end] == "[3]."


def test_locate_claim_returns_none_for_unrelated_text() -> None:
    assert locate_claim("Bananas ride trains to the moon every Tuesday.", ANSWER) is None


@pytest.mark.parametrize("claim", ["", "   ", "[7]"])
def test_locate_claim_returns_none_without_claim_text(claim: str) -> None:
    assert locate_claim(claim, ANSWER) is None


def test_locate_claim_on_expertqa_locates_every_claim() -> None:
    exact = fuzzy = missing = 0
    for line in EXPERTQA.read_text(encoding="utf-8").splitlines():
        for system in json.loads(line)["answers"].values():
            answer, hint = system["answer_string"], 0
            for claim in system["claims"]:
                location = locate_claim(claim["claim_string"], answer, hint)
                if location is None:
                    missing += 1
                    continue
                hint = location.end
                if location.exact:
                    exact += 1
                    assert answer[location.start : location.end] == claim["claim_string"].strip()
                else:
                    fuzzy += 1
    # As docs/reference.md says: 1,207 verbatim, 85 after folding markers and whitespace, none lost.
    assert (exact, fuzzy, missing) == (1207, 85, 0)


# --- properties -------------------------------------------------------------------------


MARKERS = st.sampled_from(
    ["[1]", "[2][3]", "[1, 2]", "[4-6]", "[chunk 2]", "[^3]", "[0]", "[2019]", "[sic]", "[1](u)"]
)
WORDS = st.sampled_from(
    ["The", "U.S.", "e.g.", "Dr.", "3.5%", "cost", "“quoted”", "café", "🎉", "a", "-", "1."]
)
ENDINGS = st.sampled_from([".", "!", "?", "", "...", ":"])
SEPARATORS = st.sampled_from([" ", "  ", "\n", "\n\n", "\u00a0", "\n- ", "\n1. ", ""])


@st.composite
def answers(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(min_value=0, max_value=8))):
        words = draw(st.lists(WORDS, min_size=0, max_size=6))
        sentence = " ".join(words)
        if draw(st.booleans()):
            sentence += draw(st.sampled_from(["", " "])) + draw(MARKERS)
        sentence += draw(ENDINGS)
        if draw(st.booleans()):
            sentence += draw(st.sampled_from(["", " "])) + draw(MARKERS)
        parts.append(sentence + draw(SEPARATORS))
    return "".join(parts)


def _check_claims(answer: str) -> None:
    claims = split_claims(answer)
    previous_end = 0
    for claim in claims:
        span = answer[claim.start : claim.end]
        assert span
        assert span == span.strip()
        assert previous_end <= claim.start < claim.end
        previous_end = claim.end
        assert claim.text
        assert claim.text == claim.text.strip()
        assert "  " not in claim.text
        for marker in claim.markers:
            assert claim.start <= marker.start < marker.end <= claim.end
            assert answer[marker.start] == "["
            assert answer[marker.end - 1] == "]"
        assert claim.citations == tuple(
            dict.fromkeys(n for marker in claim.markers for n in marker.numbers)
        )
    # Only marker groups ("[1], [2]") may fall outside every claim.
    covered = {i for claim in claims for i in range(claim.start, claim.end)}
    covered |= {i for marker in find_markers(answer) for i in range(marker.start, marker.end)}
    assert all(answer[i] in ",;" or answer[i].isspace() or i in covered for i in range(len(answer)))


@settings(max_examples=300)
@given(st.text())
def test_split_claims_invariants_on_any_text(answer: str) -> None:
    _check_claims(answer)


@settings(max_examples=300)
@given(answers())
def test_split_claims_invariants_on_answer_like_text(answer: str) -> None:
    _check_claims(answer)


@given(st.text(alphabet=st.sampled_from("[]0123456789-–,; ^chunkCHUNK()a\n")))
def test_find_markers_slices_are_brackets_with_valid_numbers(text: str) -> None:
    for marker in find_markers(text):
        assert text[marker.start] == "["
        assert text[marker.end - 1] == "]"
        assert marker.numbers
        assert all(number >= 1 for number in marker.numbers)
        assert len(marker.numbers) == len(set(marker.numbers))


@given(st.text())
def test_find_markers_and_strip_markers_never_raise(text: str) -> None:
    find_markers(text)
    stripped = strip_markers(text)
    assert stripped == stripped.strip()
    assert "  " not in stripped


@given(st.text(), st.text(), st.integers(min_value=-5, max_value=500))
def test_locate_claim_never_raises(claim: str, answer: str, hint: int) -> None:
    location = locate_claim(claim, answer, hint)
    if location is not None:
        assert 0 <= location.start <= location.end <= len(answer)
        assert 0.8 <= location.score <= 1.0
        if location.exact:
            assert answer[location.start : location.end] == claim.strip()


@given(answers())
def test_every_split_claim_is_located_exactly(answer: str) -> None:
    for claim in split_claims(answer):
        sentence = answer[claim.start : claim.end]
        location = locate_claim(sentence, answer, claim.start)
        assert location == Location(claim.start, claim.end, 1.0, True)


def _record(answer: str, claims: tuple[str, ...] | None, passages: int = 2) -> AnswerRecord:
    return AnswerRecord(
        location="line 1",
        question_id="q1",
        question="How much leave?",
        answer_id="a1",
        system="s",
        answer=answer,
        passages=tuple(PassageRecord(title="", url="", text="p") for _ in range(passages)),
        claims=claims,
    )


def test_plan_claims_splits_an_answer_and_sorts_known_from_unknown_citations() -> None:
    planned = plan_claims(_record("Leave is 25 days [1]. Pay is 3% [2][5]. Nothing here.", None))

    assert [(p.text, p.location, p.citations, p.cited_unknown, p.uncited) for p in planned] == [
        ("Leave is 25 days.", LOCATION_SPLIT, (1,), (), False),
        ("Pay is 3%.", LOCATION_SPLIT, (2,), (5,), False),
        ("Nothing here.", LOCATION_SPLIT, (), (), True),
    ]


def test_plan_claims_locates_given_claims_and_marks_the_lost_one() -> None:
    answer = "Leave is 25 days [1]. Pay is 3% [2]."
    planned = plan_claims(_record(answer, ("Pay is 3% [2].", "Something else entirely")))

    assert [(p.order, p.location, p.citations) for p in planned] == [
        (0, LOCATION_EXACT, (2,)),
        (1, LOCATION_NOT_LOCATED, ()),
    ]
    assert answer[planned[0].start : planned[0].end] == "Pay is 3% [2]."


@pytest.mark.parametrize("marker", ["[0]", "[7]", "[0, 7]", "[0-2]"])
def test_plan_claims_keeps_markers_outside_the_passages_as_cited_unknown(marker: str) -> None:
    planned = plan_claims(_record(f"Leave is 25 days {marker}. Pay is 3% [2].", None, passages=3))

    numbers = find_markers(marker)[0].numbers
    assert [(p.text, p.citations, p.cited_unknown, p.uncited) for p in planned] == [
        (
            "Leave is 25 days.",
            tuple(n for n in numbers if 1 <= n <= 3),
            tuple(n for n in numbers if not 1 <= n <= 3),
            False,
        ),
        ("Pay is 3%.", (2,), (), False),
    ]


def test_plan_claims_keeps_unknown_markers_of_given_claims() -> None:
    answer = "Leave is 25 days [0]. Pay is 3% [7]. Bonus is paid [3]."
    planned = plan_claims(
        _record(answer, ("Leave is 25 days [0].", "Pay is 3% [7].", "Bonus is paid [3]."), 3)
    )

    assert [(p.text, p.location, p.citations, p.cited_unknown) for p in planned] == [
        ("Leave is 25 days.", LOCATION_EXACT, (), (0,)),
        ("Pay is 3%.", LOCATION_EXACT, (), (7,)),
        ("Bonus is paid.", LOCATION_EXACT, (3,), ()),
    ]


def test_planned_locations_are_the_values_the_claim_model_stores() -> None:
    from audit.models import Claim

    assert [
        Claim.Location.SPLIT.value,
        Claim.Location.EXACT.value,
        Claim.Location.FUZZY.value,
        Claim.Location.NOT_LOCATED.value,
    ] == [LOCATION_SPLIT, LOCATION_EXACT, LOCATION_FUZZY, LOCATION_NOT_LOCATED]
