"""The release decision of a set's systems, read one way for every door: the set page, the
report, the API's report and decision, the `gate` command and the decision.changed webhook.

Pass or fail comes from one source: the stored release tallies (services.claims_changed
keeps them in step with every write), through `criteria.decide_counts`. A viewer who still
reviews claims of the set, or a decision with the accepted judge, has no stored tallies of
its own: the same counts are summed from the labels that viewer may see. Live labels are
read otherwise only to name the claims that fail a criterion.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from audit.claims import claim_name
from audit.criteria import (
    CriteriaError,
    Criterion,
    CriterionResult,
    Decision,
    Outcome,
    criteria_from_dicts,
    decide_counts,
    decision_badge,
    evaluate,
)
from audit.metrics import (
    ClaimLabel,
    JudgmentCounts,
    MetricSummary,
    ReleaseCounts,
    judgment_distribution,
    label_counts,
    summarize,
)
from audit.models import AuditSet, Claim
from audit.selectors.blindness import blind_claim_ids
from audit.selectors.judges import JudgeFill, judge_filled_labels
from audit.selectors.release import (
    CriteriaProvenance,
    claim_labels,
    claim_names,
    criteria_provenance,
    release_counts_by_system,
)

# How many failing claims a decision report names per criterion; `failing` counts them all.
NAMED_CLAIMS = 100
# How many failing claims the report page names under a criterion; its link lists them all.
NAMED = 10


def set_criteria(*, audit_set: AuditSet) -> tuple[tuple[Criterion, ...], str]:
    """The set's criteria, and an error message if the stored JSON cannot be read."""
    try:
        return criteria_from_dicts(audit_set.criteria), ""
    except CriteriaError as error:
        return (), str(error)


# ----------------------------------------------------------------------------- the reader


@dataclass(frozen=True)
class SystemDecision:
    """One system's release decision: its counts and the outcome they give (None without
    criteria)."""

    system: str
    counts: ReleaseCounts
    outcome: Outcome | None

    @property
    def badge(self) -> str:
        """pass, fail, provisional or none (see criteria.decision_badge)."""
        return decision_badge(self.outcome)

    @property
    def word(self) -> str | None:
        """pass, fail, provisional-pass or provisional-fail; None without criteria."""
        if self.outcome is None:
            return None
        word = "pass" if self.outcome.passed else "fail"
        return f"provisional-{word}" if self.outcome.provisional else word


@dataclass
class ReleaseDecision:
    """The release decision of every system of a set (or of one), for one viewer."""

    audit_set: AuditSet
    criteria: tuple[Criterion, ...]
    criteria_error: str
    systems: dict[str, SystemDecision]
    # The labels the counts were summed from, or read for the judge; None when the counts
    # are the stored tallies and nothing needed them.
    labels: list[ClaimLabel] | None = None
    # With the judge: the labels it filled; None without an accepted judge (human-only).
    fill: JudgeFill | None = None

    def of(self, system: str) -> SystemDecision:
        """The decision of `system`; a system without claims decides on empty counts."""
        found = self.systems.get(system)
        if found is not None:
            return found
        return SystemDecision(system, ReleaseCounts(), self._outcome(ReleaseCounts()))

    def _outcome(self, counts: ReleaseCounts) -> Outcome | None:
        return decide_counts(self.criteria, counts) if self.criteria else None

    @cached_property
    def provenance(self) -> CriteriaProvenance:
        """The criteria version the decision stands on, and every change made after review
        started."""
        return criteria_provenance(audit_set=self.audit_set)


def release_decision(
    *, audit_set: AuditSet, viewer=None, system: str | None = None, with_judge: bool = False
) -> ReleaseDecision:
    """The release decision of each system of the set (only `system`'s with it), as
    `viewer` may know it: from the stored tallies, or, where the viewer still reviews some
    claim of the set (see blind_claims), from the labels they may see, those claims
    unjudged. Without a viewer (the command line, the webhook) nobody is blind.

    With `with_judge`, the set's accepted judge stands for the claims no human judged; with
    no accepted judge it is the human-only decision, `fill` None."""
    return _decided(audit_set=audit_set, viewer=viewer, system=system, with_judge=with_judge)


