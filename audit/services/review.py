"""Blind double review: assigning claims to reviewers, the reviewers' audit sheets, guideline
flags, and splitting a claim into atomic claims.

Views decide what a user may see; these functions refuse writes the user may not make.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from audit import judgments
from audit.judgments import EvidenceRef, JudgmentData, JudgmentError
from audit.models import (
    Adjudication,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    ControlAssignment,
    ControlClaim,
    GuidelineFlag,
    Passage,
    ReviewerPause,
    ReviewerTally,
    Webhook,
)
from audit.roles import leads
from audit.selectors import QUEUE_ORDER, holds_claim, reviewer_sheet
from audit.services.calibration import controls_assign
from audit.services.checks import answer_claim_checks
from audit.services.derived import claims_changed
from audit.services.guidelines import guideline_version_current
from audit.services.locks import audit_set_lock, claims_lock
from audit.services.planner import planner_statistics_refresh
from audit.services.webhooks import webhooks_fire, webhooks_listen

PAUSED = (
    "A lead has paused your queue in this set: your submitted sheets are kept; ask the lead "
    "before going on."
)

# An idle tab left open cannot add more than this per save, however long it sat there.
MAX_ACTIVE_SECONDS_PER_SAVE = 120
# Slack on the wall-clock bound: a save may arrive a moment after the counter ticked.
ACTIVE_SECONDS_SLACK = 2
# A review action that cannot be done; the message is meant for the user. The same type as
# a judgment's own refusals (audit.judgments), so one except clause catches both.
ReviewError = JudgmentError


class StaleSheet(ReviewError):
    """The sheet was saved elsewhere (another tab) after this client loaded it."""

    def __init__(self, current_version: int) -> None:
        super().__init__(
            "This sheet was changed in another tab or window. Reload the page to see the "
            "latest version; nothing from this tab was saved."
        )
        self.current_version = current_version


class SheetIncomplete(ReviewError):
    """The sheet cannot be submitted yet; `problems` lists what is missing."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(" ".join(problems))
        self.problems = problems


# What a reviewer can edit on a sheet: a judgment with its notes.
SheetData = JudgmentData


@dataclass(frozen=True)
class AtomicPart:
    """One atomic fact of a split claim; citations None keeps the parent's citations."""

    text: str
    citations: tuple[int, ...] | None = None


@dataclass(frozen=True)
class OpenSummary:
    claims: int
    created: int
    per_reviewer: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ReplaceSummary:
    moved: int
    kept: int
    dropped: int


# ------------------------------------------------------------------------- assignment


