"""The release decision of one system of a set, as the report decides it: what the API's
decision endpoint and the `gate` command answer."""

from __future__ import annotations

from typing import Any

from audit.criteria import (
    CriteriaError,
    Criterion,
    Decision,
    criteria_from_dicts,
    decision_badge,
    evaluate,
)
from audit.models import AuditSet
from audit.selectors.judges import JudgeFill, judge_filled_labels
from audit.selectors.release import claim_labels, claim_names, criteria_provenance

# How many failing claims a decision report names per criterion; `failing` counts them all.
NAMED_CLAIMS = 100


def set_criteria(*, audit_set: AuditSet) -> tuple[tuple[Criterion, ...], str]:
    """The set's criteria, and an error message if the stored JSON cannot be read."""
    try:
        return criteria_from_dicts(audit_set.criteria), ""
    except CriteriaError as error:
        return (), str(error)


def system_decision(*, audit_set: AuditSet, system: str, viewer=None) -> Decision | None:
    """The report's decision for `system`: its claims' gold or provisional labels against
    the set's criteria; None when the set has no criteria. Claims the viewer still reviews
    count as unjudged (see blind_claims), exactly as on the report."""
    return _decided(audit_set=audit_set, system=system, viewer=viewer, with_judge=False)[0]


def _decided(
    *, audit_set: AuditSet, system: str, viewer, with_judge: bool
) -> tuple[Decision | None, JudgeFill | None]:
    """The decision, and with `with_judge` the accepted judge's fill it was made with."""
    criteria, _error = set_criteria(audit_set=audit_set)
    if not criteria and not with_judge:
        return None, None
    labels = claim_labels(audit_set=audit_set, run=f"system:{system}", viewer=viewer)
    fill = None
    if with_judge:
        fill = judge_filled_labels(audit_set=audit_set, labels=labels, viewer=viewer)
        labels = fill.labels if fill else labels
    return (evaluate(criteria, labels, system=system) if criteria else None), fill


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
    found, fill = _decided(audit_set=audit_set, system=system, viewer=viewer, with_judge=with_judge)
    filled = fill.filled if fill else frozenset()
    _criteria, error = set_criteria(audit_set=audit_set)
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
                        "text": named[pk].text if pk in named else "",
                        "reason": reasons.get(pk, ""),
                        "verdict_by": "judge" if pk in filled else "humans",
                    }
                    for pk in shown
                ],
            }
        )
    return {
        "set": audit_set.pk,
        "system": system,
        "decision": decision_badge(found),
        "passed": bool(found and found.passed),
        "provisional": bool(found and found.provisional),
        "criteria_error": error,
        "criteria": results,
        "failed": [result for result in results if not result["passed"]],
        **criteria_provenance(audit_set=audit_set).as_dict(),
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
