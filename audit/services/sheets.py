"""A reviewer's audit sheet: saving a draft (one version at a time, whatever the tabs),
submitting it, reopening it, and the time spent on it.

Views decide what a user may see; these functions refuse writes the user may not make.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from audit import judgments
from audit.judgments import JudgmentData
from audit.models import (
    Adjudication,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ControlAssignment,
    Passage,
    ReviewerPause,
    ReviewerTally,
    Webhook,
)
from audit.selectors import holds_claim, reviewer_sheet
from audit.selectors.review_suggestions import suggestion_shown
from audit.services.derived import claims_changed
from audit.services.guidelines import guideline_version_current
from audit.services.locks import claims_lock
from audit.services.validation import (
    ReviewError,
    SheetIncomplete,
    checked_evidence,
    judgment_problems,
    named_passage,
)
from audit.services.webhooks import webhooks_fire, webhooks_listen

PAUSED = (
    "A lead has paused your queue in this set: your submitted sheets are kept; ask the lead "
    "before going on."
)

# An idle tab left open cannot add more than this per save, however long it sat there.
MAX_ACTIVE_SECONDS_PER_SAVE = 120
# Slack on the wall-clock bound: a save may arrive a moment after the counter ticked.
ACTIVE_SECONDS_SLACK = 2


class StaleSheet(ReviewError):
    """The sheet was saved elsewhere (another tab) after this client loaded it."""

    def __init__(self, current_version: int) -> None:
        super().__init__(
            "This sheet was changed in another tab or window. Reload the page to see the "
            "latest version; nothing from this tab was saved."
        )
        self.current_version = current_version


# What a reviewer can edit on a sheet: a judgment with its notes.
SheetData = JudgmentData


def sheet_for(*, claim: Claim, reviewer: AbstractBaseUser) -> AuditSheet:
    """The reviewer's sheet for a claim, stored as a blank draft if it is not yet.

    For writes only (submit, reopen): viewing a claim reads `selectors.reviewer_sheet`,
    which stores nothing. A new sheet snapshots the claim text and the cited URLs.
    """
    if not holds_claim(claim_id=claim.pk, user=reviewer):
        raise PermissionDenied("This claim is not assigned to you.")
    return _stored(reviewer_sheet(claim=claim, reviewer=reviewer))


def _stored(sheet: AuditSheet) -> AuditSheet:
    if sheet.pk is not None:
        return sheet
    sheet._history_user = sheet.reviewer
    try:
        with transaction.atomic():
            sheet.save()
    except IntegrityError:
        # Another tab created it a moment ago.
        return AuditSheet.objects.get(claim_id=sheet.claim_id, reviewer_id=sheet.reviewer_id)
    return sheet


def sheet_save(
    *,
    sheet: AuditSheet,
    user: AbstractBaseUser,
    version: int,
    data: SheetData,
    active_seconds: int = 0,
    tab: str = "",
    seq: int = 0,
    opened_at: datetime | None = None,
) -> AuditSheet:
    """Save a draft. Refuses a stale `version` (StaleSheet) and anyone but its reviewer.

    `sheet` may be the unsaved blank draft from `selectors.reviewer_sheet`: the first save
    stores it. `tab` and `seq` name the browser tab and its save number: when the latest
    version came from this tab's own save, an older `version` is not a conflict (a reload
    may read the sheet before the save sent on leaving arrives), and a save numbered no
    higher than that one is a late copy, ignored. Any other write in between (another tab,
    a submit, a reopen) makes the older version stale again.

    Adds at most MAX_ACTIVE_SECONDS_PER_SAVE active seconds, and never more than the time
    since the previous save. The save that stores the sheet counts the time spent on the
    page before it instead, up to the time since `opened_at` (when the page was shown).
    """
    first = sheet.pk is None
    with transaction.atomic():
        claims_lock(claim_ids=[sheet.claim_id])
        sheet = _stored(sheet)
        if tab:
            own = (
                AuditSheet.objects.filter(pk=sheet.pk, client_tab=tab, client_version=F("version"))
                .values_list("version", "client_seq")
                .first()
            )
            if own is not None:
                current, last_seq = own
                if seq <= last_seq:
                    _refuse_other_writers(sheet=sheet, user=user)
                    return AuditSheet.objects.get(pk=sheet.pk)
                # The conditional update in _claim_version still fails if anything else
                # writes the sheet between this read and that update.
                version = max(version, current)
        sheet = _claim_version(sheet=sheet, user=user, version=version)
        if sheet.status == AuditSheet.Status.SUBMITTED:
            raise ReviewError("This sheet is submitted; reopen it to change it.")
        _apply(sheet, data)
        _record_suggestions_shown(sheet)
        _add_active_seconds(sheet, active_seconds, opened_at=opened_at if first else None)
        sheet.client_tab, sheet.client_seq, sheet.client_version = tab, seq, sheet.version
        sheet._history_user = user
        sheet.save()
    return sheet


def _record_suggestions_shown(sheet: AuditSheet) -> None:
    """What the review page showed with this sheet: acceptance and the anchoring comparison
    are measured against it, whichever door saved the sheet."""
    audit_set = AuditSet.objects.only(
        "suggestion_source", "withhold_share", "withhold_seed", "workspace_id"
    ).get(answers__claims=sheet.claim_id)
    sheet.suggestions_withheld, sheet.suggestion_source_shown = suggestion_shown(
        audit_set=audit_set, claim_id=sheet.claim_id
    )


def _refuse_other_writers(*, sheet: AuditSheet, user: AbstractBaseUser) -> None:
    if sheet.reviewer_id != user.pk:
        raise PermissionDenied("Only the sheet's reviewer can change it.")
    if not holds_claim(claim_id=sheet.claim_id, user=user):
        raise PermissionDenied("This claim is no longer assigned to you.")


def sheet_submit(
    *,
    sheet: AuditSheet,
    user: AbstractBaseUser,
    version: int,
    data: SheetData | None = None,
    active_seconds: int = 0,
) -> AuditSheet:
    """Save the given data (if any) and submit the sheet, all or nothing.

    Requires a judgment; supported and partially supported need at least one evidence
    sentence; a wrong citation needs the uncited passage of the answer that supports it.
    """
    with transaction.atomic():
        # The claim before the sheet, as everywhere (services/locks.py): the last submit
        # writes gold that refers to the other reviewers' sheets.
        claims_lock(claim_ids=[sheet.claim_id])
        sheet = _claim_version(sheet=sheet, user=user, version=version)
        if sheet.status == AuditSheet.Status.SUBMITTED:
            raise ReviewError("This sheet is already submitted.")
        if ReviewerPause.objects.filter(
            audit_set__answers__claims=sheet.claim_id, reviewer=user
        ).exists():
            raise ReviewError(PAUSED)
        if data is not None:
            _apply(sheet, data)
        _record_suggestions_shown(sheet)
        _add_active_seconds(sheet, active_seconds)
        problems = _submit_problems(sheet)
        if problems:
            raise SheetIncomplete(problems)
        sheet.status = AuditSheet.Status.SUBMITTED
        sheet.submitted_at = timezone.now()
        sheet.guideline_version = guideline_version_current(
            audit_set=AuditSet.objects.get(answers__claims=sheet.claim_id)
        )
        sheet._history_user = user
        sheet.save()
        # The last sheet in decides: unanimous gold, or a place in the lead's queue.
        claims_changed(claim_ids=[sheet.claim_id])
        audit_set_id = sheet.claim.answer.audit_set_id
        if webhooks_listen(
            audit_set_id=audit_set_id, event=Webhook.Event.SET_REVIEWED
        ) and set_fully_reviewed(audit_set_id=audit_set_id):
            webhooks_fire(
                audit_set_id=audit_set_id,
                event=Webhook.Event.SET_REVIEWED,
                data={"claim": sheet.claim_id, "sheet": sheet.pk},
            )
    return sheet


def set_fully_reviewed(*, audit_set_id: int) -> bool:
    """Every reviewer of the set has submitted a sheet on every claim assigned to them, read
    off their tallies (services.tallies keeps them in step with each submit)."""
    tallies = ReviewerTally.objects.filter(audit_set_id=audit_set_id)
    return (
        tallies.filter(assigned__gt=0).exists()
        and not tallies.filter(submitted__lt=F("assigned")).exists()
    )


def sheet_reopen(*, sheet: AuditSheet, user: AbstractBaseUser) -> AuditSheet:
    """Turn a submitted sheet back into a draft, until a lead adjudicates the claim.

    Whether the other sheets are in never changes what reopening does or says, so
    reopening cannot tell a reviewer anything about them. Unanimous gold is withdrawn (its
    history keeps it), and a sheet reopened while every other sheet was in sends the
    claim to a lead when it is submitted again: its reviewer may have learnt that the
    others disagreed, so agreeing now is no longer independent.
    """
    if sheet.reviewer_id != user.pk:
        raise PermissionDenied("Only the sheet's reviewer can reopen it.")
    with transaction.atomic():
        # The claim before the sheet: locking the sheet first deadlocked against the other
        # reviewer's last submit, which holds the claim and writes gold citing this sheet.
        claims_lock(claim_ids=[sheet.claim_id])
        sheet = AuditSheet.objects.select_for_update(no_key=True).get(pk=sheet.pk)
        if sheet.status != AuditSheet.Status.SUBMITTED:
            raise ReviewError("This sheet is not submitted.")
        if ControlAssignment.objects.filter(claim_id=sheet.claim_id, reviewer=user).exists():
            # A control's sheet counts nowhere: reopening it changes no gold or status.
            sheet.status = AuditSheet.Status.DRAFT
            sheet.submitted_at = None
            sheet.version += 1
            sheet._history_user = user
            sheet.save()
            return sheet
        gold = Adjudication.objects.filter(claim_id=sheet.claim_id).first()
        if gold is not None and gold.lead_id is not None:
            raise ReviewError("This claim is adjudicated; its sheets can no longer change.")
        if gold is not None:
            # Withdrawn by the system, not by a person: anonymous adjudication hides names.
            gold._history_user = None
            gold._change_reason = "withdrawn: a sheet was reopened"
            gold.delete()
        sheet.reopened_after_all_in = sheet.reopened_after_all_in or _others_all_in(sheet)
        sheet.status = AuditSheet.Status.DRAFT
        sheet.submitted_at = None
        sheet.version += 1
        sheet._history_user = user
        sheet.save()
        # A claim with a sheet back in draft leaves the adjudication queue.
        claims_changed(claim_ids=[sheet.claim_id])
    return sheet


def _others_all_in(sheet: AuditSheet) -> bool:
    """Whether every other reviewer assigned to the sheet's claim has submitted."""
    others = Assignment.objects.filter(claim_id=sheet.claim_id).exclude(
        reviewer_id=sheet.reviewer_id
    )
    submitted = AuditSheet.objects.filter(
        claim_id=sheet.claim_id, reviewer=OuterRef("reviewer"), status=AuditSheet.Status.SUBMITTED
    )
    return others.exists() and not others.exclude(Exists(submitted)).exists()


