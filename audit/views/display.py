"""Turn stored answers, claims and checks into display structures for the templates.

Everything here returns plain text pieces with flags; templates escape them.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace

import markdown
import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from audit import claims as claim_parsing
from audit import judgments, matching
from audit.models import Answer, Claim, ClaimCheck, Passage
from audit.segments import segment


@dataclass
class AnswerPiece:
    text: str
    claim_id: int | None = None
    claim_order: int | None = None
    uncited: bool = False
    has_unknown: bool = False
    marker_numbers: tuple[int, ...] = ()
    current: bool = False


@dataclass
class MarkerLink:
    number: int
    known: bool


@dataclass
class PassageView:
    passage: Passage
    sentences: list[SentenceView] = field(default_factory=list)
    highlighted: bool = False
    tail: list[Piece] = field(default_factory=list)


@dataclass(frozen=True)
class Piece:
    """A run of text that one set of marks covers, with its offset in the whole text, so
    the page can map a selection back to offsets (`data-o`)."""

    text: str
    start: int
    tags: frozenset = frozenset()

    def has(self, tag: str) -> bool:
        return tag in self.tags

    @property
    def classes(self) -> str:
        """The tags as CSS classes, each after a space; tags are the pages' own names."""
        return "".join(f" {tag}" for tag in sorted(self.tags))


def text_pieces(
    text: str, start: int, end: int, spans: list[tuple[int, int, str]] = ()
) -> list[Piece]:
    """text[start:end] cut at every boundary of the tagged (start, end, tag) spans."""
    shifted = [(s - start, e - start, tag) for s, e, tag in spans if s < end and start < e]
    pieces = []
    for seg in segment(text[start:end], shifted):
        # A browser reads "\r\n" as one character: a piece ends after each line break so
        # that offsets inside the next piece stay exact.
        at = seg.start + start
        for line in seg.text.splitlines(keepends=True):
            pieces.append(Piece(line, at, seg.tags))
            at += len(line)
    return pieces


@dataclass
class SentenceView:
    start: int
    end: int
    text: str
    gap: str  # the whitespace between the previous sentence and this one
    highlight_for: list[int] = field(default_factory=list)  # claim orders whose top sentence it is
    rank: int | None = None
    pieces: list[Piece] = field(default_factory=list)  # the sentence, cut at marked spans
    gap_pieces: list[Piece] = field(default_factory=list)


def answer_pieces(
    answer: Answer, claims: list[Claim], current: int | None = None
) -> list[AnswerPiece]:
    """The answer text cut at claim and citation-marker boundaries."""
    spans: list[tuple[int, int, object]] = []
    by_id = {}
    for claim in claims:
        if claim.location == Claim.Location.NOT_LOCATED or claim.parent_id:
            continue
        spans.append((claim.start, claim.end, ("claim", claim.pk)))
        by_id[claim.pk] = claim
    for marker in claim_parsing.find_markers(answer.text):
        spans.append((marker.start, marker.end, ("marker", marker.numbers)))
    pieces = []
    for seg in segment(answer.text, spans):
        piece = AnswerPiece(text=seg.text)
        for tag in seg.tags:
            kind, value = tag
            if kind == "claim":
                claim = by_id[value]
                piece.claim_id = claim.pk
                piece.claim_order = claim.order
                piece.uncited = claim.is_uncited
                piece.has_unknown = bool(claim.cited_unknown)
                piece.current = claim.pk == current
            else:
                piece.marker_numbers = value
        pieces.append(piece)
    return pieces


