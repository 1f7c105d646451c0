"""The shape of a judgment, defined once: its vocabularies, its evidence references and their
key format, the matcher's hints, its limits, the checks it must pass, and its error type.

Plain Python so the pure core (formats, agreement, metrics) shares them with the models, the
forms, the services and the pages; a sheet and a gold record are both judgments.
"""

from __future__ import annotations

import re
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

# One line per judgment, shown next to its radio button; a set's guidelines override any of
# them with a list item "- *Label*: definition" (see judgment_definitions).
DEFINITIONS: dict[str, str] = {
    SUPPORTED: "Every part of the claim is stated in the cited passages.",
    PARTIAL: "Some part is stated, some is missing; list what is missing.",
    NOT_SUPPORTED: "The cited passages do not state it, and say nothing against it.",
    CONTRADICTED: "A cited passage says otherwise (a different figure counts).",
    WRONG_CITATION: "Not supported by its citations, but another retrieved passage supports it.",
    INACCESSIBLE: "The cited passage is missing, empty or unreadable.",
    UNCLEAR: "The claim is too vague to check against any passage.",
}

_DEFINITION_LINE = re.compile(
    r"^\s*[-*+]\s+(?:\*\*|\*|__|_)?(?P<label>[^*_:—–]+?)(?:\*\*|\*|__|_)?\s*[:—–]\s*(?P<text>\S.*)$"
)
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)")


def sheet_letter(index: int) -> str:
    """The letter of the index-th reviewer: A, B, …, Z, then #27, #28, …"""
    return chr(ord("A") + index) if index < 26 else f"#{index + 1}"


