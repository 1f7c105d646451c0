"""Turn a generated answer into claims (one per sentence) with their citation markers,
find claims that an import format gives as plain strings back in the answer, and plan the
claims an imported answer will be stored with (`plan_claims`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pysbd
from rapidfuzz import fuzz

if TYPE_CHECKING:
    from audit.formats.records import AnswerRecord


# Where a claim's text sits in its answer: the values of models.Claim.Location.
def claim_name(*, answer_id: str, order: int, parent_order: int | None = None) -> str:
    """How people name a claim: its answer's id and its 1-based place in the answer
    ("refund-a1 claim 1"), an atomic claim its parent's place then its own ("refund-a1
    claim 2.1"). Stable across databases, unlike the claim's key."""
    if parent_order is None:
        return f"{answer_id} claim {order + 1}"
    return f"{answer_id} claim {parent_order + 1}.{order + 1}"


LOCATION_SPLIT = "split"
LOCATION_EXACT = "exact"
LOCATION_FUZZY = "fuzzy"
LOCATION_NOT_LOCATED = "not_located"

# What counts as a citation marker: a bracket on one line, not followed by "(" (that is a
# markdown link), whose body is one or more items separated by "," or ";". An item is a
# number N or an ascending range N-M / N–M of at most 100 numbers, optionally prefixed by
# "^" (footnote) or by chunk / source / document / doc / passage in any case. A number 0
# is a marker too: no passage is numbered 0, so plan_claims keeps it as cited-unknown
# instead of leaving "[0]" in the claim's text as if it were prose.
# A lone bare four-digit number from 1000 to 2999 ("[2019]") is a year: no
# answer cites that many passages. Anything else ("[sic]", "[citation needed]", "[1a]",
# "[1, see below]", "[ ]", "[1-99999999999]") is plain text, and the range cap means such
# a bracket can never expand into a huge list.
# The body length cap keeps int() far below Python's digit limit and bounds the work per "[".
_BRACKET_RE = re.compile(r"\[([^\[\]\r\n]{1,200})\](?!\()")
_ITEM_RE = re.compile(
    r"(?P<prefix>\^|(?:chunk|source|document|doc|passage)\s*)?"
    r"(?P<first>[0-9]+)(?:\s*[-–]\s*(?P<last>[0-9]+))?",
    re.IGNORECASE,
)
_MAX_RANGE = 100
_YEAR_RANGE = range(1000, 3000)

# Removing a marker must not leave a space in front of these ("dollars [2]." -> "dollars.").
_CLOSING_PUNCTUATION = frozenset(".,;:!?)]}…”’»")
# Straight quotes open or close; one followed by a space, the end or closing punctuation
# closes ('rose. [1]" Then' -> 'rose." Then').
_STRAIGHT_QUOTES = frozenset("\"'")
# Closing quotes and brackets after a sentence's terminator ('rose."', "(rose.)").
_CLOSERS = frozenset("\"'”’»)")
# What may open a sentence after a quote: opening quotes or a bracket, then a capital.
_OPENERS = frozenset("\"'“‘«(")
_MESSY_WHITESPACE_RE = re.compile(r"\s{2,}|[\t\n\r\f\v\x85\u2028\u2029]")
# Lone list bullets are glued to the sentence they introduce, never claims of their own.
_LIST_BULLET_RE = re.compile(r"(?:[-*•+]|\(?[0-9]{1,3}[.)]|\(?[A-Za-z][.)])")
_LINE_RE = re.compile(r"[^\r\n]+")
_TERMINATORS_RE = re.compile(r"[.!?…]+")
_LINE_BREAK_RE = re.compile(r"[\r\n]")
_QUOTE_FOLD = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})

_FUZZY_THRESHOLD = 0.8


@dataclass(frozen=True)
class Marker:
    """One bracket group, e.g. ``[1, 2]``; ``[1][2]`` is two markers."""

    start: int
    end: int
    numbers: tuple[int, ...]


@dataclass(frozen=True)
class ParsedClaim:
    """A sentence of an answer; ``answer[start:end]`` includes its trailing markers."""

    start: int
    end: int
    text: str
    citations: tuple[int, ...]
    markers: tuple[Marker, ...]


