"""Leads' adjudication: a set's adjudication settings, and the gold record of a claim (one
reviewer's sheet taken whole, or a merged version), refused when another lead saved first."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction

from audit import judgments, selectors
from audit.judgments import JudgmentData
from audit.models import (
    Adjudication,
    AuditSet,
    AuditSheet,
    Claim,
    GuidelineFlag,
    Passage,
    Severity,
    Webhook,
)
from audit.roles import leads
from audit.services.derived import claims_changed, claims_changed_in_parts
from audit.services.disagreements import CompareSummary, comparable_claim_ids
from audit.services.locks import claims_lock
from audit.services.validation import (
    ReviewError,
    SheetIncomplete,
    checked_evidence,
    judgment_problems,
    named_passage,
)
from audit.services.webhooks import webhooks_fire


class StaleAdjudication(ReviewError):
    """Another lead saved the claim's gold record after this page was loaded."""

    def __init__(self, current: Adjudication | None) -> None:
        who = ""
        if current is not None:
            by = current.lead.get_username() if current.lead else "the reviewers’ unanimous sheets"
            who = f" (now version {current.version}, by {by})"
        super().__init__(
            f"Another lead saved this claim’s gold record while you were working on it{who}. "
            "Nothing from this page was saved: reload to see their version, then decide again."
        )
        self.current = current


# A merged gold version, as the lead edits it; its notes are unused (the lead's note is
# saved with the reason code).
GoldData = JudgmentData


def adjudication_settings_check(
    *, audit_set: AuditSet, by: AbstractBaseUser, evidence_jaccard_threshold: float
) -> None:
    """Refuse a change of the adjudication settings before it is made or queued."""
    if not leads(by, audit_set):
        raise PermissionDenied("Only a lead can change adjudication settings.")
    if not 0.0 <= evidence_jaccard_threshold <= 1.0:
        raise ReviewError("The evidence threshold is a Jaccard index, between 0 and 1.")


def adjudication_settings_update(
    *,
    audit_set: AuditSet,
    by: AbstractBaseUser,
    auto_gold: bool,
    evidence_jaccard_threshold: float,
    anonymous_adjudication: bool,
    progress: Callable[[int], None] | None = None,
) -> CompareSummary:
    """Change how a set's finished claims are compared, and compare them all again.

    Gold already made stays; only claims without gold move in or out of the queue, or
    become unanimous gold when auto_gold is turned on. With progress (a job), claims are
    compared a part at a time and progress is called with each part's claims.
    """
    adjudication_settings_check(
        audit_set=audit_set, by=by, evidence_jaccard_threshold=evidence_jaccard_threshold
    )
    with transaction.atomic():
        audit_set.auto_gold = auto_gold
        audit_set.evidence_jaccard_threshold = evidence_jaccard_threshold
        audit_set.anonymous_adjudication = anonymous_adjudication
        audit_set.save(
            update_fields=["auto_gold", "evidence_jaccard_threshold", "anonymous_adjudication"]
        )
        # Only finished or queued claims can change: the others wait on a reviewer.
        ids = comparable_claim_ids(audit_set=audit_set)
        if progress is not None:
            return claims_changed_in_parts(
                audit_set_id=audit_set.pk, claim_ids=ids, progress=progress
            )
        return claims_changed(audit_set_id=audit_set.pk, claim_ids=ids)


