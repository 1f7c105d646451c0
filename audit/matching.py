"""String checks on a claim and its sources: quote and number checks, evidence highlights.

Everything here is deterministic text processing (no model), so its verdicts cannot hallucinate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal, NamedTuple

from rapidfuzz import fuzz

from audit.bm25 import (
    MONTHS,
    SentenceIndex,
    bm25_scores,
    pooled_idf,
    sentence_index,
    stem,
    terms,
)
from audit.scope_words import Difference, scope_differences
from audit.sentences import sentence_spans

__all__ = [
    "MATCHER_VERSION",
    "ClaimChecks",
    "Highlight",
    "PreparedPassage",
    "QuoteCheck",
    "TrustLabel",
    "cached_passage",
    "check_claim",
    "claim_differences",
    "find_wrong_citation",
    "fold",
    "prepare_passage",
    "rank_sentences",
    "sentence_spans",
    "trust_label",
    "ungrounded_numbers",
    "verify_quote",
]

# Stored next to every result: bump when any stored result for the same input would change.
# (Rankings of k >= 4 changed after 2026.12-1, but stored checks rank k = 3 and did not:
# a bump would have marked every check stale for nothing.)
# 2026.12-2: "verified" needs no scope difference (audit.scope_words) in the best sentence.
MATCHER_VERSION = "2026.12-2"

TrustLabel = Literal["verified", "likely", "unknown"]

# Thresholds on ClaimChecks.best_score, the share of the claim's content words found in one
# cited sentence with its better neighbour (see trust_label for why these values).
VERIFIED_MIN_SCORE = 0.75
LIKELY_MIN_SCORE = 0.5
# An uncited passage must cover this much more of the claim to be called the right source:
# one or two extra words of a ten-word claim are noise, not a misattribution.
WRONG_CITATION_MARGIN = 0.2

# ---------------------------------------------------------------------------- folding

_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u2035"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u2036"
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
# str.replace per character is ~100x faster than str.translate on long texts.
_REPLACEMENTS = (
    *((c, "'") for c in _SINGLE_QUOTES),
    *((c, '"') for c in _DOUBLE_QUOTES),
    *((c, "-") for c in _DASHES),
)


def fold(text: str) -> str:
    """Fold text for comparison: one space per whitespace run, plain quotes and dashes, lower case.

    casefold() rather than lower(): lower() turns a final sigma into a different letter
    depending on what follows, so a quote cut from a word could fold unlike its source.
    """
    if not text.isascii():
        for char, plain in _REPLACEMENTS:
            if char in text:
                text = text.replace(char, plain)
    # str.split() splits on the same Unicode whitespace as \s (NBSP, thin and narrow spaces).
    return " ".join(text.split()).casefold()


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
    prepared = source if isinstance(source, PreparedPassage) else None
    folded_source = prepared.folded if prepared else fold(str(source))
    needle = _trim_quote(fold(span))
    if not needle or not folded_source:
        return QuoteCheck(verified=None, match=None)
    if _occurs_between_word_boundaries(needle, folded_source):
        return QuoteCheck(verified=True, match=1.0)
    words = _WORD.findall(needle)
    if not words:
        return QuoteCheck(verified=False, match=0.0)
    positions = prepared.word_positions if prepared else _word_positions(folded_source)
    return QuoteCheck(
        verified=False, match=round(_longest_word_run(words, positions) / len(words), 3)
    )


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


def _word_positions(folded: str) -> dict[str, list[int]]:
    positions: dict[str, list[int]] = {}
    for i, word in enumerate(_WORD.findall(folded)):
        bucket = positions.get(word)
        if bucket is None:
            positions[word] = [i]
        else:
            bucket.append(i)
    return positions


def _longest_word_run(words: Sequence[str], source: dict[str, list[int]]) -> int:
    """Length of the longest run of consecutive words that also appear consecutively in source.

    source maps each source word to its positions; run lengths are carried from one span
    word to the next by position, so the cost is the number of occurrences, not the length
    of the source.
    """
    best = 0
    previous: dict[int, int] = {}
    for word in words:
        current = {p: previous.get(p - 1, 0) + 1 for p in source.get(word, ())}
        if current:
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

# ---------------------------------------------------------------------------- passages


@dataclass(frozen=True, eq=False)
class PreparedPassage:
    """A passage split, folded and indexed once, to be checked against many claims.

    Compared by identity: it is a cache of work done on `text`. Each part is computed on
    first use and kept: an uncited passage is often never looked at (see _wrong_citation),
    and an import prepares three passages for every claim it checks.
    """

    text: str

    @cached_property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """Sentence offsets into text."""
        return tuple(sentence_spans(self.text))

    @cached_property
    def numbers(self) -> frozenset[str]:
        """Number tokens, citation markers removed."""
        return frozenset(_number_tokens(self.text))

    @cached_property
    def index(self) -> SentenceIndex:
        text, spans = self.text, self.spans
        lowered = text.casefold()
        if len(lowered) == len(text):
            # Terms ignore quotes, dashes and spacing, so case folding the whole text once
            # is enough, and the sentence offsets still apply to it.
            return sentence_index(lowered[start:end] for start, end in spans)
        return sentence_index(text[start:end].casefold() for start, end in spans)

    @cached_property
    def folded(self) -> str:
        return fold(self.text)

    @cached_property
    def word_positions(self) -> dict[str, list[int]]:
        return _word_positions(self.folded)

    @cached_property
    def sentences(self) -> tuple[str, ...]:
        """Folded sentence texts."""
        return tuple(fold(self.text[start:end]) for start, end in self.spans)

    def sentence(self, i: int) -> str:
        start, end = self.spans[i]
        return fold(self.text[start:end])


def prepare_passage(text: str) -> PreparedPassage:
    """text ready to be checked against many claims; the work is done as checks need it."""
    return PreparedPassage(text=text or "")


@lru_cache(maxsize=32)
def cached_passage(text: str) -> PreparedPassage:
    """prepare_passage(text), kept for the process's next calls with the same text.

    For pages that check one claim's passages each time they are shown (the review page's
    suggestions): a long source is split and indexed once per process, not per request.
    Derived data only, recomputed after a restart; 32 passages bound the memory.
    """
    return prepare_passage(text)


def _prepared(passages: Sequence[str | PreparedPassage]) -> list[PreparedPassage]:
    return [p if isinstance(p, PreparedPassage) else prepare_passage(p) for p in passages]


# ---------------------------------------------------------------------------- ranking


@dataclass(frozen=True)
class Highlight:
    passage: int  # index into the passages given to the call
    start: int  # character offsets into that passage's text
    end: int
    # Ranking score 0..1: BM25 divided by the claim's total IDF, so 1 means every claim
    # word once in a sentence of average length (find_wrong_citation: the support share).
    score: float


@dataclass(frozen=True)
class RankWeights:
    """How a sentence's own score and the set-aware later places are computed.

    The own score is a weighted sum of parts in 0..1 whose weights sum to 1, so it is in
    0..1 too. Chosen on real cited web pages (WiCE train sub-claims, bench/eval_ranking.py
    --wice; WiCE dev reports): menus, headings and short lines share the page's subject
    words, so BM25's length normalisation is weaker than the textbook's (b 0.3, k1 0.8)
    and a fifth of the score counts each claim word once (coverage). The later places
    are chosen as a set for the claim words they add. On those pages a neighbour of a
    strong match is minimal evidence no more often than any other sentence, so the
    neighbour share that pseudo pages favoured is off and the adjacency bonus small.
    The date bonus and chrome penalty of the later places were chosen on WiCE train + dev
    with 5-fold cross-validation (within noise on WiCE, and cheap to compute). rapidfuzz, tried
    on the pseudo pages (bench/eval_ranking.py), stays at weight 0.
    """

    # BM25 over the call's sentences, divided by the claim's total IDF.
    bm25: float = 0.8
    # IDF share of the claim's distinct terms present in the sentence: BM25 pays a repeated
    # term again, coverage pays each claim word once.
    coverage: float = 0.2
    # rapidfuzz token_set_ratio of claim and sentence, for the best `candidates` only.
    fuzz: float = 0.0
    k1: float = 0.8
    b: float = 0.3
    # Sentences (best lexical first) that get the slower rapidfuzz part and, with their
    # neighbours, may be picked for the later places.
    candidates: int = 40
    # Places chosen purely by own score, so that the best matches are never pushed out;
    # the later ones by own score plus what they add to the places before (see _select).
    head: int = 3
    # Weight of the IDF share of claim terms a sentence adds that no earlier place covers:
    # minimal evidence is often two or three sentences that each state part of the claim.
    gain: float = 1.0
    # Bonus for a sentence next to an earlier place: the sentence that gives a match its
    # subject ("It was founded in 1999.") may share no word with the claim.
    adjacency: float = 0.05
    # Bonus for a later place that adds a year or month of the claim no earlier place has:
    # on real pages the date of an event is often on a line of its own ("May 12, 2013 -
    # 6:00pm", the page's metadata), a whole minimal set being that line and the sentence
    # stating the event, and one date term's IDF share alone rarely wins it the place.
    date: float = 0.1
    # Penalty for a later place that is a short line of page chrome (cookie, share, sign-in,
    # menu, newsletter lines; see _CHROME): they share the page's subject words and are
    # never evidence.
    chrome: float = 0.1
    # Share of its better neighbour's own score a sentence earns: two adjacent sentences
    # that both match part of the claim rank as a pair.
    neighbour: float = 0.0


DEFAULT_WEIGHTS = RankWeights()


@dataclass(frozen=True)
class _Query:
    folded: str
    terms: tuple[str, ...]  # distinct, in order


def _query(claim: str) -> _Query:
    return _bare_query(_without_markers(claim))


def _bare_query(bare: str) -> _Query:
    """_query of a claim whose citation markers are already removed."""
    folded = fold(bare)
    return _Query(folded=folded, terms=tuple(dict.fromkeys(terms(folded))))


class _Scored(NamedTuple):
    # A tuple, not a dataclass: a ranking builds one per sentence hit, for every claim.
    passage: int
    sentence: int
    score: float  # own ranking score, 0..1
    support: float = 0.0  # share of claim terms in the sentence and its best neighbour
    mask: int = 0  # bit i set: the i-th claim term occurs in the sentence


@dataclass(frozen=True)
class _Ranking:
    scored: list[_Scored]  # every sentence sharing a term with the claim, best first
    term_weights: tuple[float, ...]  # IDF share of each claim term (bit order), sum 1
    terms: tuple[str, ...] = ()  # the claim's terms, in bit order (for the date bonus)


# A year (1500-2099) or a month's name, as index terms: the claim's date terms.
_YEAR_TERM = re.compile(r"(?:1[5-9]|20)\d\d")
_MONTH_TERMS = frozenset(stem(month) for month in MONTHS)
# Page chrome on short lines (folded text): lines around a page's text that are never
# evidence. "Share" and "follow" only open such a line: "Both teams share the title" is not.
_CHROME = re.compile(
    r"^(?:share|follow)\b|\b(?:cookies?|sign in|sign up|log in|subscribe|skip to|menu"
    r"|newsletters?|advertis\w*|privacy|all rights|copyright|follow us|read more|related)\b"
)
# Terms (stop words excluded) a line may have to count as chrome; longer ones are text.
_CHROME_MAX_TERMS = 8


def _date_mask(query_terms: Sequence[str]) -> int:
    mask = 0
    for bit, term in enumerate(query_terms):
        if term in _MONTH_TERMS or _YEAR_TERM.fullmatch(term):
            mask |= 1 << bit
    return mask


def _mask_weigher(term_weights: Sequence[float]):  # noqa: ANN202
    cache: dict[int, float] = {}

    def weight_of(mask: int) -> float:
        cached = cache.get(mask)
        if cached is None:
            cached = sum(w for bit, w in enumerate(term_weights) if mask >> bit & 1)
            cache[mask] = cached
        return cached

    return weight_of


def _score_sentences(
    query: _Query,
    passages: Sequence[PreparedPassage],
    weights: RankWeights = DEFAULT_WEIGHTS,
) -> _Ranking:
    """Score every sentence sharing a term with the claim; best first.

    Ranking scores are bounded by 1 through the claim's own total IDF. The support share
    (for labels) counts claim words, not their IDF, so it means the same for a 5-sentence
    passage and a 3,000-sentence document.
    """
    indexes = [p.index for p in passages]
    sentence_count = sum(index.size for index in indexes)
    if not query.terms or sentence_count == 0:
        return _Ranking(scored=[], term_weights=())
    idf = pooled_idf(query.terms, indexes)
    total = sum(idf.values())
    avgdl = sum(sum(index.lengths) for index in indexes) / sentence_count
    term_weights = tuple(w / total for w in idf.values())
    weight_of = _mask_weigher(term_weights) if weights.coverage else None
    term_count = len(idf)
    lexical: list[tuple[float, int, int, float, int]] = []
    for p, index in enumerate(indexes):
        scores, masks = bm25_scores(idf, index, avgdl, k1=weights.k1, b=weights.b)
        for s, raw in scores.items():
            mask = masks[s]
            before, after = mask | masks.get(s - 1, 0), mask | masks.get(s + 1, 0)
            support = max(before.bit_count(), after.bit_count()) / term_count
            value = weights.bm25 * min(1.0, raw / total)
            if weight_of:
                # Added only when weighted: x + 0.0 is x for these non-negative scores.
                value += weights.coverage * weight_of(mask)
            lexical.append((value, p, s, support, mask))
    lexical.sort(key=lambda item: (-item[0], item[1], item[2]))
    if not weights.fuzz:
        # Scores stay as sorted, and (passage, sentence) never ties: no second sort.
        scored = [_Scored(p, s, value, support, mask) for value, p, s, support, mask in lexical]
        # idf keeps the order of query.terms, so its bits are theirs.
        return _Ranking(scored=scored, term_weights=term_weights, terms=query.terms)
    scored = []
    for rank, (value, p, s, support, mask) in enumerate(lexical):
        if rank < weights.candidates:
            sentence = passages[p].sentence(s)
            value += weights.fuzz * fuzz.token_set_ratio(query.folded, sentence) / 100
        scored.append(_Scored(passage=p, sentence=s, score=value, support=support, mask=mask))
    scored.sort(key=lambda item: (-item.score, item.passage, item.sentence))
    return _Ranking(scored=scored, term_weights=term_weights, terms=query.terms)


def _select(
    ranking: _Ranking,
    passages: Sequence[PreparedPassage],
    k: int,
    weights: RankWeights = DEFAULT_WEIGHTS,
) -> list[_Scored]:
    """The k places, chosen greedily as a set.

    The first `head` places go to the best own scores, so a lone best match is never
    pushed out. Each later place goes to the candidate (a strong sentence or a neighbour
    of one) with the most own score, plus the IDF share of claim terms it adds to the
    places so far, plus a bonus when it is next to one of them, plus a share of its better
    neighbour's score: minimal evidence is usually two or three sentences that each state
    part of the claim. A year or month of the claim that no earlier place has earns a
    bonus, and a short line of page chrome a penalty. The choice is greedy, so the first
    places of k=5 are those of k=3. A sentence repeated in the passages (pull quotes, a
    passage cited twice) is shown once.
    """
    k = max(0, k)
    chosen: list[_Scored] = []
    seen: set[str] = set()
    if k <= weights.head:
        # Own scores only (the usual k=3): no candidate pool to build.
        for item in ranking.scored:
            if len(chosen) >= k:
                break
            text = passages[item.passage].sentence(item.sentence)
            if text not in seen:
                seen.add(text)
                chosen.append(item)
        return chosen
    weight_of = _mask_weigher(ranking.term_weights)
    by_place = {(i.passage, i.sentence): i for i in ranking.scored}

    def own(p: int, s: int) -> float:
        item = by_place.get((p, s))
        return item.score if item else 0.0

    # Candidates: the best sentences and their neighbours, which may share no claim word.
    pool: dict[tuple[int, int], _Scored] = {}
    for item in ranking.scored[: max(k, weights.candidates)]:
        p, s = item.passage, item.sentence
        pool[(p, s)] = item
        for n in (s - 1, s + 1):
            if 0 <= n < len(passages[p].spans) and (p, n) not in pool:
                pool[(p, n)] = by_place.get((p, n)) or _Scored(passage=p, sentence=n, score=0.0)
    taken: set[tuple[int, int]] = set()
    covered = 0
    # Read here, past k=3's early return: the import's checks never need it.
    date_mask = _date_mask(ranking.terms) if weights.date else 0
    chrome: dict[tuple[int, int], bool] = {}

    def is_chrome(p: int, s: int) -> bool:
        found = chrome.get((p, s))
        if found is None:
            found = passages[p].index.lengths[s] <= _CHROME_MAX_TERMS and bool(
                _CHROME.search(passages[p].sentence(s))
            )
            chrome[(p, s)] = found
        return found

    while len(chosen) < k and pool:
        best: tuple[float, float, int, int] | None = None
        # Past the head, or once no candidate matches a claim word by itself.
        later = len(chosen) >= weights.head or all(i.score <= 0.0 for i in pool.values())
        for (p, s), item in pool.items():
            value = item.score
            if later:
                added = item.mask & ~covered
                value += weights.gain * weight_of(added)
                if (p, s - 1) in taken or (p, s + 1) in taken:
                    value += weights.adjacency
                if weights.neighbour:
                    value += weights.neighbour * max(own(p, s - 1), own(p, s + 1))
                if added & date_mask:
                    value += weights.date
                if weights.chrome and is_chrome(p, s):
                    value -= weights.chrome
            elif item.score <= 0.0:
                continue
            key = (-value, -item.score, p, s)
            if best is None or key < best:
                best = key
        if best is None:
            break
        place = (best[2], best[3])
        item = pool.pop(place)
        text = passages[item.passage].sentence(item.sentence)
        if text in seen:
            continue
        seen.add(text)
        chosen.append(item)
        taken.add(place)
        covered |= item.mask
    return chosen


def _highlight(item: _Scored, passages: Sequence[PreparedPassage], passage: int) -> Highlight:
    start, end = passages[item.passage].spans[item.sentence]
    return Highlight(passage=passage, start=start, end=end, score=round(min(1.0, item.score), 4))


def rank_sentences(
    claim: str, passages: Sequence[str | PreparedPassage], k: int = 3
) -> list[Highlight]:
    """The k source sentences that best support the claim, across all passages.

    The first three are the best by their own score (0..1, comparable across calls), best
    first; any later place goes to the sentence that adds most to the places before it
    (see _select) and carries its own score, which may be higher than an earlier place's.
    Highlight.passage indexes `passages`.
    """
    return _rank(claim, passages, k, DEFAULT_WEIGHTS)


def _rank(
    claim: str, passages: Sequence[str | PreparedPassage], k: int, weights: RankWeights
) -> list[Highlight]:
    prepared = _prepared(passages)
    ranking = _score_sentences(_query(claim), prepared, weights)
    return [_highlight(i, prepared, i.passage) for i in _select(ranking, prepared, k, weights)]


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
    query: _Query,
    cited: Sequence[PreparedPassage],
    uncited: Sequence[PreparedPassage],
    best_cited: float | None = None,
) -> Highlight | None:
    """best_cited, when given, is _best_support(query, cited) (check_claim has it from its
    ranking: the highest support of the cited sentences)."""
    if not uncited:
        return None
    # Whether an uncited sentence wins depends only on supports, which need no word
    # statistics: most claims are settled here, without scoring every passage again.
    if best_cited is None:
        best_cited = _best_support(query, cited)
    # No support exceeds 1 (all claim terms) and a - b never shrinks as a grows, so when
    # even a full support would not clear the margin the uncited passages are not read:
    # when a claim is well supported where it cites, they are not even split.
    if 1.0 - best_cited < WRONG_CITATION_MARGIN:
        return None
    best_uncited = _best_support(query, uncited)
    if best_uncited < LIKELY_MIN_SCORE:
        return None
    if best_uncited - best_cited < WRONG_CITATION_MARGIN:
        return None
    return _wrong_citation_scored(query, cited, uncited)


def _best_support(query: _Query, passages: Sequence[PreparedPassage]) -> float:
    """The highest support (see _score_sentences) of any sentence of the passages."""
    if not query.terms:
        return 0.0
    best = 0
    for passage in passages:
        masks: dict[int, int] = {}
        index = passage.index
        for bit, term in enumerate(query.terms):
            flag = 1 << bit
            for sentence, _ in index.postings(term):
                masks[sentence] = masks.get(sentence, 0) | flag
        for s, mask in masks.items():
            before, after = mask | masks.get(s - 1, 0), mask | masks.get(s + 1, 0)
            best = max(best, before.bit_count(), after.bit_count())
    return best / len(query.terms)


def _wrong_citation_scored(
    query: _Query, cited: Sequence[PreparedPassage], uncited: Sequence[PreparedPassage]
) -> Highlight | None:
    """_wrong_citation by scoring every sentence of both groups (the reference the quick
    exits in _wrong_citation must agree with)."""
    if not uncited:
        return None
    passages = [*cited, *uncited]
    scored = _score_sentences(query, passages).scored
    best_cited = max((i.support for i in scored if i.passage < len(cited)), default=0.0)
    # The best-ranked sentence among those with the strongest support.
    best = max(
        (i for i in scored if i.passage >= len(cited)), key=lambda i: i.support, default=None
    )
    if best is None or best.support < LIKELY_MIN_SCORE:
        return None
    if best.support - best_cited < WRONG_CITATION_MARGIN:
        return None
    start, end = passages[best.passage].spans[best.sentence]
    return Highlight(
        passage=best.passage - len(cited), start=start, end=end, score=round(best.support, 4)
    )


# ---------------------------------------------------------------------------- labels


def trust_label(
    *,
    cited: bool,
    has_unknown_citation: bool = False,
    best_score: float,
    ungrounded: Sequence[str] = (),
    differences: Sequence[Difference] = (),
) -> TrustLabel:
    """The machine's label for a claim, from provenance and string checks only.

    - "verified" (shown as "all words found"): the claim cites only existing passages, at
      least three quarters of its content words (VERIFIED_MIN_SCORE) occur in one cited
      sentence with its neighbour, every number of the claim occurs in the cited passages,
      and that sentence differs from the claim in no word that changes its scope: every
      content word there, the same negation, modals, quantifiers and units
      (audit.scope_words). "Customers can return…" against "Consumers may return…" is
      four fifths of the words, and a different rule: it is "likely", never a match.
    - "likely": cited, no ungrounded number, at least half of the content words.
    - "unknown": everything else: uncited, citing a passage that does not exist, a number
      not found in the cited passages, or a weak match.

    Why these values (bench/calibrate_trust.py, 2,111 label-balanced AttributionBench
    claims): 85% of "verified" claims are human-labelled attributable against 51% overall,
    "likely" 55%, "unknown" 19% (before the scope check, which only moves claims from
    "verified" to "likely"). Word overlap cannot see a changed relation, so the label means
    "the words are there", and a reviewer still reads it.
    """
    if not cited or has_unknown_citation or ungrounded:
        return "unknown"
    if best_score >= VERIFIED_MIN_SCORE and not differences:
        return "verified"
    if best_score >= LIKELY_MIN_SCORE:
        return "likely"
    return "unknown"


# The best-supported sentences compared word by word with the claim: ties are rare, and a
# few are enough to find one without a scope difference if there is one.
_SCOPE_CANDIDATES = 5


def _window(passage: PreparedPassage, sentence: int) -> tuple[str, str]:
    """A sentence's text, and its two neighbours' (where support may have found a word)."""
    spans = passage.spans
    start, end = spans[sentence]
    before = passage.text[spans[sentence - 1][0] : start] if sentence > 0 else ""
    after = passage.text[end : spans[sentence + 1][1]] if sentence + 1 < len(spans) else ""
    return passage.text[start:end], f"{before} {after}"


def _fewest_differences(
    bare: str, ranking: _Ranking, passages: Sequence[PreparedPassage], best_support: float
) -> tuple[Difference, ...]:
    """The scope differences of the claim against the best-supported sentence that has the
    fewest (none when one sentence states it word for word)."""
    best: tuple[Difference, ...] | None = None
    candidates = [i for i in ranking.scored if i.support >= best_support][:_SCOPE_CANDIDATES]
    for item in candidates:
        text, context = _window(passages[item.passage], item.sentence)
        found = scope_differences(bare, text, context)
        if best is None or len(found) < len(best):
            best = found
        if not best:
            break
    return best or ()


def claim_differences(claim: str, cited: Sequence[str | PreparedPassage]) -> tuple[Difference, ...]:
    """What the review page shows beside the match score: the words in which the claim and
    its best-supported cited sentence differ (see trust_label)."""
    prepared = _prepared(cited)
    bare = _without_markers(claim)
    ranking = _score_sentences(_bare_query(bare), prepared)
    best_support = max((i.support for i in ranking.scored), default=0.0)
    if not ranking.scored:
        return ()
    return _fewest_differences(bare, ranking, prepared, best_support)


@dataclass(frozen=True)
class ClaimChecks:
    label: TrustLabel
    highlights: tuple[Highlight, ...]  # best sentences of the cited passages (index into cited)
    best_score: float  # share of claim content words in one cited sentence + neighbour
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
    bare = _without_markers(claim)
    query = _bare_query(bare)
    ranking = _score_sentences(query, cited_prepared)
    highlights = tuple(
        _highlight(i, cited_prepared, i.passage) for i in _select(ranking, cited_prepared, k)
    )
    best_support = max((i.support for i in ranking.scored), default=0.0)
    best_score = round(best_support, 4)
    claim_numbers = _NUMBER.findall(bare)  # _number_tokens(claim)
    # The passages' numbers are read only for a claim that has some.
    available = _evidence_numbers(cited_prepared) if claim_numbers else frozenset()
    numbers = tuple((n, n in available) for n in claim_numbers)
    ungrounded = tuple(dict.fromkeys(n for n, grounded in numbers if not grounded))
    # Only a claim that would otherwise be "verified" is compared word by word: the import
    # checks every claim, and the comparison changes no other label.
    differences = (
        _fewest_differences(bare, ranking, cited_prepared, best_support)
        if best_score >= VERIFIED_MIN_SCORE
        else ()
    )
    return ClaimChecks(
        label=trust_label(
            cited=bool(cited_prepared),
            has_unknown_citation=has_unknown_citation,
            best_score=best_score,
            ungrounded=ungrounded,
            differences=differences,
        ),
        highlights=highlights,
        best_score=best_score,
        numbers=numbers,
        ungrounded=ungrounded,
        wrong_citation=_wrong_citation(query, cited_prepared, uncited_prepared, best_support),
    )