def paragraph_pieces(pieces: list[AnswerPiece]) -> tuple[list[AnswerPiece], bool]:
    """The pieces of the paragraph that holds the current claim (cut at line breaks), and
    whether the answer has more than that paragraph: the review page shows the claim in its
    paragraph, and the whole answer on demand."""
    at = next((i for i, p in enumerate(pieces) if p.current), None)
    if at is None:
        return pieces, False
    last = max(i for i, p in enumerate(pieces) if p.current)
    start, end = 0, len(pieces)
    head, tail = None, None
    for i in range(at - 1, -1, -1):
        if "\n" in pieces[i].text:
            start, head = i + 1, replace(pieces[i], text=pieces[i].text.rsplit("\n", 1)[1])
            break
    for i in range(last + 1, len(pieces)):
        if "\n" in pieces[i].text:
            end, tail = i, replace(pieces[i], text=pieces[i].text.split("\n", 1)[0])
            break
    found = [*([head] if head and head.text else []), *pieces[start:end]]
    found += [tail] if tail and tail.text else []
    more = head is not None or tail is not None
    return found, more


def marker_links(numbers: tuple[int, ...], n_passages: int) -> list[MarkerLink]:
    return [MarkerLink(n, 1 <= n <= n_passages) for n in numbers]


def passage_views(
    passages: list[Passage],
    highlights: dict[int, list[tuple[int, int, int]]],
    spans: dict[int, list[tuple[int, int, str]]] | None = None,
) -> list[PassageView]:
    """Passages split into sentences, with the matcher's top sentences marked.

    `highlights` maps a passage position to (start, end, claim order) triples; `spans` maps
    it to tagged (start, end, tag) spans that cut each sentence and gap into pieces.
    """
    views = []
    for passage in passages:
        marks = highlights.get(passage.position, [])
        tagged = (spans or {}).get(passage.position, [])
        view = PassageView(passage=passage, highlighted=bool(marks))
        previous_end = 0
        text = passage.text
        for start, end in matching.sentence_spans(text):
            orders = sorted({o for s, e, o in marks if s < end and start < e})
            view.sentences.append(
                SentenceView(
                    start=start,
                    end=end,
                    text=text[start:end],
                    gap=text[previous_end:start],
                    highlight_for=orders,
                    pieces=text_pieces(text, start, end, tagged),
                    gap_pieces=text_pieces(text, previous_end, start, tagged),
                )
            )
            previous_end = end
        if view.sentences and previous_end < len(text):
            # Text after the last sentence (trailing space) still counts for offsets.
            view.tail = text_pieces(text, previous_end, len(text), tagged)
        views.append(view)
    return views


@dataclass(frozen=True)
class MatchScore:
    """The matcher's one score as pages show it: the share of the claim's content words
    found in one cited sentence together with its better neighbour (ClaimCheck.best_score,
    the number the label thresholds apply to), and why the label is what it is.

    The per-sentence ranking scores that order the highlighted sentences are on another
    scale (BM25) and are never shown: two numbers called "score" side by side read as one.
    """

    percent: int
    label: str
    why: str


# The matcher's labels as pages name them. "Verified" is kept for what a person decided
# or an exact quote check; the stored value stays "verified" for exports that read it.
HINT_LABELS = {
    ClaimCheck.Label.VERIFIED: "All words found",
    ClaimCheck.Label.LIKELY: "Most words found",
    ClaimCheck.Label.UNKNOWN: "Weak or no match",
}


def hint_label(label: str) -> str:
    return HINT_LABELS.get(label, label)


def match_score(check: ClaimCheck | None, claim: Claim) -> MatchScore | None:
    if check is None:
        return None
    all_found = round(matching.VERIFIED_MIN_SCORE * 100)
    likely = round(matching.LIKELY_MIN_SCORE * 100)
    # Floored, so 74.9% never reads as the 75% threshold; rounded first against float noise.
    percent = math.floor(round(check.best_score * 100, 6))
    if check.label == ClaimCheck.Label.VERIFIED:
        why = "every word of the claim in one cited sentence, every number found"
    elif check.label == ClaimCheck.Label.LIKELY and check.best_score >= matching.VERIFIED_MIN_SCORE:
        why = "words of the claim differ from the best sentence"
    elif check.label == ClaimCheck.Label.LIKELY:
        why = f"most words from {likely}%, all found from {all_found}% with none differing"
    elif claim.is_uncited:
        why = "the claim cites no passage"
    elif claim.cited_unknown:
        why = "it cites a passage that was never supplied"
    elif check.ungrounded:
        why = "a number is not in the cited passages"
    else:
        why = f"most words from {likely}%"
    return MatchScore(percent=percent, label=hint_label(check.label), why=why)