def _claim_version(*, sheet: AuditSheet, user: AbstractBaseUser, version: int) -> AuditSheet:
    """Take the next version of the sheet, or fail if `version` is not the current one.

    The conditional update is the lock: of two saves naming the same version only the
    first matches a row, on SQLite and PostgreSQL alike. Call inside a transaction, after
    locking the sheet's claim (services/locks.py).
    """
    if sheet.reviewer_id != user.pk:
        raise PermissionDenied("Only the sheet's reviewer can change it.")
    if not holds_claim(claim_id=sheet.claim_id, user=user):
        raise PermissionDenied("This claim is no longer assigned to you.")
    taken = AuditSheet.objects.filter(pk=sheet.pk, version=version).update(version=version + 1)
    current = AuditSheet.objects.get(pk=sheet.pk)
    if not taken:
        raise StaleSheet(current.version)
    return current


def _apply(sheet: AuditSheet, data: SheetData) -> None:
    judgment = judgments.checked_judgment(data.judgment)
    passages = {p.position: p for p in Passage.objects.filter(answer__claims=sheet.claim_id)}
    sheet.judgment = judgment
    sheet.evidence = checked_evidence(data.evidence, passages)
    sheet.wrong_citation_passage = named_passage(data.wrong_citation_passage, passages)
    for name in judgments.FLAG_NAMES:
        setattr(sheet, name, getattr(data, name))
    sheet.unsupported_assertions = judgments.checked_assertions(
        data.unsupported_assertions, sheet.answer_statement
    )
    sheet.notes = data.notes


