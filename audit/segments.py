"""Cut a text into escaped-at-render segments from character offsets, for highlighting.

Highlights are never built by inserting markup into raw text: the template escapes each piece.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Segment:
    text: str
    start: int
    end: int
    tags: frozenset[Hashable]

    def has(self, tag: Hashable) -> bool:
        return tag in self.tags


def segment(text: str, spans: Iterable[tuple[int, int, Hashable]]) -> list[Segment]:
    """Split text at every span boundary; each piece carries the tags of the spans covering it.

    Spans may overlap or nest; out-of-range offsets are clipped, empty spans ignored. The
    pieces always join back to `text`.
    """
    size = len(text)
    clipped = []
    for start, end, tag in spans:
        start, end = max(0, min(start, size)), max(0, min(end, size))
        if end > start:
            clipped.append((start, end, tag))
    cuts = sorted({0, size, *(s for s, _, _ in clipped), *(e for _, e, _ in clipped)})
    pieces = []
    for left, right in zip(cuts, cuts[1:], strict=False):
        tags = frozenset(tag for s, e, tag in clipped if s <= left and right <= e)
        pieces.append(Segment(text[left:right], left, right, tags))
    return pieces
