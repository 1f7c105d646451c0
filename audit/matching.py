"""String checks on a claim and its sources: quote and number checks, evidence highlights.

Everything here is deterministic text processing (no model), so its verdicts cannot hallucinate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from rapidfuzz import fuzz

from audit.bm25 import SentenceIndex, bm25_scores, build_index, pooled_idf
from audit.sentences import sentence_spans

__all__ = [
    "MATCHER_VERSION",
    "ClaimChecks",
    "Highlight",
    "PreparedPassage",
    "QuoteCheck",
    "TrustLabel",
    "check_claim",
    "find_wrong_citation",
    "fold",
    "prepare_passage",
    "rank_sentences",
    "sentence_spans",
    "trust_label",
    "ungrounded_numbers",
    "verify_quote",
]

# Stored next to every result: bump when any result for the same input would change.
MATCHER_VERSION = "2026.11-1"

TrustLabel = Literal["verified", "likely", "unknown"]

# Thresholds on ClaimChecks.best_score (see trust_label for what they mean and why).
VERIFIED_MIN_SCORE = 0.75
LIKELY_MIN_SCORE = 0.45
# An uncited passage must beat the cited ones by this much to be called the right source.
WRONG_CITATION_MARGIN = 0.2

# ---------------------------------------------------------------------------- folding

_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u2035"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u2036"
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_FOLD_TABLE = str.maketrans(
    {
        **dict.fromkeys(map(ord, _SINGLE_QUOTES), "'"),
        **dict.fromkeys(map(ord, _DOUBLE_QUOTES), '"'),
        **dict.fromkeys(map(ord, _DASHES), "-"),
    }
)
_WHITESPACE = re.compile(r"\s+")


def fold(text: str) -> str:
    """Fold text for comparison: one space per whitespace run, plain quotes and dashes, lower case.

    casefold() rather than lower(): lower() turns a final sigma into a different letter
    depending on what follows, so a quote cut from a word could fold unlike its source.
    """
    return _WHITESPACE.sub(" ", text.translate(_FOLD_TABLE)).casefold().strip()


# ---------------------------------------------------------------------------- quotes

# Words for quote runs: numbers like 88.9 and 1,204 and words like don't stay one word,
# so a changed figure is one changed word.
_WORD = re.compile(r"\w+(?:[.,'-]\w+)*")
_EDGE_QUOTES = "'\"`\u00ab\u00bb\u2039\u203a"
_TRAILING_TRIM = _EDGE_QUOTES + ".,;:\u2026 "
_LEADING_TRIM = _EDGE_QUOTES + ".,;:\u2026- "
_BRACKETED_ELLIPSIS = re.compile(r"^\[(?:\.\.\.|\u2026)\]\s*|\s*\[(?:\.\.\.|\u2026)\]$")


@dataclass(frozen=True)
class QuoteCheck:
    verified: bool | None
    match: float | None


def verify_quote(span: str, source: str | PreparedPassage) -> QuoteCheck:
    """Check that span is quoted verbatim from source, after folding both.

    Verified when the folded span is a substring of the folded source starting and ending
    at word boundaries. Otherwise match is the share of the span's words in the longest run
    of consecutive span words that appears as consecutive whole words of the source.
    """
    folded_source = source.folded if isinstance(source, PreparedPassage) else fold(source)
    needle = _trim_quote(fold(span))
    if not needle or not folded_source:
        return QuoteCheck(verified=None, match=None)
    if _occurs_between_word_boundaries(needle, folded_source):
        return QuoteCheck(verified=True, match=1.0)
    words = _WORD.findall(needle)
    if not words:
        return QuoteCheck(verified=False, match=0.0)
    run = _longest_word_run(words, _WORD.findall(folded_source))
    return QuoteCheck(verified=False, match=round(run / len(words), 3))


def _trim_quote(span: str) -> str:
    previous = None
    while span != previous:
        previous = span
        span = _BRACKETED_ELLIPSIS.sub("", span)
        span = span.rstrip(_TRAILING_TRIM)
        # A minus sign belongs to the number it precedes: "-5%" stays "-5%".
        while span and span[0] in _LEADING_TRIM:
            if span[0] == "-" and len(span) > 1 and span[1].isdigit():
                break
            span = span[1:]
    return span


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _occurs_between_word_boundaries(needle: str, haystack: str) -> bool:
    # A boundary is only required where the needle's own edge is a word character:
    # "5%" must not match inside "15%", while "%" needs no neighbour check.
    check_start = _is_word_char(needle[0])
    check_end = _is_word_char(needle[-1])
    at = haystack.find(needle)
    while at != -1:
        end = at + len(needle)
        starts_ok = not check_start or at == 0 or not _is_word_char(haystack[at - 1])
        ends_ok = not check_end or end == len(haystack) or not _is_word_char(haystack[end])
        if starts_ok and ends_ok:
            return True
        at = haystack.find(needle, at + 1)
    return False


def _longest_word_run(words: Sequence[str], source_words: Sequence[str]) -> int:
    """Length of the longest run of consecutive words that also appear consecutively in source."""
    positions: dict[str, list[int]] = {}
    for i, word in enumerate(words):
        positions.setdefault(word, []).append(i)
    best = 0
    previous: dict[int, int] = {}
    for word in source_words:
        indices = positions.get(word)
        if indices is None:
            previous = {}
            continue
        current = {i: previous.get(i - 1, 0) + 1 for i in indices}
        best = max(best, max(current.values()))
        previous = current
    return best


# ---------------------------------------------------------------------------- numbers

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# Citation markers of generated answers: [2], [1, 2], [1-3], [1][2], [chunk 3], [Source 2].
_CITATION_MARKER = re.compile(
    r"\[\s*(?:(?:chunk|source|doc|document|passage|ref|context)\s*)?\d+"
    r"(?:\s*(?:[-,;\u2010-\u2015]|and)\s*(?:(?:chunk|source|doc|document|passage|ref)\s*)?\d+)*\s*\]",
    re.IGNORECASE,
)


def _without_markers(text: str) -> str:
    return _CITATION_MARKER.sub(" ", text)


def _number_tokens(text: str) -> list[str]:
    return _NUMBER.findall(_without_markers(text))


def ungrounded_numbers(text: str, evidence: Sequence[str | PreparedPassage]) -> tuple[str, ...]:
    """Number tokens of text (citation markers removed) that no evidence text contains.

    Compared character for character, without parsing: "7,5" is not "7.5" and "1.500" is
    not "1500", because a figure that needs interpreting to match is exactly what a reviewer
    must see. Each ungrounded token is listed once, in order of first appearance.
    """
    available = _evidence_numbers(evidence)
    return tuple(dict.fromkeys(n for n in _number_tokens(text) if n not in available))


def _evidence_numbers(evidence: Sequence[str | PreparedPassage]) -> frozenset[str]:
    numbers: set[str] = set()
    for item in evidence:
        if isinstance(item, PreparedPassage):
            numbers |= item.numbers
        else:
            numbers.update(_number_tokens(item))
    return frozenset(numbers)


# ---------------------------------------------------------------------------- terms

_TERM = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
_STOP_WORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "nor", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "s", "t", "d", "ll", "m", "re", "ve", "may", "might", "must", "shall", "however", "etc"]
)
_UNDOUBLE = frozenset("bdgmnprt")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    """A light English stemmer: plural and -ing/-ed/-ly endings, enough for overlap counting."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
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


