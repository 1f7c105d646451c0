"""Words a claim and its best evidence do not share, in the classes that change its scope.

Word overlap counts "Customers can return hardware within 30 days" as four fifths found in
"Consumers may return hardware within 30 days", yet the sentence says something else: the
subject changed, and "may" grants where "can" describes. Those are the very drifts a
reviewer is there to catch, so the matcher must not call such a claim a match, and the
review page shows the differing words side by side instead of a score alone.

Classes, each compared on its own:
- negation: one side says "not", "no", "never", "without"… and the other does not;
- modal: "can", "may", "must", "should"…;
- quantifier: "all", "every", "some", "most", "only", "always"…;
- unit: the word after a figure both sides state ("30 days" / "30 months");
- word: a content word of the claim (a subject, verb or object) missing from the evidence.

Pure text processing, no Django: the matcher stores its result and the pages show it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

from audit.bm25 import STOP_WORDS, stem

Kind = Literal["negation", "modal", "quantifier", "unit", "word"]
KINDS: tuple[Kind, ...] = ("negation", "modal", "quantifier", "unit", "word")

# Words: letters with an inner apostrophe ("can't"), or figures ("1,204", "7.5").
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:'[^\W\d_]+)*")
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")

NEGATIONS = frozenset(
    ["not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot"]
)
MODALS = frozenset(
    ["can", "could", "may", "might", "must", "shall", "should", "will", "would", "ought"]
)
QUANTIFIERS = frozenset(
    [
        "all", "every", "each", "any", "some", "most", "many", "much", "few", "several",
        "both", "either", "only", "always", "usually", "often", "sometimes", "rarely",
        "seldom", "mostly", "generally", "typically", "frequently", "majority", "minority",
        "half", "more", "less", "fewer", "least", "maximum", "minimum", "entire", "whole",
    ]
)  # fmt: skip
# Words the matcher's index keeps that carry no scope of their own: "per year" is "each
# year", and "the policy says" names the source rather than narrowing the claim.
NEUTRAL = frozenset(["per", "says", "say", "said", "states", "stated", "according"])
# Contractions fold into the words they stand for: "can't" is a modal and a negation.
_CONTRACTIONS = {
    "can't": ("can", "not"),
    "cannot": ("can", "not"),
    "won't": ("will", "not"),
    "shan't": ("shall", "not"),
}


@dataclass(frozen=True)
class Difference:
    """One difference: the claim's word against the evidence's in its place, either side
    empty when only one side has a word of the class."""

    kind: Kind
    claim: str
    evidence: str


def _words(text: str) -> list[str]:
    """Lower-cased words with contractions spelled out ("can't" → "can", "not")."""
    out: list[str] = []
    for raw in _WORD.findall(text.casefold().replace("\u2019", "'")):
        if raw in _CONTRACTIONS:
            out.extend(_CONTRACTIONS[raw])
        elif raw.endswith("n't"):
            out.extend((raw[:-3], "not"))
        else:
            out.append(raw)
    return out


def _class_differences(
    kind: Kind, words: frozenset[str], claim: list[str], evidence: list[str], window: set[str]
) -> list[Difference]:
    """Class words on one side only, paired in order of appearance. A claim's word counts
    as found anywhere in the window; the evidence's own words are its sentence's only, so a
    neighbour's "some" does not narrow the claim."""
    claim_only = [w for w in dict.fromkeys(claim) if w in words and w not in window]
    evidence_only = [w for w in dict.fromkeys(evidence) if w in words and w not in claim]
    pairs = max(len(claim_only), len(evidence_only))
    return [
        Difference(
            kind,
            claim_only[i] if i < len(claim_only) else "",
            evidence_only[i] if i < len(evidence_only) else "",
        )
        for i in range(pairs)
    ]


def _negated(words: list[str]) -> bool:
    return any(w in NEGATIONS for w in words)


def _units(claim: list[str], evidence: list[str], window: list[str]) -> list[Difference]:
    """A figure both sides state whose word after it in the claim the window lacks:
    "30 days" / "30 months". A word found anywhere near ("5 unused days" / "5 days of
    unused leave") is the same statement in another order."""
    window_stems = {stem(w) for w in window}
    after_in_evidence: dict[str, list[str]] = {}
    for i, word in enumerate(evidence[:-1]):
        if _FIGURE.fullmatch(word):
            after_in_evidence.setdefault(word, []).append(evidence[i + 1])
    found = []
    for i, word in enumerate(claim[:-1]):
        unit = claim[i + 1]
        if (
            word not in after_in_evidence
            or _FIGURE.fullmatch(unit)
            or unit in STOP_WORDS
            or stem(unit) in window_stems
        ):
            continue
        found.append(Difference("unit", f"{word} {unit}", f"{word} {after_in_evidence[word][0]}"))
    return found


def _missing_words(
    claim: list[str], window: list[str], evidence: list[str], taken: set[str]
) -> list[Difference]:
    """Content words of the claim the window lacks (compared by stem), each beside the
    evidence sentence's word in its place when the two line up around it."""
    evidence_stems = {stem(w) for w in window}
    missing = {
        i
        for i, w in enumerate(claim)
        if w not in STOP_WORDS
        and w not in NEGATIONS | MODALS | QUANTIFIERS | NEUTRAL
        and not _FIGURE.fullmatch(w)
        and w not in taken
        and stem(w) not in evidence_stems
    }
    if not missing:
        return []
    partner: dict[int, str] = {}
    matcher = difflib.SequenceMatcher(a=claim, b=evidence, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op != "replace":
            continue
        replaced = [w for w in evidence[b0:b1] if w not in STOP_WORDS and w not in claim]
        for offset, i in enumerate(j for j in range(a0, a1) if j in missing):
            if offset < len(replaced):
                partner[i] = replaced[offset]
    return [Difference("word", claim[i], partner.get(i, "")) for i in sorted(missing)]


def scope_differences(claim: str, evidence: str, context: str = "") -> tuple[Difference, ...]:
    """Every difference between a claim and the evidence sentence it is compared with, in
    the order of KINDS. `context` (the sentence's neighbours) may hold the claim's words
    too. Empty: every content word of the claim is there and the two agree on negation,
    modality, quantity and units."""
    if not evidence.strip():
        return ()
    claim_words, evidence_words = _words(claim), _words(evidence)
    window_words = evidence_words + _words(context)
    window = set(window_words)
    found: list[Difference] = []
    if _negated(claim_words) != _negated(evidence_words):
        negation = next((w for w in claim_words if w in NEGATIONS), "")
        found.append(
            Difference(
                "negation", negation, next((w for w in evidence_words if w in NEGATIONS), "")
            )
        )
    found += _class_differences("modal", MODALS, claim_words, evidence_words, window)
    found += _class_differences("quantifier", QUANTIFIERS, claim_words, evidence_words, window)
    units = _units(claim_words, evidence_words, window_words)
    found += units
    taken = {d.claim.split()[-1] for d in units}
    found += _missing_words(claim_words, window_words, evidence_words, taken)
    return tuple(found)
