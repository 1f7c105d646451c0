"""What the review page suggests for one claim: the set's chosen source's evidence, words
and judgment, or nothing where the set withholds suggestions from the claim.

Suggestions are per claim and per source only: nothing here reads a sheet, so a suggestion
never carries anything of another reviewer's judgment."""

from __future__ import annotations

from dataclasses import dataclass

from audit import judgments
from audit.models import AuditSet, Claim
from audit.selectors.suggestions import source_info, suggestions
from audit.suggestions import MATCHER, SourceKey, Suggested, SuggestedSpan, withheld


@dataclass(frozen=True)
class ReviewSuggestion:
    """What the page shows: `key` "" and nothing else where the claim is withheld."""

    withheld: bool
    key: str = ""
    name: str = ""
    is_matcher: bool = True
    # Top evidence spans, best first (at most judgments.MACHINE_HINTS), within the passages.
    evidence: tuple[SuggestedSpan, ...] = ()
    # Words of the claim, within its text.
    words: tuple[SuggestedSpan, ...] = ()
    judgment: str = ""
    judgment_label: str = ""
    judgment_score: float | None = None


def suggestion_shown(*, audit_set: AuditSet, claim_id: int) -> tuple[bool, str]:
    """(withheld, source key) the review page shows for a claim, as a sheet records it:
    the key is "" where the claim is withheld."""
    if withheld(audit_set.withhold_seed, audit_set.withhold_share, claim_id):
        return True, ""
    return False, _key(audit_set)


def _key(audit_set: AuditSet) -> str:
    key = SourceKey.parse(audit_set.suggestion_source)
    if key is not None and key.kind == MATCHER:
        return MATCHER
    # A source that is gone (its run or pushed rows deleted) falls back to the matcher.
    if key is None or source_info(audit_set, key) is None:
        return MATCHER
    return str(key)


def review_suggestion(*, audit_set: AuditSet, claim: Claim) -> ReviewSuggestion:
    """The chosen source's suggestion for the claim as the review page shows it. For the
    matcher only its name: the page keeps drawing the matcher's own stored checks."""
    if withheld(audit_set.withhold_seed, audit_set.withhold_share, claim.pk):
        return ReviewSuggestion(withheld=True)
    key = SourceKey.parse(_key(audit_set))
    if key.kind == MATCHER:
        return ReviewSuggestion(withheld=False, key=MATCHER, name="Matcher")
    info = source_info(audit_set, key)
    name = f"{info.name} {info.version}".strip()
    found: Suggested | None = suggestions(audit_set, key, claim_ids=[claim.pk]).get(claim.pk)
    if found is None:
        return ReviewSuggestion(withheld=False, key=str(key), name=name, is_matcher=False)
    lengths = dict(claim.answer.passages.values_list("position", "text"))
    lengths = {position: len(text) for position, text in lengths.items()}
    # Spans a source pushed are checked against the texts here: one past a passage's end or
    # on a passage the answer lacks is left out, never shown cut.
    evidence = tuple(
        e
        for e in found.evidence
        if e.passage in lengths and 0 <= e.start < e.end <= lengths[e.passage]
    )[: judgments.MACHINE_HINTS]
    words = tuple(
        w
        for w in found.unsupported
        if 0 <= w.start < w.end <= len(claim.text)
        and (not w.text or claim.text[w.start : w.end] == w.text)
    )
    return ReviewSuggestion(
        withheld=False,
        key=str(key),
        name=name,
        is_matcher=False,
        evidence=evidence,
        words=words,
        judgment=found.judgment if audit_set.show_suggested_judgment else "",
        judgment_label=(
            judgments.JUDGMENT_LABELS.get(found.judgment, "")
            if audit_set.show_suggested_judgment
            else ""
        ),
        judgment_score=found.judgment_score if audit_set.show_suggested_judgment else None,
    )
