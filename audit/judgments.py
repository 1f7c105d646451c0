"""The shape of a judgment, defined once: its vocabularies, its evidence references and their
key format, the matcher's hints, its limits, the checks it must pass, and its error type.

Plain Python so the pure core (formats, agreement, metrics) shares them with the models, the
forms, the services and the pages; a sheet and a gold record are both judgments.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


# Judgments that say the passages support the claim, so they must name the sentences.
EVIDENCE_REQUIRED = frozenset({SUPPORTED, PARTIAL})

# Why a claim whose sheets are all in waits for a lead; lower comes first in the queue:
# (name, value, label). The first four are audit.agreement's disagreement kinds; CONFIRM is
# a claim the reviewers agree on without being identical (or any claim, when the set makes
# no gold by itself).
SEVERITIES: tuple[tuple[str, int, str], ...] = (
    ("CONTRADICTED_VS_SUPPORTED", 0, "Contradicted vs supported"),
    ("JUDGMENT", 1, "Judgments differ"),
    ("WRONG_PASSAGE", 2, "Wrong-citation passage differs"),
    ("EVIDENCE", 3, "Evidence differs"),
    ("CONFIRM", 4, "Agree: confirm"),
)

# Why a lead's gold differs from a reviewer's sheet; "" when the reviewers agreed.
REASONS: tuple[tuple[str, str], ...] = (
    ("", "—"),
    ("reviewer_error", "Reviewer error"),
    ("guideline_gap", "Guideline gap"),
    ("ambiguous_source", "Ambiguous source"),
    ("both_partly_right", "Both partly right"),
    ("other", "Other"),
)
REASON_CODES: frozenset[str] = frozenset(code for code, _ in REASONS)

# A reviewer's sheet: saved as a draft until submitted.
SHEET_STATUSES: tuple[tuple[str, str], ...] = (("draft", "Draft"), ("submitted", "Submitted"))

# Who gave an imported label.
RATER_KINDS: tuple[tuple[str, str], ...] = (
    ("human", "Imported human labels"),
    ("automatic", "Automatic judge"),
)

# Where a gold record came from.
GOLD_SOURCES: tuple[tuple[str, str], ...] = (
    ("unanimous", "Unanimous"),
    ("sheet", "Taken from a sheet"),
    ("edited", "Edited by the lead"),
)

# A sheet holds at most this much; more is a runaway client, not a judgment.
MAX_ASSERTIONS = 50
MAX_EVIDENCE = 200


@dataclass(frozen=True)
class Flag:
    """A yes/no field of a judgment: a checkbox on both pages, copied as the user set it."""

    name: str
    label: str
    help: str  # the review page's explanation; the lead's page shows the label alone
    default: bool


FLAGS: tuple[Flag, ...] = (
    Flag("verification_worthy", "Worth verifying", "a reader would want it checked", True),
    Flag(
        "answers_question",
        "Answers the question",
        "it states what the question asks; a release fails when such a claim is not supported",
        False,
    ),
)
FLAG_NAMES: tuple[str, ...] = tuple(flag.name for flag in FLAGS)

# The judgment's own fields, in the order exports and the restore format write them. A sheet
# adds its notes; a gold record its source, its lead's note, reason and number override.
FIELDS: tuple[str, ...] = (
    "judgment",
    "wrong_citation_passage",
    "evidence",
    "unsupported_assertions",
    *FLAG_NAMES,
)


def flag_inputs(checked: dict[str, bool], *, with_help: bool = True) -> list[dict]:
    """The flags as a page shows them: name, label, help and whether each is ticked."""
    return [
        {
            "name": flag.name,
            "label": flag.label,
            "help": flag.help if with_help else "",
            "checked": checked.get(flag.name, flag.default),
        }
        for flag in FLAGS
    ]


class JudgmentError(Exception):
    """A judgment that cannot be saved; the message is meant for the user."""


@dataclass(frozen=True)
class EvidenceRef:
    """A span of one of the answer's passages, as the client names it.

    `text` is what the client believes the span says; it is checked, never stored.
    """

    passage: int
    start: int
    end: int
    text: str | None = None

    @property
    def key(self) -> str:
        return evidence_key(self.passage, self.start, self.end)


def evidence_key(passage: int, start: int, end: int) -> str:
    """The name a page gives an evidence sentence: "passage:start:end"."""
    return f"{passage}:{start}:{end}"


def stored_key(item: dict) -> str:
    """The key of a stored evidence item ({"passage", "start", "end", "text"})."""
    return evidence_key(item["passage"], item["start"], item["end"])


def stored_spans(evidence: Iterable[dict]) -> frozenset[tuple[int, int, int]]:
    """Stored evidence as comparable (passage, start, end) spans."""
    return frozenset((e["passage"], e["start"], e["end"]) for e in evidence)


def parse_evidence_key(value: object) -> EvidenceRef:
    """The span a "passage:start:end" key names; ValueError when it names none."""
    parts = str(value).split(":")
    if len(parts) != 3:
        raise ValueError(f"Not an evidence span: {value!r}.")
    try:
        passage, start, end = (int(part) for part in parts)
    except ValueError:
        raise ValueError(f"Not an evidence span: {value!r}.") from None
    return EvidenceRef(passage=passage, start=start, end=end)


def evidence_spans(values: Iterable[object]) -> set[tuple[int, int, int]]:
    """The (passage, start, end) spans of the keys that name one; others are dropped."""
    spans = set()
    for value in values:
        try:
            ref = parse_evidence_key(value)
        except ValueError:
            continue
        spans.add((ref.passage, ref.start, ref.end))
    return spans


@dataclass(frozen=True)
class JudgmentData:
    """Everything a reviewer (on a sheet) or a lead (on a merged gold record) can edit."""

    judgment: str = ""
    evidence: tuple[EvidenceRef, ...] = ()
    wrong_citation_passage: int | None = None  # a passage position in the claim's answer
    verification_worthy: bool = True
    answers_question: bool = False
    unsupported_assertions: tuple[str, ...] = ()
    notes: str = ""  # a sheet's own notes; a gold record keeps its lead's note apart


def checked_judgment(judgment: str) -> str:
    if judgment and judgment not in JUDGMENT_CODES:
        raise JudgmentError(f"Unknown judgment “{judgment}”.")
    return judgment


def checked_assertions(assertions: Iterable[str]) -> list[str]:
    """Assertions as stored: trimmed, blank lines dropped, each once, in order."""
    kept = [a.strip() for a in assertions if a.strip()]
    if len(kept) > MAX_ASSERTIONS:
        raise JudgmentError(f"At most {MAX_ASSERTIONS} unsupported assertions.")
    return list(dict.fromkeys(kept))


def checked_evidence(items: Sequence[EvidenceRef], passages: dict[int, str]) -> list[dict]:
    """Evidence as stored: spans of the answer's passages (position → text), text cut here."""
    if len(items) > MAX_EVIDENCE:
        raise JudgmentError(f"At most {MAX_EVIDENCE} evidence sentences.")
    stored: dict[tuple[int, int, int], dict] = {}
    for item in items:
        text = passages.get(item.passage)
        if text is None:
            raise JudgmentError(f"The answer has no passage [{item.passage}].")
        if not 0 <= item.start < item.end <= len(text):
            raise JudgmentError(
                f"Evidence offsets {item.start}–{item.end} are outside [{item.passage}]."
            )
        span = text[item.start : item.end]
        if item.text is not None and item.text != span:
            raise JudgmentError(f"Evidence text does not match passage [{item.passage}].")
        key = (item.passage, item.start, item.end)
        stored[key] = {"passage": item.passage, "start": item.start, "end": item.end, "text": span}
    return [stored[key] for key in sorted(stored)]