def adjudication_save(
    *,
    claim: Claim,
    lead: AbstractBaseUser,
    version: int,
    take: int | None = None,
    data: GoldData | None = None,
    reason: str = "",
    note: str = "",
    flag_comment: str = "",
    numbers_overridden: bool = False,
    numbers_override_reason: str = "",
) -> Adjudication:
    """Save the claim's gold record: sheet `take` (a pk) whole, or the merged `data`.

    `version` is the gold record's version the lead's page showed, 0 when it had none. A
    different current version, or a record created meanwhile (the unique constraint on the
    claim refuses the second insert), raises StaleAdjudication and writes nothing. A
    disagreement needs a reason code; `flag_comment` also raises a guideline flag.
    `numbers_overridden` (with a required `numbers_override_reason`) makes the release
    criterion "every number grounded" pass this claim; saving without it clears it.
    """
    if not leads(lead, claim.answer.audit_set):
        raise PermissionDenied("Only a lead can adjudicate.")
    if (take is None) == (data is None):
        raise ValueError("Give either a sheet to take or merged data.")
    if reason not in Adjudication.Reason.values:
        raise ReviewError(f"Unknown reason code “{reason}”.")
    override_reason = numbers_override_reason.strip() if numbers_overridden else ""
    if numbers_overridden and not override_reason:
        raise ReviewError("Say why the number check is overridden.")
    with transaction.atomic():
        # Through claims_lock: an atomic claim's parent is locked before it (services/locks.py).
        if not claims_lock(claim_ids=[claim.pk]):
            raise Claim.DoesNotExist
        claim = Claim.objects.get(pk=claim.pk)
        if claim.atomic_claims.exists():
            raise ReviewError("This claim was split: adjudicate its atomic claims.")
        sheets = selectors.adjudication_sheets(claim=claim)
        if version == 0 and claim.severity is None:
            current = Adjudication.objects.filter(claim=claim).first()
            if current is not None:
                raise StaleAdjudication(current)
            raise ReviewError("Not every assigned sheet of this claim is submitted yet.")
        if not reason and claim.severity is not None and claim.severity < Severity.CONFIRM:
            raise ReviewError("Choose a reason code: the reviewers disagreed.")

        fields = _from_sheet(take, sheets) if take is not None else _from_data(claim, data)
        problems = judgment_problems(
            claim_id=claim.pk,
            judgment=fields["judgment"],
            evidence=fields["evidence"],
            wrong_citation_passage=fields["wrong_citation_passage"],
        )
        problems += _cited_evidence_problems(claim, fields["judgment"], fields["evidence"])
        if problems:
            raise SheetIncomplete(problems)
        fields.update(
            reason=reason,
            note=note.strip(),
            lead=lead,
            numbers_overridden=numbers_overridden,
            numbers_override_reason=override_reason,
        )

        if version == 0:
            gold = Adjudication(claim=claim, version=1, **fields)
            gold._history_user = lead
            try:
                with transaction.atomic():
                    gold.save()
            except IntegrityError:
                raise StaleAdjudication(Adjudication.objects.get(claim=claim)) from None
        else:
            # The conditional update is the lock, as for sheets: one save per version.
            taken = Adjudication.objects.filter(claim=claim, version=version).update(
                version=version + 1
            )
            if not taken:
                raise StaleAdjudication(Adjudication.objects.filter(claim=claim).first())
            gold = Adjudication.objects.get(claim=claim)
            for name, value in fields.items():
                setattr(gold, name, value)
            gold._history_user = lead
            gold.save()
        gold.sheets.set(sheets)
        claims_changed(audit_set_id=claim.answer.audit_set_id, claim_ids=[claim.pk])
        if flag_comment.strip():
            GuidelineFlag.objects.create(
                audit_set_id=claim.answer.audit_set_id,
                claim=claim,
                raised_by=lead,
                comment=flag_comment.strip(),
            )
        webhooks_fire(
            audit_set_id=claim.answer.audit_set_id,
            event=Webhook.Event.CLAIM_ADJUDICATED,
            data={
                "claim": claim.pk,
                "answer": claim.answer_id,
                # Ids only: the receiver reads the judgment with its own rights (a lead
                # may still review claims of the set, blind to others' judgments).
                "adjudication": gold.pk,
                "version": gold.version,
            },
        )
    return gold


def _cited_evidence_problems(claim: Claim, judgment: str, evidence: list[dict]) -> list[str]:
    """A wrong-citation gold says the cited passages do not support the claim, so evidence
    in one of them contradicts it (and would make that citation look precise). Refused
    rather than dropped: the lead decides which of the two is the mistake."""
    if judgment != judgments.WRONG_CITATION:
        return []
    cited = set(claim.citations.values_list("position", flat=True))
    return [
        "“Wrong citation” says the cited passages do not support the claim: untick "
        f"“{item.get('text', '')}” in cited passage [{item['passage']}], or choose another "
        "judgment."
        for item in evidence
        if item.get("passage") in cited
    ]


def adjudication_saved_as(
    *,
    claim: Claim,
    lead: AbstractBaseUser,
    version: int,
    take: int | None = None,
    data: GoldData | None = None,
    reason: str = "",
    note: str = "",
    numbers_overridden: bool = False,
    numbers_override_reason: str = "",
) -> bool:
    """Whether the claim's gold is this lead's save of `version` (the one version it
    bumped) holding exactly what these arguments would store: a second copy of that save,
    never a different one (another tab's merged version with the same judgment included)."""
    gold = Adjudication.objects.filter(claim=claim).first()
    if gold is None or gold.lead_id != lead.pk or gold.version != version + 1:
        return False
    try:
        if take is not None:
            fields = _from_sheet(take, selectors.adjudication_sheets(claim=claim))
        else:
            fields = _from_data(claim, data)
    except ReviewError:
        return False
    fields.update(
        reason=reason,
        note=note.strip(),
        numbers_overridden=numbers_overridden,
        numbers_override_reason=numbers_override_reason.strip() if numbers_overridden else "",
    )
    return all(getattr(gold, name) == value for name, value in fields.items())


def _from_sheet(take: int, sheets: list[AuditSheet]) -> dict:
    sheet = next((s for s in sheets if s.pk == take), None)
    if sheet is None:
        raise ReviewError("That sheet is not one of this claim’s submitted sheets.")
    return {
        **{name: getattr(sheet, name) for name in judgments.FIELDS},
        "source": Adjudication.Source.SHEET,
        "from_sheet": sheet,
    }


def _from_data(claim: Claim, data: GoldData) -> dict:
    judgment = judgments.checked_judgment(data.judgment)
    passages = {p.position: p for p in Passage.objects.filter(answer_id=claim.answer_id)}
    wrong = named_passage(data.wrong_citation_passage, passages)
    return {
        "judgment": judgment,
        # Only a wrong citation names a passage; a leftover choice would read as a finding.
        "wrong_citation_passage": wrong if data.judgment == judgments.WRONG_CITATION else None,
        "evidence": checked_evidence(data.evidence, passages),
        # Gold has no snapshot of its own: its spans index the claim as it stands.
        "unsupported_assertions": judgments.checked_assertions(
            data.unsupported_assertions, claim.text
        ),
        **{name: getattr(data, name) for name in judgments.FLAG_NAMES},
        "source": Adjudication.Source.EDITED,
        "from_sheet": None,
    }