def _decided(
    *,
    audit_set: AuditSet,
    viewer,
    system: str | None,
    with_judge: bool,
    labels: list[ClaimLabel] | None = None,
) -> ReleaseDecision:
    """release_decision, given the viewer's labels of the same scope if read already."""
    criteria, error = set_criteria(audit_set=audit_set)
    run = f"system:{system}" if system is not None else None
    fill = None
    if with_judge:
        if labels is None:
            labels = claim_labels(audit_set=audit_set, run=run, viewer=viewer)
        fill = judge_filled_labels(audit_set=audit_set, labels=labels, viewer=viewer)
    if fill is not None:
        counts = _counts_by_system(fill.labels)
    elif viewer is not None and blind_claim_ids(user=viewer, audit_set=audit_set):
        # The stored tallies count verdicts this viewer may not know yet.
        if labels is None:
            labels = claim_labels(audit_set=audit_set, run=run, viewer=viewer)
        counts = _counts_by_system(labels)
    else:
        counts = release_counts_by_system(audit_set=audit_set)
        if system is not None:
            counts = {name: n for name, n in counts.items() if name == system}
    decided = ReleaseDecision(audit_set, criteria, error, {}, labels=labels, fill=fill)
    decided.systems = {
        name: SystemDecision(name, n, decided._outcome(n)) for name, n in counts.items()
    }
    return decided


def _counts_by_system(labels: list[ClaimLabel]) -> dict[str, ReleaseCounts]:
    by_system: dict[str, list[ClaimLabel]] = {}
    for label in labels:
        by_system.setdefault(label.system, []).append(label)
    return {name: label_counts(by_system[name]) for name in sorted(by_system)}


def _explained_decision(
    decided: ReleaseDecision, labels: list[ClaimLabel], system: str
) -> Decision | None:
    """The decision of `system` with each criterion's failing claims named from `labels`:
    pass or fail from the reader's counts, never from the labels."""
    if not decided.criteria:
        return None
    return evaluate(
        decided.criteria,
        [label for label in labels if label.system == system],
        system=system,
        counts=decided.of(system).counts,
    )


def release_outcomes(*, audit_set_id: int) -> dict[str, str]:
    """Each system's release decision as one word (pass, fail, provisional-pass,
    provisional-fail), as nobody in particular sees it; none without criteria. What a
    "decision changed" webhook compares before and after a change."""
    audit_set = AuditSet.objects.filter(pk=audit_set_id).first()
    if audit_set is None:
        return {}
    decided = release_decision(audit_set=audit_set)
    return {name: item.word for name, item in decided.systems.items() if item.word}


# ------------------------------------------------------------------ the API and the gate


def system_decision(*, audit_set: AuditSet, system: str, viewer=None) -> Decision | None:
    """The decision of `system` with its failing claims; None when the set has no
    criteria. Claims the viewer still reviews count as unjudged (see blind_claims)."""
    decided = release_decision(audit_set=audit_set, viewer=viewer, system=system)
    return _explained_decision(decided, _system_labels(decided, system, viewer), system)


def _system_labels(decided: ReleaseDecision, system: str, viewer) -> list[ClaimLabel]:
    if decided.fill is not None:
        return decided.fill.labels
    if decided.labels is not None:
        return decided.labels
    return claim_labels(audit_set=decided.audit_set, run=f"system:{system}", viewer=viewer)


