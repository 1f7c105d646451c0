"""Reads of suggestions: which sources a set has, and one source's suggestions per claim in
the one shape (audit.suggestions.Suggested) the review page, the exports and the
measurement against gold share.

The matcher's suggestions are its stored checks plus the unsupported words it computes
against the cited passages; a judge run's are its verdicts; a model's are the rows it
pushed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count

from audit import matching, unsupported
from audit.models import (
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    JudgeRun,
    JudgeVerdict,
    Suggestion,
    SuggestionSource,
)
from audit.suggestions import JUDGE_RUN, MATCHER, SOURCE, SourceKey, Suggested, SuggestedSpan


@dataclass(frozen=True)
class SourceInfo:
    key: SourceKey
    name: str
    version: str
    kind: str  # "matcher", "judge-run" or "source"
    claims: int | None = None  # how many claims it suggested for; None where not counted


def sources(audit_set: AuditSet, *, only: SourceKey | None = None) -> list[SourceInfo]:
    """The set's sources: the matcher first, then each judge run, then pushed models; with
    `only`, just that one (a single row read: the review page asks on every save)."""
    found = []
    if only is None or only.kind == MATCHER:
        found.append(SourceInfo(SourceKey(MATCHER), "Matcher", matching.MATCHER_VERSION, MATCHER))
    runs = (
        JudgeRun.objects.filter(judge__audit_set=audit_set)
        .select_related("judge", "version")
        .order_by("judge__name", "pk")
    )
    pushed = SuggestionSource.objects.filter(audit_set=audit_set)
    if only is not None:
        runs = runs.filter(pk=only.pk) if only.kind == JUDGE_RUN else runs.none()
        pushed = pushed.filter(pk=only.pk) if only.kind == SOURCE else pushed.none()
    for run in runs:
        found.append(
            SourceInfo(
                SourceKey(JUDGE_RUN, run.pk),
                run.judge.name,
                f"v{run.version.number} run {run.pk}",
                JUDGE_RUN,
            )
        )
    for source in pushed:
        found.append(SourceInfo(SourceKey(SOURCE, source.pk), source.name, source.version, SOURCE))
    return found


def source_info(audit_set: AuditSet, key: SourceKey) -> SourceInfo | None:
    """The set's source under `key`, or None where the set has no such source."""
    return next(iter(sources(audit_set, only=key)), None)


def suggestions(
    audit_set: AuditSet,
    key: SourceKey,
    *,
    claim_ids: Iterable[int] | None = None,
    with_words: bool = True,
) -> dict[int, Suggested]:
    """claim id → what the source suggests, for the set's claims (or those of `claim_ids`)
    the source suggested anything for. `with_words=False` spares the matcher computing the
    unsupported words (a few milliseconds a claim)."""
    claims = Claim.objects.filter(answer__audit_set=audit_set)
    if claim_ids is not None:
        claims = claims.filter(pk__in=list(claim_ids))
    if key.kind == MATCHER:
        return _matcher(claims, with_words=with_words)
    if key.kind == JUDGE_RUN:
        return _judge_run(audit_set, key.pk, claims)
    if key.kind == SOURCE:
        return _pushed(audit_set, key.pk, claims)
    return {}


def _matcher(claims, *, with_words: bool) -> dict[int, Suggested]:
    found: dict[int, Suggested] = {}
    checks = ClaimCheck.objects.filter(claim__in=claims).select_related("claim")
    for check in checks.iterator(chunk_size=500):
        claim = check.claim
        wrong = check.wrong_citation or None
        found[claim.pk] = Suggested(
            claim_id=claim.pk,
            evidence=tuple(
                SuggestedSpan(h["start"], h["end"], h["passage"], _unit(h.get("score")))
                for h in check.highlights
            ),
            unsupported=_matcher_words(claim) if with_words else (),
            wrong_citation_passage=wrong["passage"] if wrong else None,
            wrong_citation_score=_unit(wrong.get("score")) if wrong else None,
        )
    return found


def matcher_words(claim: Claim) -> tuple[SuggestedSpan, ...]:
    """The matcher's unsupported words of a claim against its cited passages."""
    return _matcher_words(claim)