@dataclass(frozen=True)
class Location:
    """Where a claim given as a string sits in an answer (offsets into the answer)."""

    start: int
    end: int
    score: float
    exact: bool


def find_markers(text: str) -> list[Marker]:
    """Every citation marker in ``text``, in order, with offsets into ``text``."""
    markers = []
    for match in _BRACKET_RE.finditer(text):
        numbers = _parse_marker_body(match.group(1))
        if numbers is not None:
            markers.append(Marker(start=match.start(), end=match.end(), numbers=numbers))
    return markers


def strip_markers(text: str) -> str:
    """``text`` without citation markers, with the whitespace the removal disturbed tidied."""
    return _strip(text, find_markers(text))


def split_claims(answer: str) -> list[ParsedClaim]:
    """The answer's sentences as claims; sentences that are only markers are dropped."""
    markers = find_markers(answer)
    starts = [marker.start for marker in markers]
    spans = _sentence_spans(answer)
    spans = _merge_spans_cutting_markers(spans, markers, starts)
    spans = _attach_leading_markers(answer, spans, markers, starts)
    claims = []
    for start, end in spans:
        claim = _build_claim(answer, start, end, _markers_within(markers, starts, start, end))
        if claim.text:
            claims.append(claim)
    return claims


def claim_from_span(answer: str, start: int, end: int) -> ParsedClaim:
    """A claim for a span the caller already knows (trimmed of surrounding whitespace).

    Unlike ``split_claims`` this returns the claim even when its text is empty, so the
    caller can decide what an empty claim means for its format.
    """
    if not 0 <= start <= end <= len(answer):
        raise ValueError(f"span {start}:{end} is outside an answer of length {len(answer)}")
    start, end = _trim(answer, start, end)
    # Markers are found in the whole answer so a span ending just before "(" cannot turn
    # a markdown link into a citation.
    markers = find_markers(answer)
    starts = [marker.start for marker in markers]
    return _build_claim(answer, start, end, _markers_within(markers, starts, start, end))


def locate_claim(claim: str, answer: str, start_hint: int = 0) -> Location | None:
    """Where ``claim`` sits in ``answer``, or None when nothing scores at least 0.8.

    Tries an exact search (from ``start_hint``, then from 0), then an exact search with
    markers removed and whitespace and curly quotes folded (score 1.0, not exact), then
    a fuzzy alignment. Only exact hits guarantee ``answer[start:end] == claim.strip()``;
    the others are widened over the citation markers that follow them in the answer.
    """
    needle = claim.strip()
    if not needle:
        return None
    start_hint = min(max(start_hint, 0), len(answer))
    for origin in (start_hint, 0):
        index = answer.find(needle, origin)
        if index >= 0:
            return Location(start=index, end=index + len(needle), score=1.0, exact=True)

    folded_claim, _ = _fold(needle, find_markers(needle))
    if not folded_claim:
        return None
    answer_markers = find_markers(answer)
    folded_answer, positions = _fold(answer, answer_markers)
    folded_hint = bisect.bisect_left(positions, start_hint)
    for origin in (folded_hint, 0):
        index = folded_answer.find(folded_claim, origin)
        if index >= 0:
            return _location_from_folded(
                answer,
                answer_markers,
                folded_answer,
                positions,
                index,
                index + len(folded_claim),
                1.0,
            )

    alignment = fuzz.partial_ratio_alignment(
        _lower_same_length(folded_claim),
        _lower_same_length(folded_answer),
        score_cutoff=_FUZZY_THRESHOLD * 100,
    )
    if alignment is None:
        return None
    return _location_from_folded(
        answer,
        answer_markers,
        folded_answer,
        positions,
        alignment.dest_start,
        alignment.dest_end,
        round(alignment.score / 100, 4),
    )


def _parse_marker_body(body: str) -> tuple[int, ...] | None:
    """The citation numbers of a bracket body, or None when the bracket is not a citation."""
    items = body.replace(";", ",").split(",")
    numbers: list[int] = []
    for item in items:
        match = _ITEM_RE.fullmatch(item.strip())
        if match is None:
            return None
        first = int(match["first"])
        last = int(match["last"]) if match["last"] is not None else first
        if last < first or last - first >= _MAX_RANGE:
            return None
        is_year = (
            len(items) == 1
            and match["prefix"] is None
            and match["last"] is None
            and len(match["first"]) == 4
            and first in _YEAR_RANGE
        )
        if is_year:
            return None
        numbers.extend(range(first, last + 1))
    return tuple(dict.fromkeys(numbers))


