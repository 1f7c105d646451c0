"""The support judgments a reviewer (or an imported rater) can give a claim.

Plain Python so the pure core (formats, agreement, metrics) shares the codes with the models.
"""

from __future__ import annotations

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
