"""Suggested unsupported assertions: the parts of a claim that its cited passages do not state.

Claim words, numbers and names missing from the best-matching cited sentences, merged into
phrase spans that a reviewer accepts or edits; deterministic string work, like the matcher.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from audit.bm25 import STOP_WORDS, TERM, stem

if TYPE_CHECKING:
    from audit.matching import PreparedPassage

__all__ = ["Span", "SpanOptions", "unsupported_spans"]


@dataclass(frozen=True, order=True)
class Span:
    """Character offsets into the claim: claim[start:end] is the suggested assertion."""

    start: int
    end: int


@dataclass(frozen=True)
class SpanOptions:
    """How words are judged and merged (bench/eval_unsupported.py measures each part)."""

    # A claim word counts as stated only if it occurs in one of this many best-ranked
    # sentences (rank_sentences); 0 means anywhere in the evidence.
    focus: int = 0
    # Stop words and punctuation between two unsupported words that still join them into
    # one span: people mark "on 24 October 1996", not "24" and "October" apart.
    merge_gap: int = 0
    # Prepositions before an unsupported number or date join its span ("in 2015").
    lead_prepositions: bool = False
    # One unsupported word of a capitalised name marks the whole name.
    names: bool = False


DEFAULT_OPTIONS = SpanOptions()

# Letters glued to a number belong to it: "24th", "1990s", "$12m", "5km".
_NUMBER_SUFFIXES = frozenset(["st", "nd", "rd", "th", "s", "m", "bn", "k", "km", "kg", "am", "pm"])
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_NUMBER_WORDS = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)
_PREPOSITIONS = frozenset(["on", "in", "at", "by", "from", "to", "since", "until", "during", "of"])


def _aliases() -> dict[str, tuple[str, ...]]:
    """Other spellings a claim term may have in a source, already stemmed."""
    aliases: dict[str, tuple[str, ...]] = {}
    for number, month in enumerate(_MONTHS, start=1):
        # "Oct 31" and "2017-10-31" state "October 31" as well.
        aliases[stem(month)] = (stem(month[:3]), str(number), f"{number:02d}")
    for number, word in enumerate(_NUMBER_WORDS):
        aliases[stem(word)] = (str(number),)
        aliases[str(number)] = (stem(word),)
    return aliases


_ALIASES = _aliases()


@dataclass(frozen=True)
class _Token:
    start: int  # offsets into the claim
    end: int
    term: str  # stemmed, as the passages' index has it ("" for a stop word)
    kind: str  # "word", "number", "stop" or "suffix"
    capital: bool


def _tokens(claim: str) -> list[_Token]:
    """Claim terms with their offsets, analysed like the passages' index (audit.bm25)."""
    if claim.isascii():
        folded, origin = claim.lower(), None
    else:
        # casefold() may lengthen a character ("ß" -> "ss"): keep where each folded
        # character came from, so that spans still point into the claim as written.
        parts: list[str] = []
        origin = []
        for i, char in enumerate(claim):
            lowered = char.casefold()
            parts.append(lowered)
            origin.extend([i] * len(lowered))
        folded = "".join(parts)
        origin.append(len(claim))
    tokens: list[_Token] = []
    for m in TERM.finditer(folded):
        word = m.group()
        start, end = m.span()
        if origin is not None:
            start, end = origin[start], origin[end - 1] + 1
        if word[0].isdigit():
            kind, term = "number", word.replace(",", "")
        elif tokens and tokens[-1].kind == "number" and tokens[-1].end == start:
            kind, term = ("suffix", "") if word in _NUMBER_SUFFIXES else ("word", stem(word))
        elif word in STOP_WORDS:
            kind, term = "stop", ""
        else:
            kind, term = "word", stem(word)
        tokens.append(_Token(start, end, term, kind, claim[start].isupper()))
    return tokens