def _marker_runs(text: str, markers: list[Marker]) -> list[tuple[int, int]]:
    """Groups of markers separated only by whitespace, commas or semicolons ("[1], [2]")."""
    runs: list[tuple[int, int]] = []
    for marker in markers:
        if runs and not text[runs[-1][1] : marker.start].strip(" \t\u00a0,;"):
            runs[-1] = (runs[-1][0], marker.end)
        else:
            runs.append((marker.start, marker.end))
    return runs


def _strip(text: str, markers: list[Marker]) -> str:
    """``text`` without ``markers`` (offsets into ``text``), whitespace tidied."""
    pieces: list[str] = []
    cursor = 0
    for run_start, run_end in _marker_runs(text, markers):
        before = text[cursor:run_start]
        kept_before = before.rstrip()
        after_start = run_end
        while after_start < len(text) and text[after_start].isspace():
            after_start += 1
        spaced = len(kept_before) < len(before) or after_start > run_end
        next_char = text[after_start] if after_start < len(text) else ""
        previous_char = kept_before[-1:] or (pieces[-1][-1:] if pieces else "")
        pieces.append(kept_before)
        if not next_char or not previous_char or _closes(text, after_start):
            pass
        elif spaced or (previous_char.isalnum() and next_char.isalnum()):
            pieces.append(" ")
        cursor = after_start
    pieces.append(text[cursor:])
    return _MESSY_WHITESPACE_RE.sub(" ", "".join(pieces)).strip()


def _closes(text: str, index: int) -> bool:
    """Whether text[index] is punctuation that no space may precede."""
    char = text[index]
    if char in _CLOSING_PUNCTUATION:
        return True
    if char not in _STRAIGHT_QUOTES:
        return False
    after = text[index + 1 : index + 2]
    return not after or after.isspace() or after in _CLOSING_PUNCTUATION


def _build_claim(answer: str, start: int, end: int, markers: list[Marker]) -> ParsedClaim:
    relative = [
        Marker(start=m.start - start, end=m.end - start, numbers=m.numbers) for m in markers
    ]
    citations = tuple(dict.fromkeys(n for marker in markers for n in marker.numbers))
    return ParsedClaim(
        start=start,
        end=end,
        text=_strip(answer[start:end], relative),
        citations=citations,
        markers=tuple(markers),
    )


def _markers_within(markers: list[Marker], starts: list[int], start: int, end: int) -> list[Marker]:
    first = bisect.bisect_left(starts, start)
    last = bisect.bisect_left(starts, end)
    return [marker for marker in markers[first:last] if marker.end <= end]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


_segmenter: pysbd.Segmenter | None = None


def _segment(line: str) -> list[str]:
    global _segmenter
    if _segmenter is None:
        _segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)
    # Segmenter.segment() adds a char-span pass that is quadratic on repeated sentences
    # and keeps the text on the shared instance; the processor it wraps does neither, and
    # _sentence_spans computes the offsets itself.
    return _segmenter.processor(line).process() or []


def _sentence_spans(answer: str) -> list[tuple[int, int]]:
    """Sentence spans covering every non-whitespace character; newlines always split."""
    spans: list[tuple[int, int]] = []
    for line_match in _LINE_RE.finditer(answer):
        line = line_match.group()
        if not line.strip():
            continue
        base = line_match.start()
        # pysbd's own offsets go wrong on repeated sentences and it may drop or rewrite
        # text, so only the ends of sentences found verbatim are used as cut points.
        cuts: list[int] = []
        cursor = 0
        for sentence in _segment(line):
            sentence = sentence.strip()
            index = line.find(sentence, cursor) if sentence else -1
            if index >= 0:
                cursor = index + len(sentence)
                cuts.append(cursor)
        cuts = _cut_after_quotes_with_markers(line, cuts)
        previous = 0
        line_spans: list[tuple[int, int]] = []
        for cut in [*cuts, len(line)]:
            start, end = _trim(line, previous, cut)
            previous = max(previous, cut)
            if start >= end:
                continue
            if line_spans and _LIST_BULLET_RE.fullmatch(
                line[line_spans[-1][0] : line_spans[-1][1]]
            ):
                line_spans[-1] = (line_spans[-1][0], end)
            else:
                line_spans.append((start, end))
        spans.extend((base + start, base + end) for start, end in line_spans)
    return spans


