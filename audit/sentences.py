"""Fast sentence splitter with character offsets, for highlights and clickable sentences.

A regex finds candidate ends; a short abbreviation list and the next word's case decide.
"""

from __future__ import annotations

import re

# Titles and Latin/reference abbreviations that are practically never the end of a
# sentence: no split after them, whatever follows.
_NEVER_FINAL = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "mx",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "ft",
        "gen",
        "sen",
        "rep",
        "gov",
        "capt",
        "lt",
        "col",
        "sgt",
        "maj",
        "cmdr",
        "adm",
        "rev",
        "hon",
        "pres",
        "supt",
        "insp",
        "e.g",
        "i.e",
        "cf",
        "vs",
        "viz",
        "al",
        "fig",
        "figs",
        "eq",
        "eqs",
        "ref",
        "refs",
        "vol",
        "vols",
        "pp",
        "ch",
        "sec",
        "chap",
        "art",
        "approx",
        "ca",
        "est",
        "dept",
        "univ",
        "assn",
        "bros",
        "corp",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "u.s",
        "u.k",
        "u.n",
        "u.s.a",
        "e.u",
        "no",
        "nos",
        "nr",
        "op",
    ]
)
_ONLY_BEFORE_DIGIT = frozenset({"no", "nos", "nr", "op", "vol", "pp", "fig", "figs", "eq", "ch"})

# A run of terminators, then closing quotes/brackets or footnote markers like "[12]",
# followed by whitespace or the end. A newline always ends a sentence. A marker may stand
# a space away, on either side of a closing quote ('rose." [1]', 'rose. [1]"'): it is
# the footnote of the sentence before it, not the start of the next one.
_CANDIDATE = re.compile(r"[.!?\u2026]+(?:[\"'\u2019\u201d)\]]|[ \t\u00a0]*\[\d{1,3}\])*(?=\s|$)|\n")
# Sentences without any terminator for this long (scraped menus, tables, junk) are cut at
# whitespace so that a highlight stays readable and ranking stays meaningful.
_MAX_SENTENCE_CHARS = 1500


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Return (start, end) offsets of the sentences of text, surrounding whitespace stripped.

    Every newline ends a sentence. A full stop ends one unless it follows a known
    abbreviation or a single capital initial, or the next word starts in lower case.
    """
    spans: list[tuple[int, int]] = []
    if not text:
        return spans
    start = 0
    n = len(text)
    for m in _CANDIDATE.finditer(text):
        end = m.end()
        if m.group() != "\n" and not _is_boundary(text, start, m.start(), end, n):
            continue
        _add_span(text, start, end, spans)
        start = end
    if start < n:
        _add_span(text, start, n, spans)
    return spans


def _is_boundary(text: str, start: int, term_start: int, end: int, n: int) -> bool:
    nxt = end
    while nxt < n and text[nxt] in " \t\r\f\v\u00a0\u2009\u202f":
        nxt += 1
    if nxt >= n or text[nxt] == "\n":
        return True
    follower = text[nxt]
    if follower.islower():
        return False
    if text[term_start] != ".":
        return True
    if text.startswith("....", term_start):
        # Dot leaders of a table of contents ("Doubling ....... 185") join, not end.
        return False
    # The word right before the full stop, from the last whitespace.
    word_start = max(
        start, text.rfind(" ", start, term_start) + 1, text.rfind("\n", start, term_start) + 1
    )
    word = text[word_start:term_start].lstrip("\"'(\u201c\u2018[").lower()
    if not word:
        return True
    if word in _NEVER_FINAL:
        # "No. 5" never ends a sentence; "The answer is no. Then" does.
        return word in _ONLY_BEFORE_DIGIT and not follower.isdigit()
    if len(word) == 1 and word.isalpha():
        # "J. K. Rowling", "Roe v. Wade", "c. 1162": a lone letter is an initial.
        return False
    if "." in word and len(word) <= 8 and any(c.isupper() for c in text[word_start:term_start]):
        # Dotted acronyms ("G.I. Joe", "37 C.F.R. 1.130") are names, not sentence ends.
        return False
    # "1. Public ownership": an enumeration marker at the start of a sentence.
    return not (word.isdigit() and len(word) <= 3 and not text[start:word_start].strip())


def _add_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start >= end:
        return
    while end - start > _MAX_SENTENCE_CHARS:
        cut = text.rfind(" ", start + _MAX_SENTENCE_CHARS // 2, start + _MAX_SENTENCE_CHARS)
        if cut <= start:
            cut = start + _MAX_SENTENCE_CHARS
        piece_end = cut
        while piece_end > start and text[piece_end - 1].isspace():
            piece_end -= 1
        spans.append((start, piece_end))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if start < end:
        spans.append((start, end))