def _matcher_words(claim: Claim) -> tuple[SuggestedSpan, ...]:
    # As the review page computes them: against the cited passages with text; none where
    # no cited passage has text (the whole claim would be "unsupported").
    cited = claim.citations.all()
    texts = [p.text for p in cited if p.text.strip()]
    if not texts or not claim.text.strip():
        return ()
    prepared = [matching.cached_passage(text) for text in texts]
    return tuple(
        SuggestedSpan(s.start, s.end, text=claim.text[s.start : s.end])
        for s in unsupported.unsupported_spans(claim.text, prepared)
    )


def _judge_run(audit_set: AuditSet, run_id: int, claims) -> dict[int, Suggested]:
    verdicts = JudgeVerdict.objects.filter(
        run_id=run_id, run__judge__audit_set=audit_set, claim__in=claims
    ).exclude(judgment="")
    return {v.claim_id: from_verdict(v) for v in verdicts.iterator(chunk_size=500)}


def from_verdict(v: JudgeVerdict) -> Suggested:
    """A judge's verdict as its run's suggestion for the claim."""
    return Suggested(
        claim_id=v.claim_id,
        judgment=v.judgment,
        evidence=tuple(
            SuggestedSpan(e["start"], e["end"], e["passage"])
            for e in v.evidence
            if isinstance(e, dict) and "start" in e
        ),
        unsupported=tuple(
            SuggestedSpan(u["start"], u["end"], text=u.get("text", ""))
            for u in v.unsupported_spans
            if isinstance(u, dict) and u.get("start") is not None
        ),
        wrong_citation_passage=v.wrong_citation_passage,
    )


def _pushed(audit_set: AuditSet, source_id: int, claims) -> dict[int, Suggested]:
    rows = Suggestion.objects.filter(
        source_id=source_id, source__audit_set=audit_set, claim__in=claims
    )
    return {s.claim_id: from_row(s) for s in rows.iterator(chunk_size=500)}


def from_row(s: Suggestion) -> Suggested:
    return Suggested(
        claim_id=s.claim_id,
        judgment=s.judgment,
        judgment_score=s.judgment_score,
        evidence=tuple(
            SuggestedSpan(e["start"], e["end"], e["passage"], e.get("score")) for e in s.evidence
        ),
        unsupported=tuple(
            SuggestedSpan(u["start"], u["end"], text=u.get("text", ""), score=u.get("score"))
            for u in s.unsupported
        ),
        wrong_citation_passage=s.wrong_citation_passage,
        wrong_citation_score=s.wrong_citation_score,
    )


def _unit(score) -> float | None:
    """The matcher's scores are its own scale; clamp them into [0, 1] for display."""
    if score is None:
        return None
    return max(0.0, min(1.0, float(score)))


def suggested_claims(audit_set: AuditSet, key: SourceKey):
    """The set's claims the source suggested anything for, as a queryset (for paging by
    claim); none for a key the set does not have."""
    claims = Claim.objects.filter(answer__audit_set=audit_set)
    if key.kind == MATCHER:
        return claims.filter(machine_check__isnull=False)
    if key.kind == JUDGE_RUN:
        judged = JudgeVerdict.objects.filter(
            run_id=key.pk, run__judge__audit_set=audit_set
        ).exclude(judgment="")
        return claims.filter(pk__in=judged.values("claim_id"))
    if key.kind == SOURCE:
        return claims.filter(
            suggestions__source_id=key.pk, suggestions__source__audit_set=audit_set
        )
    return claims.none()


def pushed_sources(audit_set: AuditSet) -> list[SuggestionSource]:
    """The set's sources pushed from outside, each with `suggested`, its count of claims,
    and `shown`, the count of sheets whose reviewer was shown its suggestions (such a
    source is kept: services.source_delete)."""
    found = list(
        SuggestionSource.objects.filter(audit_set=audit_set)
        .select_related("created_by")
        .annotate(suggested=Count("suggestions"))
        .order_by("name", "version", "pk")
    )
    shown = dict(
        AuditSheet.objects.filter(
            claim__answer__audit_set=audit_set, suggestion_source_shown__startswith=f"{SOURCE}:"
        )
        .values_list("suggestion_source_shown")
        .annotate(Count("pk"))
        .order_by()
    )
    for source in found:
        source.shown = shown.get(str(SourceKey(SOURCE, source.pk)), 0)
    return found