def _terms(folded: str) -> list[str]:
    return [_stem(w) for w in _TERM.findall(folded) if w not in _STOP_WORDS]


# ---------------------------------------------------------------------------- passages


@dataclass(frozen=True, eq=False)
class PreparedPassage:
    """A passage split, folded and indexed once, to be checked against many claims.

    Compared by identity: it is a cache of work done on `text`.
    """

    text: str
    spans: tuple[tuple[int, int], ...]  # sentence offsets into text
    sentences: tuple[str, ...]  # folded sentence texts
    folded: str  # the whole text folded, for quote checks
    numbers: frozenset[str]  # number tokens, citation markers removed
    index: SentenceIndex


def prepare_passage(text: str) -> PreparedPassage:
    text = text or ""
    spans = tuple(sentence_spans(text))
    sentences = tuple(fold(text[start:end]) for start, end in spans)
    return PreparedPassage(
        text=text,
        spans=spans,
        sentences=sentences,
        folded=fold(text),
        numbers=frozenset(_number_tokens(text)),
        index=build_index([_terms(s) for s in sentences]),
    )


def _prepared(passages: Sequence[str | PreparedPassage]) -> list[PreparedPassage]:
    return [p if isinstance(p, PreparedPassage) else prepare_passage(p) for p in passages]


