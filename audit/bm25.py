"""BM25 over the sentences of one or more passages, with word statistics pooled per call.

Terms come from a small analyzer (stop words, light stemming); each passage is indexed once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import chain

# ---------------------------------------------------------------------------- analyzer

# Terms: numbers stay whole ("88.9", "1,204"), words are runs of letters.
TERM = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
# Function words carry no evidence; "no" and "not" are kept, they can flip a claim.
# fmt: off
STOP_WORDS = frozenset([
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and",
    "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between",
    "both", "but", "by", "can", "could", "d", "did", "do", "does", "doing", "down", "during",
    "each", "etc", "few", "for", "from", "further", "had", "has", "have", "having", "he",
    "her", "here", "hers", "herself", "him", "himself", "his", "how", "however", "i", "if",
    "in", "into", "is", "it", "its", "itself", "just", "ll", "m", "may", "me", "might", "more",
    "most", "must", "my", "myself", "nor", "of", "off", "on", "once", "only", "or", "other",
    "our", "ours", "ourselves", "out", "over", "own", "re", "s", "same", "shall", "she",
    "should", "so", "some", "such", "t", "than", "that", "the", "their", "theirs", "them",
    "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
    "under", "until", "up", "ve", "very", "was", "we", "were", "what", "when", "where",
    "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
    "yourself", "yourselves",
])
# fmt: on
_UNDOUBLE = frozenset("bdgmnprt")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A light English stemmer: plural and -ing/-ed/-ly endings, enough for overlap counting."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        # "studies" and "studied" both meet "study".
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if word[-1] == word[-2] and word[-1] in _UNDOUBLE:
                word = word[:-1]
            break
    # "use", "used", "using" and "uses" all meet at "us".
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


# Dates are written many ways on web pages: "Feb. 3" for "February 3", and page metadata
# as "2014-04-23". Month abbreviations are read as the month, and an ISO date also yields
# its month's name, so that a claim's "April 2014" meets it. "may" stays a stop word (the
# modal is far more common), so May is matched by its day and year only.
MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_MONTH_ABBREVIATIONS = {m[:3]: m for m in MONTHS if m != "may"} | {"sept": "september"}
_ISO_DATE = re.compile(r"(?<!\d)\d{4}-(\d{2})-\d{2}(?!\d)")


def term(word: str) -> str:
    """The index term of one analyzer word (a TERM match) that is not a stop word."""
    return stem(_MONTH_ABBREVIATIONS.get(word, word))


def terms(folded: str) -> list[str]:
    """Index terms of already case-folded text: stop words dropped, the rest stemmed.

    An ISO date ("2014-04-23") adds its month's name after the text's own terms.
    """
    found = [term(w) for w in TERM.findall(folded) if w not in STOP_WORDS]
    if "-" in folded:
        for m in _ISO_DATE.finditer(folded):
            month = int(m.group(1))
            if 1 <= month <= 12 and month != 5:
                found.append(stem(MONTHS[month - 1]))
    return found


# Terms of each whitespace-separated word seen, for sentence_index: an import's passages
# share most of their words, so each word is analysed about once. Cleared when full,
# like stem's cache.
_WORD_TERMS: dict[str, tuple[str, ...]] = {}
_WORD_TERMS_LIMIT = 200_000


def word_terms(word: str) -> tuple[str, ...]:
    """terms(word) of one case-folded word without whitespace, remembered."""
    found = _WORD_TERMS.get(word)
    if found is None:
        if len(_WORD_TERMS) >= _WORD_TERMS_LIMIT:
            _WORD_TERMS.clear()
        found = _WORD_TERMS[word] = tuple(terms(word))
    return found


# ---------------------------------------------------------------------------- index


# Up to this many sentences, a term's postings are found by reading each sentence's terms
# (a membership test in C per sentence) rather than from an inverted index: most passages
# of an import are a few sentences queried by one claim, and building the inverted index
# (a Python step per term occurrence) cost more than all their lookups.
_SCAN_SENTENCES = 48


@dataclass(frozen=True, eq=False)
class SentenceIndex:
    """Index of one passage: sentences are the documents.

    Compared by identity: it is a cache attached to a prepared passage. Built, it holds
    each sentence's terms; (sentence, tf) postings are counted for the few terms a claim
    asks about, since most passages of an import are queried by one claim and most of
    their terms never. A long passage gets an inverted index (`occurrences`) on its first
    lookup; a short one is read sentence by sentence.
    """

    sentence_terms: tuple[tuple[str, ...], ...]  # each sentence's terms, in order
    _postings: dict[str, list[tuple[int, int]]] = field(
        default_factory=dict, init=False, repr=False
    )

    @cached_property
    def lengths(self) -> tuple[int, ...]:
        """Terms per sentence, stop words excluded."""
        return tuple(map(len, self.sentence_terms))

    @property
    def size(self) -> int:
        return len(self.sentence_terms)

    @cached_property
    def occurrences(self) -> dict[str, list[int]]:
        """term -> sentence of each occurrence, ascending."""
        occurrences: dict[str, list[int]] = {}
        for i, terms in enumerate(self.sentence_terms):
            for term in terms:
                occurrences.setdefault(term, []).append(i)
        return occurrences

    def postings(self, term: str) -> list[tuple[int, int]]:
        """(sentence, tf) of every sentence containing term, ascending."""
        found = self._postings.get(term)
        if found is None:
            if len(self.sentence_terms) <= _SCAN_SENTENCES:
                found = [
                    (i, terms.count(term))
                    for i, terms in enumerate(self.sentence_terms)
                    if term in terms
                ]
            else:
                sentences = self.occurrences.get(term, ())
                if len(sentences) <= 1:
                    found = [(sentences[0], 1)] if sentences else []
                else:
                    counts: dict[int, int] = {}
                    for sentence in sentences:
                        counts[sentence] = counts.get(sentence, 0) + 1
                    found = list(counts.items())
            self._postings[term] = found
        return found

    def postings_of(self, terms: Sequence[str]) -> list[list[tuple[int, int]]]:
        """postings(term) of each term, in order. A short passage finds every term not
        looked up before in one pass over its sentences: a set intersection in C per
        sentence, then a step only per sentence a term occurs in, where postings reads
        every sentence once per term."""
        known = self._postings
        if len(self.sentence_terms) <= _SCAN_SENTENCES:
            missing = {term: [] for term in terms if term not in known}
            if missing:
                wanted = missing.keys()
                for i, sentence in enumerate(self.sentence_terms):
                    for term in wanted & sentence:
                        missing[term].append((i, sentence.count(term)))
                known.update(missing)
            return [known[term] for term in terms]
        return [self.postings(term) for term in terms]


def sentence_index(sentences: Iterable[str]) -> SentenceIndex:
    """build_index of the terms of these case-folded sentences.

    A term never holds whitespace, so a sentence's terms are those of its words in turn.
    """
    known = _WORD_TERMS.get
    sentence_terms = []
    for sentence in sentences:
        words = sentence.split()
        found = list(map(known, words))
        if None in found:
            found = [word_terms(word) for word in words]
        sentence_terms.append(tuple(chain.from_iterable(found)))
    return SentenceIndex(sentence_terms=tuple(sentence_terms))


def build_index(sentence_terms: Sequence[Sequence[str]]) -> SentenceIndex:
    return SentenceIndex(sentence_terms=tuple(tuple(terms) for terms in sentence_terms))


def pooled_idf(terms: Sequence[str], indexes: Sequence[SentenceIndex]) -> dict[str, float]:
    """IDF of each query term over all sentences of all given passages.

    The "+1" form (Lucene's) keeps weights positive: a word in every sentence still counts a
    little, a word in none counts most, which is what an unsupported claim word should do.
    """
    n = sum(index.size for index in indexes)
    idf: dict[str, float] = {}
    log = math.log
    if len(indexes) == 1:
        # Nearly every claim cites one passage: no sum over indexes per term (unpacking
        # a row of every index's postings per term measured 2-5% slower on an import).
        for term, found in zip(terms, indexes[0].postings_of(terms), strict=True):
            df = len(found)
            idf[term] = log(1.0 + (n - df + 0.5) / (df + 0.5))
        return idf
    for term in terms:
        df = sum(len(index.postings(term)) for index in indexes)
        idf[term] = log(1.0 + (n - df + 0.5) / (df + 0.5))
    return idf


def bm25_scores(
    idf: dict[str, float],
    index: SentenceIndex,
    avgdl: float,
    *,
    k1: float,
    b: float,
) -> tuple[dict[int, float], dict[int, int]]:
    """BM25 score and a bit mask of the matched query terms, for every sentence hit.

    Bit i of the mask stands for the i-th term of idf (insertion order), so the caller
    can weigh the union of two sentences' terms without touching strings again.
    """
    scores: dict[int, float] = {}
    masks: dict[int, int] = {}
    avgdl = avgdl or 1.0
    lengths = index.lengths
    k1_plus_1 = k1 + 1.0
    weighted = zip(idf.values(), index.postings_of(list(idf)), strict=True)
    for bit, (weight, found) in enumerate(weighted):
        flag = 1 << bit
        for sentence, tf in found:
            norm = k1 * (1.0 - b + b * lengths[sentence] / avgdl)
            value = weight * tf * k1_plus_1 / (tf + norm)
            # The first term met in a sentence (bit order) starts its score and mask: the
            # sums are those of get(sentence, 0.0) + value, in the same order.
            if sentence in masks:
                scores[sentence] += value
                masks[sentence] |= flag
            else:
                scores[sentence] = value
                masks[sentence] = flag
    return scores, masks