@dataclass(frozen=True)
class WordDifference:
    """A word of the claim beside the evidence's word in its place, as the review and
    adjudication pages list them (audit.scope_words)."""

    kind: str  # "negation", "modal", "quantifier", "unit" or "word"
    claim: str
    evidence: str


def word_differences(
    claim: Claim, check: ClaimCheck | None, passages: list[Passage]
) -> list[WordDifference]:
    """The words in which the claim differs from its best-supported cited sentence, beside
    the source's: what keeps a close match from being one. Only for a claim most of whose
    words were found (a weak match would list half the claim) that cites a passage."""
    if check is None or check.best_score < matching.LIKELY_MIN_SCORE or not passages:
        return []
    return [
        WordDifference(kind=d.kind, claim=d.claim, evidence=d.evidence)
        for d in matching.claim_differences(claim.text, [p.text for p in passages])
    ]


@dataclass(frozen=True)
class Badge:
    """A reviewer's mark on the adjudication page: their letter in the set, which stays
    theirs from claim to claim, and the colour of their place on this page ("a", "b" or
    "other")."""

    letter: str
    style: str


def sheet_who(letter: str, sheet, anonymous: bool) -> str:
    """A sheet's author as lists name it: their letter, with their name unless the set's
    adjudication is anonymous."""
    return letter if anonymous else f"{letter} · {sheet.reviewer.username}"


@dataclass
class MarkedSentence:
    """A passage sentence on the adjudication page: who chose it, and whether gold has it."""

    key: str  # "passage:start:end", as the evidence checkboxes post it
    text: str
    gap: str
    chosen_by: list[Badge]  # the sheets whose evidence is the whole sentence
    hint: bool
    selected: bool
    # The sentence and the gap before it cut where any sheet's evidence starts or ends;
    # tags "ev-a", "ev-b", … say whose evidence covers a piece.
    pieces: list[Piece] = field(default_factory=list)
    gap_pieces: list[Piece] = field(default_factory=list)


@dataclass
class MarkedPassage:
    passage: Passage
    sentences: list[MarkedSentence]
    cited: bool
    chosen: bool  # a reviewer chose evidence here, or named it as the right citation
    tail: list[Piece] = field(default_factory=list)


def marked_passages(
    passages: list[Passage],
    *,
    cited: set[int],
    chosen: dict[str, set[tuple[int, int, int]]],
    hints: frozenset[tuple[int, int, int]],
    selected: set[tuple[int, int, int]],
    named: set[int] = frozenset(),
    styles: dict[str, str] | None = None,
) -> list[MarkedPassage]:
    """Passages split into sentences marked with each sheet's evidence (by letter, down to
    the character: pieces tagged "ev-a", "ev-b", … by the sheet's style in `styles`, its
    letter lower-cased by default), the matcher's hints and the gold selection. `named`
    are positions a sheet named as the right citation."""
    styles = styles or {letter: letter.lower() for letter in chosen}
    tagged: dict[int, list[tuple[int, int, str]]] = {}
    for letter, spans in chosen.items():
        for position, start, end in spans:
            tagged.setdefault(position, []).append((start, end, f"ev-{styles[letter]}"))
    views = []
    for view in passage_views(passages, {}, tagged):
        position = view.passage.position
        sentences = []
        for s in view.sentences:
            key = (position, s.start, s.end)
            sentences.append(
                MarkedSentence(
                    key=judgments.evidence_key(position, s.start, s.end),
                    text=s.text,
                    gap=s.gap,
                    chosen_by=[
                        Badge(letter, styles[letter])
                        for letter, keys in chosen.items()
                        if key in keys
                    ],
                    hint=key in hints,
                    selected=key in selected,
                    pieces=s.pieces,
                    gap_pieces=s.gap_pieces,
                )
            )
        views.append(
            MarkedPassage(
                passage=view.passage,
                sentences=sentences,
                cited=position in cited,
                chosen=position in named or bool(tagged.get(position)),
                tail=view.tail,
            )
        )
    return views


