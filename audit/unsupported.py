"""Suggested unsupported assertions: the parts of a claim that its cited passages do not state.

Each claim word gets a score from string facts about the evidence; the words above a
threshold, merged into phrases, are the suggestions a reviewer accepts or edits.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from audit.bm25 import MONTHS, STOP_WORDS, TERM, stem
from audit.bm25 import term as _term
from audit.matching import PreparedPassage, fold, prepare_passage, verify_quote

__all__ = ["Span", "unsupported_spans"]


@dataclass(frozen=True, order=True)
class Span:
    """Character offsets into the claim: claim[start:end] is one suggested assertion."""

    start: int
    end: int


# ---------------------------------------------------------------------------- the model

# Token features, in the order of _WEIGHTS. A token is a term of the matcher's analyzer
# (audit.bm25.TERM): a run of letters or a number; stop words are tokens too, because
# people mark "in 2015", not "2015".
FEATURES = (
    "stop word",
    "number",
    "number suffix",  # "th" of "24th", "s" of "1990s"
    "capitalised word",  # not the claim's first token
    "other word",
    "absent",  # nowhere in the evidence
    "coverage gap",  # best sentence's share of claim terms minus that of its best sentence
    "missing",  # absent, or only in sentences far weaker than the best
    "previous token missing",
    "next token missing",
    "stop word before a missing term",
    "preposition before a missing date",
    "in a matched bigram",  # it and a neighbour occur as consecutive source words
    "position",  # 0 at the claim's first token, 1 at its last
    "evidence frequency",  # log(1 + sentences holding the term) / 5
    "absent capitalised word",
    "absent other word",
    "phrase missing share",  # of the content terms of its phrase (between punctuation)
    "phrase all missing",
    "word ending in -ed",  # a past participle or past tense: verbs are paraphrased most
)
# Classes of words whose role says how people mark a claim: a copula or an auxiliary is
# rarely marked on its own, an ordinal, a month or "after" usually is, with its phrase.
# Each class is a feature for the token itself and for each of its two neighbours (the
# tokens just before and after it), so that "in" before a month reads unlike "in" before
# a name. Word lists, not a tagger: plain, and the same in every language setting.
_WORD_CLASSES = (
    ("auxiliary", "is was were are be been being am has have had do does did"),
    (
        "pronoun or relative",
        "he she it they his her its their him them we i you who which that this these those",
    ),
    ("article", "a an the"),
    ("conjunction", "and or"),
    ("time preposition", "after before until since from during between till"),
    ("other preposition", "in on at by of to for with as into about over under through"),
    ("ordinal", "first second third fourth fifth sixth seventh eighth ninth tenth last final"),
    (
        "number word",
        "one two three four five six seven eight nine ten eleven twelve twenty hundred "
        "thousand million billion dozen several",
    ),
    (
        "qualifier",
        "only new original former early late oldest largest biggest most best more all every "
        "each other also",
    ),
    ("month", " ".join(MONTHS)),
    ("negation", "no not never"),
)
FEATURES += tuple(
    f"{where}{name}"
    for where in ("", "previous token: ", "next token: ")
    for name, _ in _WORD_CLASSES
)
_WORD_CLASS = {word: k for k, (_, words) in enumerate(_WORD_CLASSES) for word in words.split()}
# Logistic regression on the WiCE train split (bench/eval_unsupported.py --fit), C=1;
# refitted 2026-12-03 with the word classes.
# Kept in code so that suggestions are deterministic and need no model file.
_BIAS = -1.298
_WEIGHTS = (
    -0.849,  # stop word
    +0.482,  # number
    +1.406,  # number suffix
    -0.829,  # capitalised word
    -0.649,  # other word
    +1.015,  # absent
    +1.668,  # coverage gap
    +0.989,  # missing
    +0.622,  # previous token missing
    +0.497,  # next token missing
    +0.895,  # stop word before a missing term
    +0.781,  # preposition before a missing date
    -0.805,  # in a matched bigram
    +0.813,  # position
    -1.287,  # evidence frequency
    +0.295,  # absent capitalised word
    -1.391,  # absent other word
    -0.177,  # phrase missing share
    +0.440,  # phrase all missing
    -0.669,  # word ending in -ed
    -1.125,  # auxiliary
    -0.745,  # pronoun or relative
    -0.437,  # article
    +1.216,  # conjunction
    +1.042,  # time preposition
    +0.181,  # other preposition
    +2.190,  # ordinal
    +1.680,  # number word
    +1.547,  # qualifier
    +1.827,  # month
    -0.471,  # negation
    -0.406,  # previous token: auxiliary
    -0.320,  # previous token: pronoun or relative
    +0.259,  # previous token: article
    +0.831,  # previous token: conjunction
    +0.860,  # previous token: time preposition
    +0.486,  # previous token: other preposition
    +1.709,  # previous token: ordinal
    +1.308,  # previous token: number word
    +0.937,  # previous token: qualifier
    +1.024,  # previous token: month
    -0.996,  # previous token: negation
    -0.539,  # next token: auxiliary
    -0.324,  # next token: pronoun or relative
    -0.242,  # next token: article
    +0.347,  # next token: conjunction
    -0.135,  # next token: time preposition
    -0.334,  # next token: other preposition
    +1.474,  # next token: ordinal
    +0.374,  # next token: number word
    +0.514,  # next token: qualifier
    +0.442,  # next token: month
    +0.084,  # next token: negation
)
# Probability above which a token is suggested; chosen for token F1 by 5-fold
# cross-validation on the train split (bench/eval_unsupported.py --cv).
_THRESHOLD = 0.3
# A term counts as missing when the best window of sentences covers this much more of
# the claim than any window holding the term: it occurs, but not where the claim is stated.
_MISSING_GAP = 0.25

# ---------------------------------------------------------------------------- vocabulary

# Letters glued to a number share its verdict: "24th", "1990s", "$12m", "5km".
_NUMBER_SUFFIXES = frozenset(["st", "nd", "rd", "th", "s", "m", "bn", "k", "km", "kg", "am", "pm"])
_MONTH_STEMS = frozenset(stem(m) for m in MONTHS)
_PREPOSITIONS = frozenset(["on", "in", "at", "by", "from", "to", "since", "until", "during", "of"])
# Words as the quote check reads them (audit.matching): "ex-pats" and "88.9" are one word.
_WORD = re.compile(r"\w+(?:[.,'-]\w+)*")

_STOP, _NUMBER, _SUFFIX, _CAPITALISED, _OTHER = range(5)
_MISSING = FEATURES.index("missing")


# ---------------------------------------------------------------------------- the claim


@dataclass(frozen=True)
class _Claim:
    folded: str  # case-folded like the passages, one character or more per claim character
    origin: tuple[int, ...] | None  # claim offset of each folded character; None: the same
    starts: tuple[int, ...]  # per token, offsets into folded
    ends: tuple[int, ...]
    terms: tuple[str, ...]  # index term ("" for stop words and number suffixes)
    kinds: tuple[int, ...]

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Claim offsets from the start of token `first` to the end of token `last`."""
        start, end = self.starts[first], self.ends[last]
        if self.origin is None:
            return start, end
        return self.origin[start], self.origin[end - 1] + 1