def _cut_after_quotes_with_markers(line: str, cuts: list[int]) -> list[int]:
    """pysbd's cuts, plus one after a closing quote or bracket that ends a sentence next to
    a citation marker ('rose." [1] Then', 'rose. [1]" Then', "(rose [1].) Then").

    pysbd reads such a marker as the next word and keeps both sentences as one claim with
    both sentences' citations. The new cut goes after the closing characters; markers that
    follow are given back to the sentence by _attach_leading_markers. A cut pysbd made
    between the terminator and the closing quote is dropped, so the quote stays whole. Only
    a capital (or an opening quote or bracket before one) starts the next sentence: 'the
    report "Why it rose." [1] was read' stays one claim.
    """
    found = find_markers(line)
    markers = {marker.start: marker.end for marker in found}
    marker_ends = {marker.end for marker in found}
    extra: dict[int, int] = {}
    for match in _TERMINATORS_RE.finditer(line):
        index, saw_marker = _skip_markers(line, match.end(), markers)
        saw_marker = saw_marker or len(line[: match.start()].rstrip(" \t\u00a0")) in marker_ends
        closers_start = index
        while index < len(line) and line[index] in _CLOSERS:
            index += 1
        if index == closers_start:
            continue
        cut = index
        index, marker_after = _skip_markers(line, index, markers)
        if not (saw_marker or marker_after) or index == cut or index >= len(line):
            continue
        if not line[index - 1].isspace():
            continue
        while index < len(line) - 1 and line[index] in _OPENERS:
            index += 1
        if line[index].isupper():
            extra[cut] = match.end()
    if not extra:
        return cuts
    kept = [c for c in cuts if not any(e <= c < cut for cut, e in extra.items())]
    return sorted({*kept, *extra})


def _skip_markers(line: str, index: int, markers: dict[int, int]) -> tuple[int, bool]:
    """The offset past the spaces and citation markers at index, and whether one was there."""
    saw = False
    while index < len(line):
        if line[index] in " \t\u00a0":
            index += 1
        elif index in markers:
            index = markers[index]
            saw = True
        else:
            break
    return index, saw


def _merge_spans_cutting_markers(
    spans: list[tuple[int, int]], markers: list[Marker], starts: list[int]
) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and _inside_marker(merged[-1][1], markers, starts):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _inside_marker(offset: int, markers: list[Marker], starts: list[int]) -> bool:
    index = bisect.bisect_right(starts, offset - 1) - 1
    return index >= 0 and markers[index].start < offset < markers[index].end


def _attach_leading_markers(
    answer: str, spans: list[tuple[int, int]], markers: list[Marker], starts: list[int]
) -> list[tuple[int, int]]:
    """Give markers that open a sentence to the sentence before ("dollars. [2] Next")."""
    attached: list[tuple[int, int]] = []
    for start, end in spans:
        run_end = start
        cursor = start
        index = bisect.bisect_left(starts, start)
        while index < len(markers) and markers[index].start == cursor:
            if markers[index].end > end:
                break
            run_end = cursor = markers[index].end
            index += 1
            while cursor < end and (answer[cursor].isspace() or answer[cursor] in ",;"):
                cursor += 1
        if run_end == start or not attached:
            attached.append((start, end))
            continue
        rest_start, _ = _trim(answer, run_end, end)
        previous_start, previous_end = attached[-1]
        if rest_start >= end:
            attached[-1] = (previous_start, end)
        elif not _LINE_BREAK_RE.search(answer, previous_end, start):
            attached[-1] = (previous_start, run_end)
            attached.append((rest_start, end))
        else:
            attached.append((start, end))
    return attached