def sentence_keys(passages: list[Passage]) -> set[tuple[int, int, int]]:
    """Every (position, start, end) sentence of the passages, as the pages cut them."""
    return {
        (p.position, start, end) for p in passages for start, end in matching.sentence_spans(p.text)
    }


def evidence_parts(
    passages: list[Passage], spans: set[tuple[int, int, int]]
) -> tuple[dict[int, list[tuple[int, int]]], list[tuple[int, int, int]]]:
    """Evidence spans that are not whole sentences, by passage position and sorted (shown
    as marks in the passage and listed under it), and those that fit no passage at all."""
    texts = {p.position: p.text for p in passages}
    sentences = sentence_keys(passages)
    parts: dict[int, list[tuple[int, int]]] = {}
    lost = []
    for position, start, end in sorted(spans - sentences):
        text = texts.get(position)
        if text is None or not 0 <= start < end <= len(text):
            lost.append((position, start, end))
        else:
            parts.setdefault(position, []).append((start, end))
    return parts, lost


def posted_assertions(values: list[str]) -> list[dict]:
    """Unsupported spans as a page posted them (JSON items), for showing them again after a
    refused save; anything malformed is left out (the form has said why)."""
    items = []
    for raw in values:
        try:
            item = json.loads(raw)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("start"), int):
            items.append(judgments.assertion_item(item))
    return items


def assertion_views(statement: str, items: list[dict]) -> list[dict]:
    """Span items of a statement as the pages list them, with the JSON a page posts back."""
    views = []
    for item in items:
        start, end = item["start"], item["end"]
        if not (
            isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(statement)
        ):
            continue
        views.append(
            {
                "start": start,
                "end": end,
                "text": statement[start:end],
                "note": item["note"],
                "json": json.dumps({"start": start, "end": end, "note": item["note"]}),
            }
        )
    return views


def excerpt(text: str, start: int, end: int, limit: int = 300) -> str:
    piece = text[start:end]
    return piece if len(piece) <= limit else piece[: limit - 1] + "…"


# Guidelines are Markdown written by a lead; the rendered HTML is still sanitised, because a
# set's guidelines may come from anyone who can create a set.
GUIDELINE_TAGS = {
    "a", "p", "ul", "ol", "li", "em", "strong", "code", "pre", "blockquote",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "br", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


def guidelines_html(text: str) -> SafeString:
    """A set's Markdown guidelines as sanitised HTML, the only HTML the templates trust."""
    html = markdown.markdown(text, extensions=["tables"], output_format="html")
    return mark_safe(nh3.clean(html, tags=GUIDELINE_TAGS, link_rel="noopener noreferrer"))


# An @mention: not inside a word or an e-mail address.
MENTION = re.compile(r"(?<![\w@/.])@([\w+-]+(?:\.[\w+-]+)*)")
TAG = re.compile(r"(<[^>]*>)")


def comment_html(text: str, mentionable: frozenset[str]) -> SafeString:
    """A comment's Markdown, sanitised as guidelines are, with @mentions of known users
    marked. Mentions are marked in text only, never inside a tag or its attributes; the
    names inserted are usernames, which hold no markup characters."""
    html = str(guidelines_html(text))
    parts = TAG.split(html)
    for i in range(0, len(parts), 2):
        parts[i] = MENTION.sub(
            lambda m: (
                f'<strong class="mention">@{escape(m[1])}</strong>' if m[1] in mentionable else m[0]
            ),
            parts[i],
        )
    return mark_safe("".join(parts))