def _fold_claim(claim: str) -> tuple[str, tuple[int, ...] | None]:
    if claim.isascii():
        return claim.lower(), None
    # Folding may lengthen a character ("ß" -> "ss"): keep where each folded character
    # came from, so that spans still point into the claim as written.
    parts: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(claim):
        folded = " " if char.isspace() else fold(char)
        parts.append(folded)
        origin.extend([i] * len(folded))
    origin.append(len(claim))
    return "".join(parts), tuple(origin)


def _read_claim(claim: str) -> _Claim:
    """The claim's tokens, analysed like the passages' index (audit.bm25)."""
    folded, origin = _fold_claim(claim)
    starts: list[int] = []
    ends: list[int] = []
    terms: list[str] = []
    kinds: list[int] = []
    for m in TERM.finditer(folded):
        word = m.group()
        start, end = m.span()
        if word[0].isdigit():
            kind, term = _NUMBER, word
        elif kinds and kinds[-1] == _NUMBER and ends[-1] == start and word in _NUMBER_SUFFIXES:
            kind, term = _SUFFIX, ""
        elif word in STOP_WORDS:
            kind, term = _STOP, ""
        else:
            at = origin[start] if origin else start
            kind = _CAPITALISED if kinds and claim[at].isupper() else _OTHER
            term = _term(word)
        starts.append(start)
        ends.append(end)
        terms.append(term)
        kinds.append(kind)
    return _Claim(folded, origin, tuple(starts), tuple(ends), tuple(terms), tuple(kinds))