def review_open(
    *,
    audit_set: AuditSet,
    reviewers: Sequence[AbstractBaseUser],
    overlap: int,
    by: AbstractBaseUser,
    allow_reviewer_split: bool | None = None,
) -> OpenSummary:
    """Open a set for blind review: give every claim to `overlap` distinct reviewers.

    The claims to judge are the top-level claims that were not split plus every atomic
    claim. Work is handed out answer by answer, in answer order, to the least-loaded
    reviewers (ties go to the earlier reviewer in `reviewers`), so a reviewer reads all
    claims of an answer in order and the load stays even. Running it again tops up claims
    that have fewer than `overlap` reviewers; it never assigns a claim twice to one person.
    """
    if not leads(by, audit_set):
        raise PermissionDenied("Only a lead of its workspace can open a set for review.")
    people = list(dict.fromkeys(reviewers))
    if overlap < 1:
        raise ReviewError("Each claim needs at least one reviewer.")
    if len(people) < overlap:
        raise ReviewError(
            f"An overlap of {overlap} needs at least {overlap} reviewers; {len(people)} chosen."
        )
    with transaction.atomic():
        audit_set = audit_set_lock(audit_set_id=audit_set.pk)
        audit_set.overlap = overlap
        if audit_set.review_opened_at is None:
            audit_set.review_opened_at = timezone.now()
        if allow_reviewer_split is not None:
            audit_set.allow_reviewer_split = allow_reviewer_split
        audit_set.save(update_fields=["overlap", "review_opened_at", "allow_reviewer_split"])
        audit_set.reviewers.add(*people)

        claims = list(
            _claims_to_judge(audit_set).order_by(*QUEUE_ORDER).values_list("pk", "answer_id")
        )
        have: dict[int, set[int]] = defaultdict(set)
        for claim_id, reviewer_id in Assignment.objects.filter(
            claim__answer__audit_set=audit_set
        ).values_list("claim_id", "reviewer_id"):
            have[claim_id].add(reviewer_id)
        load = {p.pk: 0 for p in people}
        for reviewer_ids in have.values():
            for reviewer_id in reviewer_ids:
                if reviewer_id in load:
                    load[reviewer_id] += 1
        rank = {p.pk: i for i, p in enumerate(people)}

        new: list[Assignment] = []
        start = 0
        while start < len(claims):
            answer_id = claims[start][1]
            end = start
            while end < len(claims) and claims[end][1] == answer_id:
                end += 1
            # One ranking per answer keeps an answer's claims with the same reviewers.
            ranked = sorted(load, key=lambda pk: (load[pk], rank[pk]))
            for claim_id, _ in claims[start:end]:
                taken = have[claim_id]
                missing = overlap - len(taken)
                for reviewer_id in [pk for pk in ranked if pk not in taken][: max(missing, 0)]:
                    new.append(Assignment(claim_id=claim_id, reviewer_id=reviewer_id))
                    taken.add(reviewer_id)
                    load[reviewer_id] += 1
            start = end
        Assignment.objects.bulk_create(new, batch_size=1000)
        # A claim that gained a reviewer is no longer complete: out of the queue until then;
        # a sheet submitted before its reviewer was (re)assigned counts from now on.
        claims_changed(
            audit_set_id=audit_set.pk,
            claim_ids={a.claim_id for a in new},
            reviewer_ids=[p.pk for p in people],
        )
        planner_statistics_refresh(rows=len(new))
        # Reviewers who joined, or got more claims, get their share of the set's controls.
        controls_assign(audit_set=audit_set)
    per_reviewer: dict[int, int] = defaultdict(int)
    for assignment in new:
        per_reviewer[assignment.reviewer_id] += 1
    return OpenSummary(claims=len(claims), created=len(new), per_reviewer=dict(per_reviewer))


def _claims_to_judge(audit_set: AuditSet):
    return Claim.objects.filter(answer__audit_set=audit_set).exclude(
        Exists(Claim.objects.filter(parent=OuterRef("pk")))
    )


def reviewer_replace(
    *, audit_set: AuditSet, leaving: AbstractBaseUser, joining: AbstractBaseUser
) -> ReplaceSummary:
    """Hand the unsubmitted work of a reviewer who left to another reviewer.

    Claims the leaving reviewer submitted stay theirs (the sheet counts). Claims the joining
    reviewer already has lose the leaving reviewer and are left one short: open the set for
    review again to fill them from the other reviewers.
    """
    if leaving.pk == joining.pk:
        raise ReviewError("Choose two different reviewers.")
    with transaction.atomic():
        audit_set = audit_set_lock(audit_set_id=audit_set.pk)
        claims_lock(
            claim_ids=Assignment.objects.filter(
                reviewer=leaving, claim__answer__audit_set=audit_set
            ).values_list("claim_id", flat=True)
        )
        submitted = AuditSheet.objects.filter(
            claim=OuterRef("claim"), reviewer=leaving, status=AuditSheet.Status.SUBMITTED
        )
        joined = Assignment.objects.filter(claim=OuterRef("claim"), reviewer=joining)
        mine = Assignment.objects.filter(
            reviewer=leaving, claim__answer__audit_set=audit_set
        ).annotate(is_submitted=Exists(submitted), is_joined=Exists(joined))
        kept = mine.filter(is_submitted=True).count()
        dropped_ids = list(
            mine.filter(is_submitted=False, is_joined=True).values_list("pk", flat=True)
        )
        moved_ids = list(
            mine.filter(is_submitted=False, is_joined=False).values_list("pk", flat=True)
        )
        touched = set(
            Assignment.objects.filter(pk__in=dropped_ids + moved_ids).values_list(
                "claim_id", flat=True
            )
        )
        Assignment.objects.filter(pk__in=dropped_ids).delete()
        Assignment.objects.filter(pk__in=moved_ids).update(
            reviewer=joining, assigned_at=timezone.now()
        )
        audit_set.reviewers.add(joining)
        audit_set.reviewers.remove(leaving)
        # Dropping a reviewer can complete a claim whose other sheets are all in.
        claims_changed(
            audit_set_id=audit_set.pk, claim_ids=touched, reviewer_ids=[leaving.pk, joining.pk]
        )
        controls_assign(audit_set=audit_set)
    return ReplaceSummary(moved=len(moved_ids), kept=kept, dropped=len(dropped_ids))