# ---------------------------------------------------------------------------- ranking


@dataclass(frozen=True)
class Highlight:
    passage: int  # index into the passages given to the call
    start: int  # character offsets into that passage's text
    end: int
    score: float  # 0..1, comparable across calls


@dataclass(frozen=True)
class RankWeights:
    """Weights of the bounded score components; they sum to 1 so a score stays in 0..1.

    Tuned on half of the evaluation data (bench/eval_ranking.py) and reported on the other.
    """

    bm25: float = 0.35
    coverage: float = 0.2
    context: float = 0.15
    fuzz: float = 0.3
    k1: float = 1.2
    b: float = 0.75
    # Sentences (best lexical first) that also get the slower rapidfuzz comparison.
    fuzz_candidates: int = 40


DEFAULT_WEIGHTS = RankWeights()


@dataclass(frozen=True)
class _Query:
    folded: str
    terms: tuple[str, ...]  # distinct, in order


def _query(claim: str) -> _Query:
    folded = fold(_without_markers(claim))
    return _Query(folded=folded, terms=tuple(dict.fromkeys(_terms(folded))))


@dataclass(frozen=True)
class _Scored:
    passage: int
    sentence: int
    score: float


def _score_sentences(
    query: _Query,
    passages: Sequence[PreparedPassage],
    weights: RankWeights = DEFAULT_WEIGHTS,
) -> list[_Scored]:
    """Score every sentence sharing a term with the claim; best first.

    Each component is bounded by 1 and normalised by the claim's own total term weight,
    so a score means the same for a 5-sentence passage and a 3,000-sentence document.
    """
    indexes = [p.index for p in passages]
    sentence_count = sum(index.size for index in indexes)
    if not query.terms or sentence_count == 0:
        return []
    idf = pooled_idf(query.terms, indexes)
    total = sum(idf.values())
    avgdl = sum(sum(index.lengths) for index in indexes) / sentence_count
    bit_weights = [w / total for w in idf.values()]
    mask_weight: dict[int, float] = {}

    def weight_of(mask: int) -> float:
        cached = mask_weight.get(mask)
        if cached is None:
            cached = sum(w for bit, w in enumerate(bit_weights) if mask >> bit & 1)
            mask_weight[mask] = cached
        return cached

    lexical: list[tuple[float, int, int, float]] = []
    for p, index in enumerate(indexes):
        scores, masks = bm25_scores(idf, index, avgdl, k1=weights.k1, b=weights.b)
        for s, raw in scores.items():
            mask = masks[s]
            coverage = weight_of(mask)
            context = max(
                weight_of(mask | masks.get(s - 1, 0)), weight_of(mask | masks.get(s + 1, 0))
            )
            value = (
                weights.bm25 * min(1.0, raw / total)
                + weights.coverage * coverage
                + weights.context * context
            )
            lexical.append((value, p, s, value))
    lexical.sort(key=lambda item: (-item[0], item[1], item[2]))
    scored: list[_Scored] = []
    for rank, (value, p, s, _) in enumerate(lexical):
        if weights.fuzz and rank < weights.fuzz_candidates:
            value += (
                weights.fuzz * fuzz.token_set_ratio(query.folded, passages[p].sentences[s]) / 100
            )
        scored.append(_Scored(passage=p, sentence=s, score=value))
    scored.sort(key=lambda item: (-item.score, item.passage, item.sentence))
    # Pages repeat themselves (pull quotes, a passage cited twice): show a sentence once.
    seen: set[str] = set()
    distinct: list[_Scored] = []
    for item in scored:
        sentence = passages[item.passage].sentences[item.sentence]
        if sentence not in seen:
            seen.add(sentence)
            distinct.append(item)
    return distinct


def _highlight(item: _Scored, passages: Sequence[PreparedPassage], passage: int) -> Highlight:
    start, end = passages[item.passage].spans[item.sentence]
    return Highlight(passage=passage, start=start, end=end, score=round(min(1.0, item.score), 4))