# ---------------------------------------------------------------------------- evidence


def _term_support(
    terms: Sequence[str], passages: Sequence[PreparedPassage]
) -> dict[str, tuple[bool, float, bool, float]]:
    """How well the evidence states each distinct claim term.

    Per term: (absent, coverage gap, missing, evidence frequency), as in FEATURES (plain
    tuples: this runs for every imported claim). A unit is a sentence or a clause of one
    (_clause_masks); its window adds the neighbouring sentences, as claims often join what
    adjacent sentences say; coverage is the share of the claim's terms in a window.
    """
    distinct = list(dict.fromkeys(t for t in terms if t))
    masks: dict[tuple[int, int], int] = {}
    flags: dict[str, int] = {}  # claim term -> its bit
    frequency = [0] * len(distinct)
    for bit, term in enumerate(distinct):
        flag = 1 << bit
        flags[term] = flag
        for p, passage in enumerate(passages):
            hits = passage.index.postings(term)
            frequency[bit] += len(hits)
            for sentence, _ in hits:
                masks[(p, sentence)] = masks.get((p, sentence), 0) | flag
    count = len(distinct) or 1
    best = 0
    window = [0] * len(distinct)  # best window coverage of a unit holding the term
    own = [0] * len(distinct)  # best coverage of a single unit holding the term
    for (p, s), mask in masks.items():
        around = masks.get((p, s - 1), 0) | masks.get((p, s + 1), 0)
        for unit in _clause_masks(passages[p], s, mask, flags):
            covered = (unit | around).bit_count()
            alone = unit.bit_count()
            best = max(best, covered)
            bits = unit
            while bits:
                low = bits & -bits
                bit = low.bit_length() - 1
                window[bit] = max(window[bit], covered)
                own[bit] = max(own[bit], alone)
                bits ^= low
    support: dict[str, tuple[bool, float, bool, float]] = {}
    for bit, term in enumerate(distinct):
        absent = frequency[bit] == 0
        support[term] = (
            absent,
            (best - own[bit]) / count,
            absent or (best - window[bit]) / count > _MISSING_GAP,
            math.log1p(frequency[bit]) / 5,
        )
    return support


def _clause_masks(
    passage: PreparedPassage, sentence: int, mask: int, flags: dict[str, int]
) -> list[int]:
    """The claim terms of each clause of a sentence that holds a semicolon.

    "Consumers can return hardware within 30 days; business customers within 14 days"
    does not state that customers can return it within 30 days: a word in the wrong
    clause is not where the claim is stated. Only sentences that hold a claim term are
    split, so the cost follows the matches, not the passage.
    """
    start, end = passage.spans[sentence]
    text = passage.text[start:end]
    if ";" not in text:
        return [mask]
    units = []
    for clause in text.casefold().split(";"):
        unit = 0
        for word in TERM.findall(clause):
            if word not in STOP_WORDS:
                unit |= flags.get(_term(word), 0)
        units.append(unit)
    return units


def _matched_words(claim: _Claim, passages: Sequence[PreparedPassage]) -> list[bool]:
    """Per token: does its word and a neighbouring claim word occur consecutively in a source?

    Pairs of two stop words are skipped: "of the" is everywhere and says nothing, and
    their long position lists are the only slow case.
    """
    words = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(claim.folded)]
    matched = [False] * len(words)
    for j in range(len(words) - 1):
        first, second = words[j][2], words[j + 1][2]
        if first in STOP_WORDS and second in STOP_WORDS:
            continue
        for passage in passages:
            positions = passage.word_positions
            if _consecutive(positions.get(first), positions.get(second)):
                matched[j] = matched[j + 1] = True
                break
    flags: list[bool] = []
    w = 0
    for start in claim.starts:
        while w < len(words) and words[w][1] <= start:
            w += 1
        flags.append(w < len(words) and words[w][0] <= start and matched[w])
    return flags