# ------------------------------------------------------------------------------ sheets


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
        _add_active_seconds(sheet, active_seconds, opened_at=opened_at if first else None)
        sheet.client_tab, sheet.client_seq, sheet.client_version = tab, seq, sheet.version
        sheet._history_user = user
        sheet.save()
    return sheet


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


def named_passage(position: int | None, passages: dict[int, Passage]) -> Passage | None:
    """The answer's passage at `position` (a wrong citation's), refused when there is none."""
    if position is None:
        return None
    passage = passages.get(position)
    if passage is None:
        raise ReviewError(f"The answer has no passage [{position}].")
    return passage


def checked_evidence(items: Sequence[EvidenceRef], passages: dict[int, Passage]) -> list[dict]:
    """Evidence as stored: spans of the answer's passages, text cut by the server."""
    return judgments.checked_evidence(items, {n: p.text for n, p in passages.items()})


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


def judgment_problems(
    *,
    claim_id: int,
    judgment: str,
    evidence: Sequence[dict],
    wrong_citation_passage: Passage | None,
) -> list[str]:
    """What a judgment still lacks to be final, on a sheet or on a gold record."""
    cited = Passage.objects.filter(citing_claims=claim_id).values_list("position", flat=True)
    return judgments.judgment_problems(
        judgment=judgment,
        evidence=evidence,
        wrong_citation_passage=wrong_citation_passage.position if wrong_citation_passage else None,
        cited=cited if judgment == judgments.WRONG_CITATION else (),
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


# ---------------------------------------------------------------------------- flags


def guideline_flag_raise(*, claim: Claim, user: AbstractBaseUser, comment: str) -> GuidelineFlag:
    """Record that the guidelines do not settle this claim; leads read it on the progress page."""
    comment = comment.strip()
    if not comment:
        raise ReviewError("Say what the guidelines should settle.")
    if not leads(user, claim.answer.audit_set) and not holds_claim(claim_id=claim.pk, user=user):
        raise PermissionDenied("This claim is not assigned to you.")
    with transaction.atomic():
        # A second click (or a resent form) on the same comment is the same flag, not a new
        # one; the claim's lock keeps two tabs sending it at once from both finding none.
        claims_lock(claim_ids=[claim.pk])
        same = GuidelineFlag.objects.filter(claim=claim, raised_by=user, comment=comment).first()
        if same is not None:
            return same
        return GuidelineFlag.objects.create(
            audit_set_id=claim.answer.audit_set_id, claim=claim, raised_by=user, comment=comment
        )


# ---------------------------------------------------------------------------- splits


# One refusal whatever the reason, so that it never tells a reviewer whether another
# reviewer has started on the claim.
REVIEWER_SPLIT_REFUSED = (
    "This claim can no longer be split from the review page: flag it for the lead if it "
    "should be split."
)


def claim_split(*, claim: Claim, parts: Sequence[AtomicPart], by: AbstractBaseUser) -> list[Claim]:
    """Split a claim into atomic claims, each judged on its own by the claim's reviewers.

    A lead may split any claim that is not adjudicated. A reviewer may split a claim
    assigned to them, when the set allows it, only while no sheet of the claim (theirs or
    another reviewer's) holds any saved work: a split moves the claim's reviewers to the
    atomic claims, and no one's judgment may be left behind by someone else's action.
    Sheets of the split claim are never deleted: they stay on it, in its history and
    exports, and their reviewers are pointed to the atomic claims. Atomic claims inherit
    the parent's citations unless a part names its own.
    """
    audit_set = AuditSet.objects.get(answers__claims=claim)
    if claim.parent_id is not None:
        raise ReviewError("An atomic claim cannot be split further.")
    by_lead = leads(by, audit_set)
    if not by_lead and ControlClaim.objects.filter(claim=claim).exists():
        # The refusal any claim gets once another reviewer has started: a control must
        # not answer differently from any other claim.
        raise ReviewError(REVIEWER_SPLIT_REFUSED)
    if not by_lead and not (
        audit_set.allow_reviewer_split
        and Assignment.objects.filter(claim=claim, reviewer=by).exists()
    ):
        raise PermissionDenied("You may not split this claim.")
    texts = [AtomicPart(p.text.strip(), p.citations) for p in parts if p.text.strip()]
    if len(texts) < 2:
        raise ReviewError("Give at least two atomic facts, one per line.")
    passages = list(Passage.objects.filter(answer_id=claim.answer_id).order_by("position"))
    by_position = {p.position: p for p in passages}
    for part in texts:
        unknown = [n for n in part.citations or () if n not in by_position]
        if unknown:
            raise ReviewError(f"The answer has no passage [{unknown[0]}].")

    with transaction.atomic():
        claim = Claim.objects.select_for_update(no_key=True).get(pk=claim.pk)
        if claim.atomic_claims.exists():
            raise ReviewError("This claim is already split.")
        if Adjudication.objects.filter(claim=claim).exists():
            raise ReviewError("This claim is adjudicated; it can no longer be split.")
        sheets = list(AuditSheet.objects.select_for_update().filter(claim=claim))
        if not by_lead and any(sheet_has_work(sheet) for sheet in sheets):
            raise ReviewError(REVIEWER_SPLIT_REFUSED)
        inherited = tuple(claim.citations.order_by("position").values_list("position", flat=True))
        children = []
        for order, part in enumerate(texts):
            own_citations = part.citations is not None
            citations = part.citations if own_citations else inherited
            unknown = [] if own_citations else list(claim.cited_unknown)
            children.append(
                Claim(
                    answer_id=claim.answer_id,
                    parent=claim,
                    parent_order=claim.order,
                    order=order,
                    text=part.text,
                    start=claim.start,
                    end=claim.end,
                    location=Claim.Location.ATOMIC,
                    cited_unknown=unknown,
                    is_uncited=not citations and not unknown,
                )
            )
        Claim.objects.bulk_create(children)
        through = Claim.citations.through
        citation_rows = []
        check_rows = []
        for child, part in zip(children, texts, strict=True):
            positions = part.citations if part.citations is not None else inherited
            positions = tuple(dict.fromkeys(positions))
            citation_rows += [
                through(claim_id=child.pk, passage_id=by_position[n].pk) for n in positions
            ]
            check_rows.append((child, positions, bool(child.cited_unknown)))
        through.objects.bulk_create(citation_rows)
        ClaimCheck.objects.bulk_create(answer_claim_checks(passages, check_rows))

        reviewer_ids = list(
            Assignment.objects.filter(claim=claim).values_list("reviewer_id", flat=True)
        )
        Assignment.objects.bulk_create(
            [Assignment(claim=c, reviewer_id=r) for c in children for r in reviewer_ids]
        )
        # The parent is no longer judged: its verdict is derived from its atomic claims.
        Assignment.objects.filter(claim=claim).delete()
        claim.split_by = by
        claim.split_at = timezone.now()
        claim.save(update_fields=["split_by", "split_at"])
        # A split claim is judged through its atomic claims: it leaves the queue, and its
        # sheets, which lost their assignments, no longer count towards agreement.
        claims_changed(
            audit_set_id=audit_set.pk,
            claim_ids=[claim.pk, *(child.pk for child in children)],
            reviewer_ids=reviewer_ids,
        )
    return children
