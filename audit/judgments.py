"""The support judgments a reviewer (or an imported rater) can give a claim.

Plain Python so the pure core (formats, agreement, metrics) shares the codes with the models.
"""

from __future__ import annotations

from collections.abc import Sequence

SUPPORTED = "supported"
PARTIAL = "partially_supported"
NOT_SUPPORTED = "not_supported"
CONTRADICTED = "contradicted"
WRONG_CITATION = "wrong_citation"
INACCESSIBLE = "source_inaccessible"
UNCLEAR = "unclear"

# Order matters: it is the 1-7 keyboard order on the review page.
JUDGMENTS: tuple[tuple[str, str], ...] = (
    (SUPPORTED, "Supported"),
    (PARTIAL, "Partially supported"),
    (NOT_SUPPORTED, "Not supported"),
    (CONTRADICTED, "Contradicted"),
    (WRONG_CITATION, "Wrong citation"),
    (INACCESSIBLE, "Source inaccessible"),
    (UNCLEAR, "Unclear"),
)
JUDGMENT_CODES: frozenset[str] = frozenset(code for code, _ in JUDGMENTS)
JUDGMENT_LABELS: dict[str, str] = dict(JUDGMENTS)


def derived_verdict(atomic: Sequence[str | None]) -> str | None:
    """The verdict of a claim split into atomic claims, from its atomic claims' verdicts.

    Supported only if every atomic claim is; partially supported if at least one is
    (partially) supported; otherwise the shared verdict, or not supported when they differ.
    None while any atomic claim has no verdict yet.
    """
    if not atomic or any(not v for v in atomic):
        return None
    if all(v == SUPPORTED for v in atomic):
        return SUPPORTED
    if any(v in (SUPPORTED, PARTIAL) for v in atomic):
        return PARTIAL
    if len(set(atomic)) == 1:
        return atomic[0]
    if CONTRADICTED in atomic:
        return CONTRADICTED
    return NOT_SUPPORTED