def _consecutive(first: list[int] | None, second: list[int] | None) -> bool:
    if not first or not second:
        return False
    if len(first) <= len(second):
        for q in first:
            at = bisect.bisect_left(second, q + 1)
            if at < len(second) and second[at] == q + 1:
                return True
        return False
    for q in second:
        at = bisect.bisect_left(first, q - 1)
        if at < len(first) and first[at] == q - 1:
            return True
    return False


# ---------------------------------------------------------------------------- features


def _features(claim: _Claim, passages: Sequence[PreparedPassage]) -> list[tuple[float, ...]]:
    """One vector per token, in the order of FEATURES."""
    support = _term_support(claim.terms, passages)
    matched = _matched_words(claim, passages)
    terms, kinds = claim.terms, claim.kinds
    n = len(terms)
    missing = [bool(t) and support[t][2] for t in terms]
    # The nearest term after each token, skipping stop words and suffixes.
    next_term: list[int | None] = [None] * n
    following = None
    for i in range(n - 1, -1, -1):
        next_term[i] = following
        if terms[i]:
            following = i
    share, whole = _phrase_missing(claim, missing)
    words = [claim.folded[start:end] for start, end in zip(claim.starts, claim.ends, strict=True)]
    classes = [_class_flags(word) for word in words]
    vectors: list[tuple[float, ...]] = []
    nothing = (False, 0.0, False, 0.0)
    for i, (term, kind) in enumerate(zip(terms, kinds, strict=True)):
        absent, gap, _, frequency = support.get(term, nothing)
        after = next_term[i]
        after_missing = after is not None and missing[after]
        is_date_after = after is not None and (
            kinds[after] == _NUMBER or terms[after] in _MONTH_STEMS
        )
        word = words[i]
        vectors.append(
            (
                kind == _STOP,
                kind == _NUMBER,
                kind == _SUFFIX,
                kind == _CAPITALISED,
                kind == _OTHER,
                absent,
                gap,
                missing[i],
                i > 0 and missing[i - 1],
                i + 1 < n and missing[i + 1],
                kind == _STOP and after_missing,
                kind == _STOP and word in _PREPOSITIONS and after_missing and is_date_after,
                matched[i],
                i / (n - 1) if n > 1 else 0.0,
                frequency,
                kind == _CAPITALISED and absent,
                kind == _OTHER and absent,
                share[i],
                whole[i],
                kind in (_CAPITALISED, _OTHER) and word.endswith("ed"),
                *classes[i],
                *(classes[i - 1] if i > 0 else _NO_CLASS),
                *(classes[i + 1] if i + 1 < n else _NO_CLASS),
            )
        )
    return vectors


_NO_CLASS = (False,) * len(_WORD_CLASSES)


def _class_flags(word: str) -> tuple[bool, ...]:
    """One flag per entry of _WORD_CLASSES: which class the word is of, if any."""
    k = _WORD_CLASS.get(word)
    if k is None:
        return _NO_CLASS
    return tuple(j == k for j in range(len(_WORD_CLASSES)))


# Punctuation between two tokens that starts a new phrase of the claim.
_PHRASE_BREAK = re.compile(r"[,;:()\u2013\u2014\"]|\s-\s")


