import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.bm25 import build_index, sentence_index, stem, terms

# Letters, digits and the punctuation that sticks to words, plus characters where \w and
# str.isalpha() part ways: superscript digits and numerals (\w, not letters, not \d),
# Arabic-Indic digits (\d), the underscore, combining marks and non-breaking spaces.
_CHARS = st.sampled_from(
    list("abcdefghij ABC 0123456789 .,;:!?-'\"()[]_/%$\n\t")
    + list(
        "\u00a0\u2009\u202f\u2019\u201c\u2013\u2026\u00e9\u00df\u00b2\u2167\u00bd\u0663\u0301\u4e2d"
    )
)


@settings(max_examples=500)
@given(st.lists(st.text(alphabet=_CHARS, max_size=120), max_size=6))
def test_sentence_index_is_the_index_of_each_sentence_s_regex_terms(texts):
    sentences = [text.casefold() for text in texts]
    expected = build_index([terms(sentence) for sentence in sentences])

    index = sentence_index(sentences)

    assert index.occurrences == expected.occurrences
    assert index.lengths == expected.lengths


@settings(max_examples=300)
@given(st.lists(st.lists(st.sampled_from(["leav", "salary", "not", "25", "7.5"]), max_size=8)))
def test_postings_are_each_sentence_with_its_term_count(sentence_terms):
    index = build_index(sentence_terms)
    # The straightforward index: one (sentence, tf) per sentence a term occurs in, ascending.
    expected: dict[str, list[tuple[int, int]]] = {}
    for i, words in enumerate(sentence_terms):
        for word in dict.fromkeys(words):
            expected.setdefault(word, []).append((i, words.count(word)))

    for term in ["leav", "salary", "not", "25", "7.5", "absent"]:
        assert index.postings(term) == expected.get(term, [])
    assert index.lengths == tuple(len(words) for words in sentence_terms)


@pytest.mark.parametrize(
    ("written", "month"),
    [("jan", "january"), ("feb", "february"), ("sept", "september"), ("dec", "december")],
)
def test_a_month_abbreviation_is_the_month(written, month):
    assert terms(f"{written}. 3, 2014") == terms(f"{month} 3, 2014")


def test_an_iso_date_also_gives_its_month_name():
    assert terms("published 2014-04-23t12:33:28") == [
        *terms("published 2014 04 23t12:33:28"),
        stem("april"),
    ]
    # May stays a stop word (the modal), and a number that is no date adds nothing.
    assert stem("may") not in terms("2014-05-23")
    assert terms("2014-13-01") == ["2014", "13", "01"]
    assert terms("call 0123-45-67") == ["call", "0123", "45", "67"]


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 -.", max_size=60))
def test_terms_of_a_text_are_those_of_its_words(text):
    # sentence_index reads a sentence word by word: the two analyses must agree.
    by_word = [t for word in text.split() for t in terms(word)]
    assert sorted(terms(text)) == sorted(by_word)