def judgment_problems(
    *,
    judgment: str,
    evidence: Sequence[dict],
    wrong_citation_passage: int | None,
    cited: Iterable[int],
) -> list[str]:
    """What a judgment still lacks to be final, on a sheet or on a gold record.

    `wrong_citation_passage` and `cited` are passage positions in the claim's answer.
    """
    if not judgment:
        return ["Choose a judgment."]
    if judgment in EVIDENCE_REQUIRED and not evidence:
        return [f"“{JUDGMENT_LABELS[judgment]}” needs at least one evidence sentence."]
    if judgment == WRONG_CITATION:
        if wrong_citation_passage is None:
            return ["“Wrong citation” needs the passage that does support the claim."]
        if wrong_citation_passage in set(cited):
            return [
                f"Passage [{wrong_citation_passage}] is already cited; choose an uncited "
                "passage for “Wrong citation”."
            ]
    return []


# The matcher's best sentence is marked as a hint, and runners-up only when nearly as good:
# a page full of marks would read as an answer key.
MACHINE_HINTS = 3
NEAR_BEST = 0.75


def machine_hints(highlights: list[dict]) -> list[dict]:
    """The stored highlights the review page marks for reviewers, best first."""
    top = highlights[:MACHINE_HINTS]
    return [h for h in top if h["score"] > 0 and h["score"] >= NEAR_BEST * top[0]["score"]]


def hint_keys(highlights: list[dict]) -> frozenset[tuple[int, int, int]]:
    return frozenset((h["passage"], h["start"], h["end"]) for h in machine_hints(highlights))


def assertion_texts(stored: Iterable[object]) -> tuple[str, ...]:
    """The texts of stored unsupported assertions, whether stored as plain strings or as
    items with a "text" (a span of the claim, or free text)."""
    texts = []
    for item in stored or ():
        text = item.get("text") if isinstance(item, dict) else item
        if isinstance(text, str) and text.strip():
            texts.append(text.strip())
    return tuple(texts)