def decision_report(
    *, audit_set: AuditSet, system: str, viewer=None, with_judge: bool = False
) -> dict[str, Any]:
    """The decision for `system` as plain data (the API's answer and the gate's input):
    pass, fail, provisional or none, each criterion's result, and the claims failing it,
    with the criteria version it stands on and every change of the criteria made after
    review started (who, when, why).

    With `with_judge`, the set's accepted judge stands for the claims no human judged, as in
    the report's "with the accepted judge" figures; the answer then says which judge, its
    κ, and which named claims carry its verdict. Without an accepted judge it is the
    human-only decision, with `judge` null."""
    decided = release_decision(
        audit_set=audit_set, viewer=viewer, system=system, with_judge=with_judge
    )
    found = _explained_decision(decided, _system_labels(decided, system, viewer), system)
    fill = decided.fill
    filled = fill.filled if fill else frozenset()
    results = []
    for result in found.results if found else ():
        reasons = dict(result.reasons)
        shown = list(result.failing_claim_ids[:NAMED_CLAIMS])
        named = claim_names(ids=shown)
        results.append(
            {
                "criterion": result.criterion.describe(),
                "kind": result.criterion.kind,
                "passed": result.passed,
                "detail": result.detail,
                "failing": len(result.failing_claim_ids),
                "claims": [
                    {
                        "id": pk,
                        "answer_external_id": named[pk].answer.external_id if pk in named else "",
                        "name": _claim_name(named[pk]) if pk in named else "",
                        "text": named[pk].text if pk in named else "",
                        "reason": reasons.get(pk, ""),
                        "verdict_by": "judge" if pk in filled else "humans",
                    }
                    for pk in shown
                ],
            }
        )
    outcome = decided.of(system)
    return {
        "set": audit_set.pk,
        "system": system,
        "decision": outcome.badge,
        "passed": bool(outcome.outcome and outcome.outcome.passed),
        "provisional": bool(outcome.outcome and outcome.outcome.provisional),
        "criteria_error": decided.criteria_error,
        "criteria": results,
        "failed": [result for result in results if not result["passed"]],
        **decided.provenance.as_dict(),
        "with_judge": with_judge,
        "judge": _judge_summary(fill),
    }


def _judge_summary(fill: JudgeFill | None) -> dict[str, Any] | None:
    if fill is None:
        return None
    acceptance = fill.acceptance
    version = acceptance.version
    return {
        "name": version.judge.name,
        "version": version.number,
        "model": version.model,
        "kappa": acceptance.kappa,
        "kappa_low": acceptance.kappa_low,
        "kappa_high": acceptance.kappa_high,
        "gold_claims": acceptance.n_gold,
        "claims_filled": len(fill.filled),
    }


# ------------------------------------------------------------- the set page and the report


@dataclass
class SystemRelease:
    system: str
    # Full metrics on the report; the counts behind the share and the decision on the set page.
    summary: MetricSummary | ReleaseCounts
    # The report's decision with each criterion's failing claims; the set page's outcome.
    decision: Decision | Outcome | None
    badge: str = field(init=False)  # "pass", "fail", "provisional" or "none"
    # The report's results with their failing claims named (see overview_claims_named).
    explained: list[Explained] = field(init=False, default_factory=list)
    # The same system with the accepted judge filling its unjudged claims, if one is accepted.
    judged: JudgedRelease | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.badge = decision_badge(self.decision)


@dataclass
class JudgedRelease(SystemRelease):
    """A system's figures and decision with the accepted judge filling its unjudged claims."""

    filled: int = 0  # claims of the system the judge's verdict stands for
    filled_ids: frozenset[int] = frozenset()  # which (all systems'), to mark them by name


@dataclass(frozen=True)
class Explained:
    """A criterion's result with its failing claims named: claim, answer and reason."""

    result: CriterionResult
    claims: list[tuple[Claim, str]]


@dataclass(frozen=True)
class ReleaseSummary:
    """What the set page shows: per system the supported share and pass or fail."""

    systems: list[SystemRelease]
    overall: ReleaseCounts


def release_summary(*, audit_set: AuditSet, viewer=None) -> ReleaseSummary:
    """The set page's release summary: release_decision's counts and outcome per system,
    one GROUP BY over the stored tallies whatever the size of the set."""
    decided = release_decision(audit_set=audit_set, viewer=viewer)
    return ReleaseSummary(
        systems=[
            SystemRelease(name, item.counts, item.outcome) for name, item in decided.systems.items()
        ],
        overall=sum((item.counts for item in decided.systems.values()), ReleaseCounts()),
    )