def _fold(text: str, markers: list[Marker]) -> tuple[str, list[int]]:
    """``text`` without markers, whitespace collapsed and curly quotes straightened.

    Returns the folded text and, for each of its characters, the offset in ``text`` it
    came from. A space is only kept between words, never before closing punctuation, so
    "dollars [2]." and "dollars." fold alike.
    """
    chars: list[str] = []
    positions: list[int] = []
    pending_space = False
    marker_index = 0
    index = 0
    while index < len(text):
        if marker_index < len(markers) and markers[marker_index].start == index:
            index = markers[marker_index].end
            marker_index += 1
            pending_space = True
            continue
        char = text[index]
        if char.isspace():
            pending_space = True
        else:
            if pending_space and chars and not _closes(text, index):
                chars.append(" ")
                positions.append(index - 1)
            pending_space = False
            chars.append(char.translate(_QUOTE_FOLD))
            positions.append(index)
        index += 1
    return "".join(chars), positions


def _lower_same_length(text: str) -> str:
    # Lowercasing must not change the length, or folded offsets would stop mapping back.
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def _location_from_folded(
    answer: str,
    markers: list[Marker],
    folded: str,
    positions: list[int],
    folded_start: int,
    folded_end: int,
    score: float,
) -> Location | None:
    # A fuzzy alignment may begin or end on a folded space, which can sit on a marker.
    while folded_start < folded_end and folded[folded_start] == " ":
        folded_start += 1
    while folded_end > folded_start and folded[folded_end - 1] == " ":
        folded_end -= 1
    if folded_start == folded_end:
        return None
    start = positions[folded_start]
    end = positions[folded_end - 1] + 1
    start, end = _widen_to_words(answer, start, end)
    end = _after_trailing_markers(answer, end, markers)
    return Location(start=start, end=end, score=score, exact=False)


def _widen_to_words(answer: str, start: int, end: int) -> tuple[int, int]:
    # A fuzzy alignment can begin or end mid-word; a highlight should not.
    while start > 0 and answer[start - 1].isalnum() and answer[start].isalnum():
        start -= 1
    while end < len(answer) and answer[end - 1].isalnum() and answer[end].isalnum():
        end += 1
    return start, end


def _after_trailing_markers(answer: str, end: int, markers: list[Marker]) -> int:
    starts = {marker.start: marker.end for marker in markers}
    while True:
        gap_end = end
        while gap_end < len(answer) and answer[gap_end] in " \t\u00a0":
            gap_end += 1
        if gap_end not in starts:
            return end
        end = starts[gap_end]


@dataclass
class PlannedClaim:
    """One claim of an answer as it will be stored: text, offsets, where it was found and
    which passages it cites (numbers past the last passage kept apart)."""

    order: int
    text: str
    start: int
    end: int
    location: str
    citations: tuple[int, ...]
    cited_unknown: tuple[int, ...]
    uncited: bool


def plan_claims(record: AnswerRecord) -> list[PlannedClaim]:
    """Turn an answer into claims: given claims are located in the answer, else it is split."""
    n_passages = len(record.passages)
    planned: list[PlannedClaim] = []
    if record.claims is None:
        for order, parsed in enumerate(split_claims(record.answer)):
            planned.append(
                _plan(
                    order,
                    parsed.text,
                    parsed.start,
                    parsed.end,
                    LOCATION_SPLIT,
                    parsed.citations,
                    n_passages,
                )
            )
        return planned

    hint = 0
    for order, given in enumerate(record.claims):
        markers = find_markers(given)
        numbers = tuple(dict.fromkeys(n for m in markers for n in m.numbers))
        text = _strip(given, markers)
        found = locate_claim(given, record.answer, start_hint=hint)
        if found is None:
            start = end = min(hint, len(record.answer))
            location = LOCATION_NOT_LOCATED
        else:
            start, end = found.start, found.end
            location = LOCATION_EXACT if found.exact else LOCATION_FUZZY
            hint = end
        planned.append(
            _plan(order, text or given.strip(), start, end, location, numbers, n_passages)
        )
    return planned


def _plan(
    order: int,
    text: str,
    start: int,
    end: int,
    location: str,
    numbers: Sequence[int],
    n_passages: int,
) -> PlannedClaim:
    return PlannedClaim(
        order=order,
        text=text,
        start=start,
        end=end,
        location=location,
        citations=tuple(n for n in numbers if 1 <= n <= n_passages),
        cited_unknown=tuple(n for n in numbers if not 1 <= n <= n_passages),
        uncited=not numbers,
    )