def _phrase_missing(claim: _Claim, missing: Sequence[bool]) -> tuple[list[float], list[bool]]:
    """Per token: the share of missing terms among the content terms of its phrase, and
    whether all of them are missing.

    A phrase is a run of tokens between punctuation ("born in 1950, in Leeds"). People
    mark unsupported parts of a claim as whole phrases, and a word whose phrase is
    otherwise stated is rarely one of them, nor is a stop word in such a phrase.
    """
    n = len(claim.terms)
    phrase = [0] * n
    # Punctuation never lies inside a token, so a break before token i is one found
    # between the end of token i-1 and the start of token i.
    breaks = [m.start() for m in _PHRASE_BREAK.finditer(claim.folded)]
    b = 0
    for i in range(1, n):
        phrase[i] = phrase[i - 1]
        while b < len(breaks) and breaks[b] < claim.starts[i]:
            if breaks[b] >= claim.ends[i - 1]:
                phrase[i] = phrase[i - 1] + 1
            b += 1
    counts: dict[int, list[int]] = {}  # phrase -> [content terms, missing ones]
    for i in range(n):
        if claim.terms[i]:
            tally = counts.setdefault(phrase[i], [0, 0])
            tally[0] += 1
            tally[1] += bool(missing[i])
    share: list[float] = []
    whole: list[bool] = []
    for i in range(n):
        total, gone = counts.get(phrase[i], (0, 0))
        share.append(gone / total if total else 0.0)
        whole.append(bool(total) and gone == total)
    return share, whole


def _probabilities(vectors: Sequence[tuple[float, ...]]) -> list[float]:
    return [1.0 / (1.0 + math.exp(-_BIAS - math.sumprod(_WEIGHTS, v))) for v in vectors]


# ---------------------------------------------------------------------------- spans


def unsupported_spans(claim: str, evidence: Sequence[str | PreparedPassage]) -> list[Span]:
    """Spans of the claim that the evidence does not state: suggested unsupported assertions.

    Every token of the claim is scored from string facts (is the term in the evidence,
    in a sentence window that covers as much of the claim as the best one, next to a claim
    neighbour as in the source; is a neighbour missing; what class of word are it and its
    neighbours: an auxiliary, an ordinal, a month...) and runs of tokens scoring above
    a threshold become spans. With no evidence text everything from the first to the
    last content word is one span; a claim quoted word for word has none. Spans are
    character offsets into `claim`, sorted, non-overlapping, never inside a word.
    """
    read = _read_claim(claim)
    content = [i for i, term in enumerate(read.terms) if term]
    if not content:
        return []
    passages = [p if isinstance(p, PreparedPassage) else prepare_passage(p) for p in evidence]
    if not any(p.index.occurrences for p in passages):
        return _to_spans(claim, read, [(content[0], content[-1])])
    # A cheap substring test first: verify_quote scores near misses, which is slow.
    needle = fold(claim).strip("\"'`\u00ab\u00bb\u2039\u203a.,;:\u2026- ")
    if any(needle in p.folded and verify_quote(claim, p).verified for p in passages):
        return []
    vectors = _features(read, passages)
    return _decode(claim, read, vectors, _probabilities(vectors), _THRESHOLD)


def _decode(
    claim: str,
    read: _Claim,
    vectors: Sequence[tuple[float, ...]],
    probabilities: Sequence[float],
    threshold: float,
) -> list[Span]:
    """Runs of tokens above the threshold that hold a missing term, as spans.

    A run without one is dropped: the model has learnt that figures and late words are
    often wrong in its training claims, but a suggestion must point at something the
    evidence lacks, not at a figure it states.
    """
    runs: list[tuple[int, int]] = []
    anchored: list[bool] = []
    for i, probability in enumerate(probabilities):
        if probability <= threshold:
            continue
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
            anchored.append(False)
        anchored[-1] = anchored[-1] or bool(vectors[i][_MISSING])
    return _to_spans(claim, read, [r for r, a in zip(runs, anchored, strict=True) if a])


def _to_spans(claim: str, read: _Claim, runs: Sequence[tuple[int, int]]) -> list[Span]:
    """Token runs as claim spans, widened to whole words ("5" of "5kW") and merged."""
    spans: list[Span] = []
    for first, last in runs:
        start, end = read.span(first, last)
        while start > 0 and _is_word_char(claim[start - 1]):
            start -= 1
        while end < len(claim) and _is_word_char(claim[end]):
            end += 1
        if spans and start <= spans[-1].end:
            spans[-1] = Span(spans[-1].start, max(end, spans[-1].end))
        else:
            spans.append(Span(start, end))
    return spans


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"
