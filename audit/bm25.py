"""BM25 over the sentences of one or more passages, with word statistics pooled per call.

Each passage is indexed once (postings per term); scoring merges the passages' counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, eq=False)
class SentenceIndex:
    """Inverted index of one passage: sentences are the documents.

    Compared by identity: it is a cache attached to a prepared passage.
    """

    postings: dict[str, tuple[tuple[int, int], ...]]  # term -> ((sentence, tf), ...)
    lengths: tuple[int, ...]  # terms per sentence, stop words excluded
    terms: tuple[frozenset[str], ...]  # distinct terms per sentence

    @property
    def size(self) -> int:
        return len(self.lengths)


def build_index(sentence_terms: Sequence[Sequence[str]]) -> SentenceIndex:
    postings: dict[str, list[tuple[int, int]]] = {}
    for i, terms in enumerate(sentence_terms):
        counts: dict[str, int] = {}
        for term in terms:
            counts[term] = counts.get(term, 0) + 1
        for term, tf in counts.items():
            bucket = postings.get(term)
            if bucket is None:
                postings[term] = [(i, tf)]
            else:
                bucket.append((i, tf))
    return SentenceIndex(
        postings={t: tuple(p) for t, p in postings.items()},
        lengths=tuple(len(t) for t in sentence_terms),
        terms=tuple(frozenset(t) for t in sentence_terms),
    )


def pooled_idf(terms: Sequence[str], indexes: Sequence[SentenceIndex]) -> dict[str, float]:
    """IDF of each query term over all sentences of all given passages.

    The "+1" form (Lucene's) keeps weights positive: a word in every sentence still counts a
    little, a word in none counts most, which is what an unsupported claim word should do.
    """
    n = sum(index.size for index in indexes)
    idf: dict[str, float] = {}
    for term in terms:
        df = sum(len(index.postings.get(term, ())) for index in indexes)
        idf[term] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
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
    for bit, (term, weight) in enumerate(idf.items()):
        flag = 1 << bit
        for sentence, tf in index.postings.get(term, ()):
            norm = k1 * (1.0 - b + b * lengths[sentence] / avgdl)
            scores[sentence] = scores.get(sentence, 0.0) + weight * tf * (k1 + 1.0) / (tf + norm)
            masks[sentence] = masks.get(sentence, 0) | flag
    return scores, masks