def _add_active_seconds(
    sheet: AuditSheet, seconds: int, *, opened_at: datetime | None = None
) -> None:
    if opened_at is not None:
        # Reading before the first change is work too, and no earlier save could count it.
        since_opened = (timezone.now() - _as_aware(opened_at)).total_seconds()
        bound = max(0, int(since_opened)) + ACTIVE_SECONDS_SLACK
        sheet.active_seconds += max(0, min(int(seconds), bound))
        return
    since_last = (timezone.now() - _as_aware(sheet.updated_at)).total_seconds()
    bound = min(MAX_ACTIVE_SECONDS_PER_SAVE, int(since_last) + ACTIVE_SECONDS_SLACK)
    sheet.active_seconds += max(0, min(int(seconds), bound))


def _as_aware(moment: datetime) -> datetime:
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment)


def _submit_problems(sheet: AuditSheet) -> list[str]:
    if Claim.objects.filter(parent_id=sheet.claim_id).exists():
        return ["This claim was split into atomic claims; judge those instead."]
    return judgment_problems(
        claim_id=sheet.claim_id,
        judgment=sheet.judgment,
        evidence=sheet.evidence,
        wrong_citation_passage=sheet.wrong_citation_passage,
    )


def sheet_submitted_as(*, sheet: AuditSheet, version: int, data: SheetData) -> bool:
    """Whether `sheet` is submitted, by a submit of `version` (the one version it bumped)
    and holding exactly `data`: a second copy of that submit, never a different one. The
    data is checked and read as a submit would store it, so what the page posted compares
    with what was stored whatever its order or spelling."""
    if sheet.pk is None or sheet.status != AuditSheet.Status.SUBMITTED:
        return False
    if sheet.version != version + 1:
        return False
    probe = AuditSheet(claim_id=sheet.claim_id, answer_statement=sheet.answer_statement)
    try:
        _apply(probe, data)
    except ReviewError:
        return False
    names = ("judgment", "evidence", "wrong_citation_passage_id", "unsupported_assertions")
    return all(getattr(probe, n) == getattr(sheet, n) for n in names + judgments.FLAG_NAMES) and (
        probe.notes == sheet.notes
    )


def sheet_has_work(sheet: AuditSheet) -> bool:
    """Whether the sheet holds anything its reviewer chose: it is not a fresh draft."""
    return (
        sheet.status == AuditSheet.Status.SUBMITTED
        or bool(sheet.judgment or sheet.evidence or sheet.unsupported_assertions)
        or bool(sheet.notes.strip())
        or sheet.wrong_citation_passage_id is not None
        or any(getattr(sheet, flag.name) != flag.default for flag in judgments.FLAGS)
    )