def unsupported_spans(
    claim: str, evidence: Sequence[str | PreparedPassage], options: SpanOptions = DEFAULT_OPTIONS
) -> list[Span]:
    """Spans of the claim that no cited passage states: the suggested unsupported assertions.

    A content word, number or name is unsupported when its stem (after the matcher's
    folding) is not in the best-ranked cited sentences; unsupported words close together
    are merged into one span. A claim quoted word for word in a passage has none. Spans
    are character offsets into `claim`, sorted, non-overlapping, never inside a word.
    """
    # Imported here: audit.matching re-exports this function, so a module-level import
    # would be circular whichever module is imported first.
    from audit.matching import PreparedPassage, prepare_passage, rank_sentences, verify_quote

    tokens = _tokens(claim)
    if not any(t.term for t in tokens):
        return []
    passages = [p if isinstance(p, PreparedPassage) else prepare_passage(p) for p in evidence]
    if any(verify_quote(claim, p).verified for p in passages):
        return []
    has = _support_test(claim, passages, options.focus, rank_sentences)
    unsupported = [bool(t.term) and not has(t.term) for t in tokens]
    return _merge(tokens, unsupported, claim, options)


def _support_test(claim, passages, focus, rank_sentences):  # noqa: ANN001, ANN202
    """A predicate: does the evidence (or its `focus` best sentences) have this term?"""
    numbers: set[str] = set()
    for p in passages:
        numbers.update(n.replace(",", "") for n in p.numbers)
    if focus <= 0:
        postings = [p.index.postings for p in passages]

        def found(term: str) -> bool:
            return any(term in index for index in postings)

    else:
        chosen: list[set[int]] = [set() for _ in passages]
        for h in rank_sentences(claim, passages, k=focus):
            spans = passages[h.passage].spans
            chosen[h.passage].add(bisect.bisect_left(spans, (h.start, h.end)))
        pairs = [(p.index.postings, c) for p, c in zip(passages, chosen, strict=True) if c]

        def found(term: str) -> bool:
            for index, sentences in pairs:
                for sentence, _ in index.get(term, ()):
                    if sentence in sentences:
                        return True
            return False

    def has(term: str) -> bool:
        if found(term):
            return True
        return any(found(alias) for alias in _ALIASES.get(term, ()))

    return has


def _merge(
    tokens: Sequence[_Token], unsupported: Sequence[bool], claim: str, options: SpanOptions
) -> list[Span]:
    marked = list(unsupported)
    # A suffix shares its number's verdict.
    for i, t in enumerate(tokens):
        if t.kind == "suffix" and i and marked[i - 1]:
            marked[i] = True
    if options.names:
        i = 0
        while i < len(tokens):
            if tokens[i].capital and tokens[i].kind == "word":
                j = i
                while j + 1 < len(tokens) and tokens[j + 1].capital and tokens[j + 1].kind == "word":
                    j += 1
                if any(marked[i : j + 1]):
                    for k in range(i, j + 1):
                        marked[k] = True
                i = j + 1
            else:
                i += 1
    if options.lead_prepositions:
        for i in range(1, len(tokens)):
            dated = tokens[i].kind == "number" or tokens[i].term in _MONTH_STEMS
            before = tokens[i - 1]
            if marked[i] and dated and not marked[i - 1] and before.kind == "stop":
                if claim[before.start : before.end].lower() in _PREPOSITIONS:
                    marked[i - 1] = True
    spans: list[Span] = []
    last = -1  # index of the last marked token in spans[-1]
    for i, flag in enumerate(marked):
        if not flag:
            continue
        t = tokens[i]
        if spans and i - last - 1 <= options.merge_gap and all(
            tokens[k].kind == "stop" for k in range(last + 1, i)
        ):
            spans[-1] = Span(spans[-1].start, t.end)
        else:
            spans.append(Span(t.start, t.end))
        last = i
    return spans


_MONTH_STEMS = frozenset(stem(m) for m in _MONTHS)