def rank_sentences(
    claim: str, passages: Sequence[str | PreparedPassage], k: int = 3
) -> list[Highlight]:
    """The k source sentences that best match the claim, across all passages, best first.

    Only sentences sharing at least one content word with the claim are returned.
    """
    prepared = _prepared(passages)
    scored = _score_sentences(_query(claim), prepared)
    return [_highlight(item, prepared, item.passage) for item in scored[: max(0, k)]]


def find_wrong_citation(
    claim: str,
    cited: Sequence[str | PreparedPassage],
    uncited: Sequence[str | PreparedPassage],
) -> Highlight | None:
    """Where an uncited passage supports the claim clearly better than every cited one.

    Both groups are scored in one call, so their scores share word statistics.
    Highlight.passage is an index into `uncited`.
    """
    return _wrong_citation(_query(claim), _prepared(cited), _prepared(uncited))


def _wrong_citation(
    query: _Query, cited: Sequence[PreparedPassage], uncited: Sequence[PreparedPassage]
) -> Highlight | None:
    if not uncited:
        return None
    scored = _score_sentences(query, [*cited, *uncited])
    best_cited = next((i.score for i in scored if i.passage < len(cited)), 0.0)
    best_uncited = next((i for i in scored if i.passage >= len(cited)), None)
    if best_uncited is None:
        return None
    if best_uncited.score < LIKELY_MIN_SCORE:
        return None
    if best_uncited.score - best_cited < WRONG_CITATION_MARGIN:
        return None
    return _highlight(best_uncited, [*cited, *uncited], best_uncited.passage - len(cited))


# ---------------------------------------------------------------------------- labels


def trust_label(
    *,
    cited: bool,
    has_unknown_citation: bool = False,
    best_score: float,
    ungrounded: Sequence[str] = (),
) -> TrustLabel:
    """The machine's label for a claim, from provenance and string checks only.

    - "verified": the claim cites only existing passages, its best cited match scores at
      least VERIFIED_MIN_SCORE and every number of the claim occurs in the cited passages.
    - "likely": cited, no ungrounded number, best match at least LIKELY_MIN_SCORE.
    - "unknown": everything else: uncited, citing a passage that does not exist, a number
      not found in the cited passages, or a weak match.
    """
    if not cited or has_unknown_citation or ungrounded:
        return "unknown"
    if best_score >= VERIFIED_MIN_SCORE:
        return "verified"
    if best_score >= LIKELY_MIN_SCORE:
        return "likely"
    return "unknown"


@dataclass(frozen=True)
class ClaimChecks:
    label: TrustLabel
    highlights: tuple[Highlight, ...]  # best sentences of the cited passages (index into cited)
    best_score: float  # 0..1 strength of the best cited match
    numbers: tuple[tuple[str, bool], ...]  # each number token of the claim, grounded?
    ungrounded: tuple[str, ...]
    wrong_citation: Highlight | None  # passage is an index into uncited


def check_claim(
    claim: str,
    cited: Sequence[str | PreparedPassage],
    uncited: Sequence[str | PreparedPassage],
    *,
    has_unknown_citation: bool = False,
    k: int = 3,
) -> ClaimChecks:
    """Run every string check on one claim against its cited and uncited passages."""
    cited_prepared = _prepared(cited)
    uncited_prepared = _prepared(uncited)
    query = _query(claim)
    scored = _score_sentences(query, cited_prepared)
    highlights = tuple(_highlight(i, cited_prepared, i.passage) for i in scored[: max(0, k)])
    best_score = round(min(1.0, scored[0].score), 4) if scored else 0.0
    available = _evidence_numbers(cited_prepared)
    numbers = tuple((n, n in available) for n in _number_tokens(claim))
    ungrounded = tuple(dict.fromkeys(n for n, grounded in numbers if not grounded))
    return ClaimChecks(
        label=trust_label(
            cited=bool(cited_prepared),
            has_unknown_citation=has_unknown_citation,
            best_score=best_score,
            ungrounded=ungrounded,
        ),
        highlights=highlights,
        best_score=best_score,
        numbers=numbers,
        ungrounded=ungrounded,
        wrong_citation=_wrong_citation(query, cited_prepared, uncited_prepared),
    )
