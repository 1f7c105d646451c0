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
from audit.selectors.release import claim_labels, claim_names

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
    criteria, _error = set_criteria(audit_set=audit_set)
    if not criteria:
        return None
    labels = claim_labels(audit_set=audit_set, run=f"system:{system}", viewer=viewer)
    return evaluate(criteria, labels, system=system)


def decision_report(*, audit_set: AuditSet, system: str, viewer=None) -> dict[str, Any]:
    """The decision for `system` as plain data (the API's answer and the gate's input):
    pass, fail, provisional or none, each criterion's result, and the claims failing it."""
    found = system_decision(audit_set=audit_set, system=system, viewer=viewer)
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
    }