def judgment_definitions(guidelines: str) -> dict[str, str]:
    """Each judgment's one-line definition: the guidelines' list item that starts with the
    judgment's label ("- *Supported*: every part ..."), else the default. Plain text: the
    Markdown emphasis is dropped, and the page escapes it like any other text."""
    by_label = {label.casefold(): code for code, label in JUDGMENTS}
    found = dict(DEFINITIONS)
    for line in guidelines.splitlines():
        match = _DEFINITION_LINE.match(line)
        if match is None:
            continue
        code = by_label.get(match["label"].strip().casefold())
        if code is not None:
            found[code] = _EMPHASIS.sub("", match["text"]).strip()
    return found


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
# (name, value, label). All but the last are audit.agreement's disagreement kinds; CONFIRM is
# a claim the reviewers agree on without being identical (or any claim, when the set makes
# no gold by itself).
SEVERITIES: tuple[tuple[str, int, str], ...] = (
    ("CONTRADICTED_VS_SUPPORTED", 0, "Contradicted vs supported"),
    ("JUDGMENT", 1, "Judgments differ"),
    ("WRONG_PASSAGE", 2, "Wrong-citation passage differs"),
    ("EVIDENCE", 3, "Evidence differs"),
    ("ASSERTIONS", 4, "Unsupported spans differ"),
    ("CONFIRM", 5, "Agree: confirm"),
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
MAX_NOTE = 2000


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
    # Assertion items; a plain string is a free-text assertion (see `checked_assertions`).
    unsupported_assertions: tuple[Assertion | str, ...] = ()
    notes: str = ""  # a sheet's own notes; a gold record keeps its lead's note apart


def checked_judgment(judgment: str) -> str:
    if judgment and judgment not in JUDGMENT_CODES:
        raise JudgmentError(f"Unknown judgment “{judgment}”.")
    return judgment


@dataclass(frozen=True)
class Assertion:
    """Words of the claim that no evidence supports, as a reviewer or lead names them.

    A span has offsets into the claim text as judged (a sheet's `answer_statement`, gold's
    claim text), and its text is that slice; a free-text assertion has no offsets. `text`
    on a span is what the client believes it says: checked, then cut by the server.
    """

    text: str | None = None
    start: int | None = None
    end: int | None = None
    note: str = ""

    @property
    def is_span(self) -> bool:
        return self.start is not None or self.end is not None


def assertion_item(value: object) -> dict:
    """One stored unsupported assertion as {"text", "start", "end", "note"}.

    Reads both shapes ever stored: a plain string (before spans, a free-text assertion) and
    an item; a missing key reads as empty.
    """
    if isinstance(value, str):
        return {"text": value, "start": None, "end": None, "note": ""}
    if isinstance(value, Assertion):
        return {
            "text": value.text or "",
            "start": value.start,
            "end": value.end,
            "note": value.note,
        }
    item = value if isinstance(value, dict) else {}
    return {
        "text": str(item.get("text") or ""),
        "start": item.get("start"),
        "end": item.get("end"),
        "note": str(item.get("note") or ""),
    }


def stored_assertions(values: Iterable[object]) -> list[dict]:
    """Stored unsupported assertions, old plain strings included, as items."""
    return [assertion_item(value) for value in values or ()]


def assertion_refs(values: Iterable[object]) -> tuple[Assertion, ...]:
    """Stored assertions as the Assertion values a form or a restore passes back in."""
    return tuple(
        Assertion(text=item["text"], start=item["start"], end=item["end"], note=item["note"])
        for item in stored_assertions(values)
    )


def assertion_key(item: dict) -> tuple:
    """What two assertions must share to be the same: a span's offsets, or a free text
    trimmed and casefolded. Notes never count."""
    if item["start"] is not None:
        return ("span", item["start"], item["end"])
    return ("free", " ".join(item["text"].split()).casefold())


def assertion_keys(values: Iterable[object]) -> frozenset[tuple]:
    return frozenset(assertion_key(item) for item in stored_assertions(values))


def _joined_notes(notes: Iterable[str]) -> str:
    return "; ".join(dict.fromkeys(n for n in notes if n))


def _merged_spans(spans: Iterable[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """(start, end, note) spans with those that overlap or touch made one, notes joined."""
    merged: list[tuple[int, int, list[str]]] = []
    for start, end, note in sorted(spans, key=lambda s: (s[0], s[1])):
        if merged and start <= merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), [*last[2], note])
        else:
            merged.append((start, end, [note]))
    return [(start, end, _joined_notes(notes)) for start, end, notes in merged]


def checked_assertions(items: Iterable[Assertion | str], statement: str) -> list[dict]:
    """Unsupported assertions as stored: spans of `statement` (checked like evidence, text
    cut here, trimmed to their words, merged where they overlap or touch, in order), then
    free-text assertions (trimmed, blank ones dropped, each once, in order)."""
    spans: list[tuple[int, int, str]] = []
    free: dict[str, str] = {}
    for value in items:
        item = Assertion(text=value) if isinstance(value, str) else value
        note = (item.note or "").strip()
        if len(note) > MAX_NOTE:
            raise JudgmentError(
                f"A note on an unsupported assertion holds at most {MAX_NOTE} characters."
            )
        if not item.is_span:
            text = (item.text or "").strip()
            if text:
                free.setdefault(text, note)
            continue
        start, end = item.start, item.end
        if not (
            isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(statement)
        ):
            raise JudgmentError(
                f"Unsupported-assertion offsets {start}–{end} are outside the claim."
            )
        if item.text is not None and item.text != statement[start:end]:
            raise JudgmentError("Unsupported-assertion text does not match the claim.")
        # A selection that took a space on either side still names the same words.
        while start < end and statement[start].isspace():
            start += 1
        while end > start and statement[end - 1].isspace():
            end -= 1
        if start < end:
            spans.append((start, end, note))
    kept = [
        {"text": statement[start:end], "start": start, "end": end, "note": note}
        for start, end, note in _merged_spans(spans)
    ] + [{"text": text, "start": None, "end": None, "note": note} for text, note in free.items()]
    if len(kept) > MAX_ASSERTIONS:
        raise JudgmentError(f"At most {MAX_ASSERTIONS} unsupported assertions.")
    return kept


def merged_assertions(lists: Iterable[Iterable[object]]) -> list[dict]:
    """Several judgments' assertions as one list, each assertion once (by `assertion_key`),
    in the first list's order, with every distinct note kept: what unanimous gold records
    when the sheets name the same assertions."""
    items: dict[tuple, dict] = {}
    for values in lists:
        for item in stored_assertions(values):
            key = assertion_key(item)
            if key in items:
                items[key]["note"] = _joined_notes([items[key]["note"], item["note"]])
            else:
                items[key] = dict(item)
    return list(items.values())


WORD = re.compile(r"\w+")


def evidence_tokens(evidence: Iterable[dict]) -> frozenset[tuple[int, int, int]]:
    """The word tokens stored evidence covers, as (passage, start, end) in passage offsets:
    two reviewers' evidence agree on a word when both spans hold it whole."""
    return frozenset(
        (item["passage"], item["start"] + m.start(), item["start"] + m.end())
        for item in evidence
        for m in WORD.finditer(item.get("text") or "")
    )


def assertion_tokens(values: Iterable[object]) -> frozenset[tuple]:
    """The claim words unsupported assertions name: a span's words by their offsets in the
    claim, a free-text assertion's words casefolded (it has no offsets)."""
    tokens: set[tuple] = set()
    for item in stored_assertions(values):
        for m in WORD.finditer(item["text"]):
            if item["start"] is not None:
                tokens.add(("span", item["start"] + m.start(), item["start"] + m.end()))
            else:
                tokens.add(("free", m.group().casefold()))
    return frozenset(tokens)


def checked_evidence(items: Sequence[EvidenceRef], passages: dict[int, str]) -> list[dict]:
    """Evidence as stored: spans of the answer's passages (position → text), text cut here;
    spans of one passage that overlap or touch are made one; in key order."""
    if len(items) > MAX_EVIDENCE:
        raise JudgmentError(f"At most {MAX_EVIDENCE} evidence sentences.")
    spans: dict[int, list[tuple[int, int, str]]] = {}
    for item in items:
        text = passages.get(item.passage)
        if text is None:
            raise JudgmentError(f"The answer has no passage [{item.passage}].")
        if not 0 <= item.start < item.end <= len(text):
            raise JudgmentError(
                f"Evidence offsets {item.start}–{item.end} are outside [{item.passage}]."
            )
        if item.text is not None and item.text != text[item.start : item.end]:
            raise JudgmentError(f"Evidence text does not match passage [{item.passage}].")
        spans.setdefault(item.passage, []).append((item.start, item.end, ""))
    return [
        {"passage": passage, "start": start, "end": end, "text": passages[passage][start:end]}
        for passage in sorted(spans)
        for start, end, _ in _merged_spans(spans[passage])
    ]


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