@dataclass
class Overview:
    systems: list[SystemRelease]
    overall: MetricSummary
    answers: dict[int, MetricSummary]
    distribution: dict[str, JudgmentCounts]
    criteria: tuple[Criterion, ...]
    criteria_error: str
    provenance: CriteriaProvenance
    # Claims judged source inaccessible, in queue order: a lead replaces their passages.
    inaccessible_ids: list[int] = field(default_factory=list)
    # The same systems with an accepted judge's verdicts standing for the claims no human
    # judged (empty without one): shown beside the figures above, never in their place.
    with_judge: list[JudgedRelease] = field(default_factory=list)


def release_overview(*, audit_set: AuditSet, viewer=None) -> Overview:
    """Metrics of every system of the set from gold or provisional labels (claims the viewer
    still reviews count as unjudged, see blind_claims), with release_decision's decision per
    system and the claims failing each criterion. With an accepted judge, the same again
    with its verdicts on the claims no human judged."""
    labels = claim_labels(audit_set=audit_set, viewer=viewer)
    human = _decided(
        audit_set=audit_set, viewer=viewer, system=None, with_judge=False, labels=labels
    )
    metrics = summarize(labels)
    systems = [
        SystemRelease(name, summary, _explained_decision(human, labels, name))
        for name, summary in metrics.systems.items()
    ]
    with_judge = []
    judge = _decided(
        audit_set=audit_set, viewer=viewer, system=None, with_judge=True, labels=labels
    )
    fill = judge.fill
    if fill is not None:
        filled = Counter(c.system for c in fill.labels if c.claim_id in fill.filled)
        for name, summary in summarize(fill.labels).systems.items():
            with_judge.append(
                JudgedRelease(
                    name,
                    summary,
                    _explained_decision(judge, fill.labels, name),
                    filled=filled[name],
                    filled_ids=fill.filled,
                )
            )
        by_system = {judged.system: judged for judged in with_judge}
        for release in systems:
            release.judged = by_system.get(release.system)
    return Overview(
        systems=systems,
        overall=metrics.overall,
        answers=metrics.answers,
        distribution=judgment_distribution(labels),
        criteria=human.criteria,
        criteria_error=human.criteria_error,
        provenance=human.provenance,
        inaccessible_ids=[c.claim_id for c in labels if c.inaccessible],
        with_judge=with_judge,
    )


def named_claims(result: CriterionResult, *, every_failing: bool = False) -> list[tuple[int, str]]:
    """(claim, reason) of the claims a report names under a criterion, up to NAMED: those
    with a reason; with `every_failing`, every failing claim, reason or not (under the
    judge's decision a lead must see which claims carry the judge's verdict)."""
    if not every_failing:
        return list(result.reasons[:NAMED])
    reasons = dict(result.reasons)
    return [(pk, reasons.get(pk, "")) for pk in result.failing_claim_ids[:NAMED]]


def overview_claims_named(*, overview: Overview, inaccessible: int) -> list[Claim]:
    """Name the failing claims of every decision of the report (each release's
    `explained`), the judge's naming every failing claim to tag those carrying its verdict;
    returns the first `inaccessible` claims judged source inaccessible."""
    releases: list[tuple[SystemRelease, bool]] = [
        (release, False) for release in overview.systems
    ] + [(judged, True) for judged in overview.with_judge]
    named = {
        pk
        for release, every_failing in releases
        if isinstance(release.decision, Decision)
        for result in release.decision.results
        for pk, _ in named_claims(result, every_failing=every_failing)
    }
    first = overview.inaccessible_ids[:inaccessible]
    names = claim_names(ids=[*named, *first])
    for release, every_failing in releases:
        if isinstance(release.decision, Decision):
            release.explained = [
                Explained(
                    result,
                    [
                        (names[pk], reason)
                        for pk, reason in named_claims(result, every_failing=every_failing)
                        if pk in names
                    ],
                )
                for result in release.decision.results
            ]
    return [names[pk] for pk in first]


def _claim_name(claim: Claim) -> str:
    return claim_name(
        answer_id=claim.answer.external_id,
        order=claim.order,
        parent_order=claim.parent_order if claim.parent_id else None,
    )
