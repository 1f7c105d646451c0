"""Agreement facts: per sheet, per pair of sheets and per claim, what the agreement dashboard
counts, so it aggregates a few small columns instead of decoding every sheet's evidence.

services.claims_changed (audit/services/derived.py), which every write path calls, refreshes
the facts of the claims it touched in the same transaction. Facts depend on nothing else:
gold and rater labels are read directly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from django.apps import apps as global_apps
from django.db import transaction

from audit import agreement, judgments

# Keeps `pk IN (...)` lists far below every database's parameter limit.
CHUNK = 2000
SUBMITTED = "submitted"

type GetModel = Callable[[str, str], type]


def agreement_facts_refresh(*, claim_ids: Iterable[int]) -> int:
    """Rewrite the agreement facts of these claims from their current sheets, assignments and
    checks; returns how many sheets now count. Locks the claims' rows first, as
    `claims_compare` does, so two reviewers submitting at once cannot both miss a sheet."""
    with transaction.atomic():
        return write_facts(claim_ids, global_apps.get_model)


def agreement_facts_rebuild(*, audit_set_id: int) -> int:
    """Rewrite every agreement fact of a set: for bulk writers that bypass the services."""
    claim_model = global_apps.get_model("audit", "Claim")
    ids = claim_model.objects.filter(answer__audit_set_id=audit_set_id).values_list("pk", flat=True)
    return agreement_facts_refresh(claim_ids=list(ids))


def write_facts(claim_ids: Iterable[int], get_model: GetModel) -> int:
    """The refresh itself, on the models `get_model` gives: the registry's, or a migration's."""
    ids = sorted(set(claim_ids))
    counted = 0
    for start in range(0, len(ids), CHUNK):
        counted += _write_chunk(ids[start : start + CHUNK], get_model)
    return counted


def _write_chunk(ids: list[int], get_model: GetModel) -> int:
    claim_model = get_model("audit", "Claim")
    sheet_fact = get_model("audit", "SheetFact")
    pair_fact = get_model("audit", "PairFact")
    claim_fact = get_model("audit", "ClaimFact")
    locked = claim_model.objects.select_for_update(of=("self",), no_key=True)
    claims = {
        pk: (audit_set_id, system)
        for pk, audit_set_id, system in locked.filter(pk__in=ids)
        .order_by("pk")
        .values_list("pk", "answer__audit_set_id", "answer__system")
    }
    for model in (sheet_fact, pair_fact, claim_fact):
        model.objects.filter(claim_id__in=ids).delete()
    assigned = set(
        get_model("audit", "Assignment")
        .objects.filter(claim_id__in=ids)
        .values_list("claim_id", "reviewer_id")
    )
    sheets: dict[int, list[agreement.CountedSheet]] = defaultdict(list)
    for pk, claim_id, reviewer_id, judgment, evidence, assertions in (
        get_model("audit", "AuditSheet")
        .objects.filter(claim_id__in=ids, status=SUBMITTED)
        .exclude(judgment="")
        .order_by("pk")
        .values_list(
            "pk", "claim_id", "reviewer_id", "judgment", "evidence", "unsupported_assertions"
        )
    ):
        if (claim_id, reviewer_id) in assigned and claim_id in claims:
            sheets[claim_id].append(
                agreement.CountedSheet(
                    order=pk,
                    rater=reviewer_id,
                    judgment=judgment,
                    evidence=judgments.stored_spans(evidence),
                    evidence_tokens=judgments.evidence_tokens(evidence),
                    assertion_tokens=judgments.assertion_tokens(assertions),
                )
            )
    if not sheets:
        return 0
    shown = {
        claim_id: judgments.hint_keys(highlights)
        for claim_id, highlights in get_model("audit", "ClaimCheck")
        .objects.filter(claim_id__in=list(sheets))
        .values_list("claim_id", "highlights")
    }
    sheet_rows, pair_rows, claim_rows = [], [], []
    for claim_id, counted in sheets.items():
        audit_set_id, system = claims[claim_id]
        scope = {"audit_set_id": audit_set_id, "system": system, "claim_id": claim_id}
        hints = shown.get(claim_id)
        for sheet in counted:
            # A claim without a check was never shown highlights: matcher_acceptance skips it.
            highlighted, kept, chosen, novel = (
                agreement.sheet_matcher_counts(sheet.evidence, hints)
                if hints is not None
                else (0, 0, 0, 0)
            )
            sheet_rows.append(
                sheet_fact(
                    **scope,
                    reviewer_id=sheet.rater,
                    judgment=sheet.judgment,
                    has_check=hints is not None,
                    highlighted=highlighted,
                    kept=kept,
                    chosen=chosen,
                    novel=novel,
                )
            )
        facts = agreement.claim_facts(counted)
        pair_rows += [
            pair_fact(
                **scope,
                reviewer_a_id=pair.rater_a,
                reviewer_b_id=pair.rater_b,
                judgment_a=pair.judgment_a,
                judgment_b=pair.judgment_b,
                evidence_jaccard=pair.evidence_jaccard,
                evidence_f1=pair.evidence_f1,
                unsupported_f1=pair.unsupported_f1,
            )
            for pair in facts.pairs
        ]
        claim_rows.append(
            claim_fact(
                **scope,
                sheets=len(counted),
                profile=facts.profile,
                evidence_jaccard=facts.evidence_jaccard,
                evidence_f1=facts.evidence_f1,
                unsupported_f1=facts.unsupported_f1,
                judgment_a=facts.judgment_a,
                judgment_b=facts.judgment_b,
            )
        )
    sheet_fact.objects.bulk_create(sheet_rows, batch_size=CHUNK)
    pair_fact.objects.bulk_create(pair_rows, batch_size=CHUNK)
    claim_fact.objects.bulk_create(claim_rows, batch_size=CHUNK)
    return len(sheet_rows)
