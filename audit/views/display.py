"""Turn stored answers, claims and checks into display structures for the templates.

Everything here returns plain text pieces with flags; templates escape them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import markdown
import nh3
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


@dataclass
class SentenceView:
    start: int
    end: int
    text: str
    gap: str  # the whitespace between the previous sentence and this one
    highlight_for: list[int] = field(default_factory=list)  # claim orders whose top sentence it is
    rank: int | None = None


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


def marker_links(numbers: tuple[int, ...], n_passages: int) -> list[MarkerLink]:
    return [MarkerLink(n, 1 <= n <= n_passages) for n in numbers]


def passage_views(
    passages: list[Passage], highlights: dict[int, list[tuple[int, int, int]]]
) -> list[PassageView]:
    """Passages split into sentences, with the matcher's top sentences marked.

    `highlights` maps a passage position to (start, end, claim order) triples.
    """
    views = []
    for passage in passages:
        marks = highlights.get(passage.position, [])
        view = PassageView(passage=passage, highlighted=bool(marks))
        previous_end = 0
        for start, end in matching.sentence_spans(passage.text):
            orders = sorted({o for s, e, o in marks if s < end and start < e})
            view.sentences.append(
                SentenceView(
                    start=start,
                    end=end,
                    text=passage.text[start:end],
                    gap=passage.text[previous_end:start],
                    highlight_for=orders,
                )
            )
            previous_end = end
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


def match_score(check: ClaimCheck | None, claim: Claim) -> MatchScore | None:
    if check is None:
        return None
    verified = round(matching.VERIFIED_MIN_SCORE * 100)
    likely = round(matching.LIKELY_MIN_SCORE * 100)
    # Floored, so 74.9% never reads as the 75% threshold; rounded first against float noise.
    percent = math.floor(round(check.best_score * 100, 6))
    if check.label == ClaimCheck.Label.VERIFIED:
        why = f"verified from {verified}% with every number found"
    elif check.label == ClaimCheck.Label.LIKELY:
        why = f"likely from {likely}%, verified from {verified}%"
    elif claim.is_uncited:
        why = "the claim cites no passage"
    elif claim.cited_unknown:
        why = "it cites a passage that was never supplied"
    elif check.ungrounded:
        why = "a number is not in the cited passages"
    else:
        why = f"likely from {likely}%"
    return MatchScore(percent=percent, label=check.get_label_display(), why=why)


@dataclass
class MarkedSentence:
    """A passage sentence on the adjudication page: who chose it, and whether gold has it."""

    key: str  # "passage:start:end", as the evidence checkboxes post it
    text: str
    gap: str
    chosen_by: list[str]  # sheet letters, "A", "B", …
    hint: bool
    selected: bool


@dataclass
class MarkedPassage:
    passage: Passage
    sentences: list[MarkedSentence]
    cited: bool
    chosen: bool  # a reviewer chose evidence here, or named it as the right citation


def marked_passages(
    passages: list[Passage],
    *,
    cited: set[int],
    chosen: dict[str, set[tuple[int, int, int]]],
    hints: frozenset[tuple[int, int, int]],
    selected: set[tuple[int, int, int]],
    named: set[int] = frozenset(),
) -> list[MarkedPassage]:
    """Passages split into sentences marked with each sheet's evidence (by letter), the
    matcher's hints and the gold selection. `named` are positions a sheet named as the
    right citation."""
    views = []
    for view in passage_views(passages, {}):
        position = view.passage.position
        sentences = []
        for s in view.sentences:
            key = (position, s.start, s.end)
            sentences.append(
                MarkedSentence(
                    key=judgments.evidence_key(position, s.start, s.end),
                    text=s.text,
                    gap=s.gap,
                    chosen_by=[letter for letter, keys in chosen.items() if key in keys],
                    hint=key in hints,
                    selected=key in selected,
                )
            )
        views.append(
            MarkedPassage(
                passage=view.passage,
                sentences=sentences,
                cited=position in cited,
                chosen=position in named or any(s.chosen_by for s in sentences),
            )
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
