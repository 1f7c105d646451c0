"""Reads for calibration: a reviewer's feedback (gold against their own sheets, once a
claim is adjudicated), and gold shown right after a submit in a training set."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Exists, F, OuterRef, Q

from audit import judgments
from audit.agreement import AgreementSummary, summarize
from audit.calibration import (
    Chart,
    GoldPair,
    Judged,
    ReviewerCalibration,
    VersionedSheet,
    accuracy_chart,
    gold_differences,
    ratings_by_version,
    reviewer_calibration,
)
from audit.models import (
    Adjudication,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ControlAssignment,
    ControlClaim,
    GuidelineVersion,
    ReviewerPause,
)
from audit.selectors.blindness import blind_claims, sets_reviewed_by


def _judged(record) -> Judged:
    passage = record.wrong_citation_passage
    return Judged(
        judgment=record.judgment,
        evidence=judgments.stored_spans(record.evidence),
        wrong_passage=passage.position if passage is not None else None,
    )


@dataclass(frozen=True)
class FeedbackRow:
    claim: Claim
    sheet: AuditSheet
    gold: Adjudication
    differences: tuple[str, ...]

    @property
    def sheet_judgment(self) -> str:
        return judgments.JUDGMENT_LABELS.get(self.sheet.judgment, "—")

    @property
    def gold_judgment(self) -> str:
        return judgments.JUDGMENT_LABELS.get(self.gold.judgment, "—")

    @property
    def reason(self) -> str:
        return self.gold.get_reason_display() if self.gold.reason else ""


@dataclass(frozen=True)
class Feedback:
    adjudicated: int  # the reviewer's submitted sheets whose claims feedback may show
    rows: list[FeedbackRow]  # of those, where gold differs from the sheet


def feedback_sheets(*, reviewer, audit_set: AuditSet | None = None):
    """The reviewer's submitted sheets on adjudicated claims whose every assigned sheet is
    in, in sets they still review; in a training set, every submitted sheet on a claim with
    gold. Nothing about a claim the reviewer is still blind on can pass this filter."""
    open_assignment = Assignment.objects.filter(claim=OuterRef("claim")).exclude(
        Exists(
            AuditSheet.objects.filter(
                claim=OuterRef("claim"),
                reviewer=OuterRef("reviewer"),
                status=AuditSheet.Status.SUBMITTED,
            )
        )
    )
    sheets = AuditSheet.objects.filter(
        reviewer=reviewer,
        status=AuditSheet.Status.SUBMITTED,
        claim__adjudication__isnull=False,
        claim__answer__audit_set__in=sets_reviewed_by(user=reviewer),
    ).filter(Q(claim__answer__audit_set__is_training=True) | ~Exists(open_assignment))
    # A control's feedback would tell it from any other claim at once: controls measure
    # reviewers (the lead's calibration page), they do not teach them.
    sheets = sheets.exclude(
        Exists(ControlAssignment.objects.filter(claim=OuterRef("claim"), reviewer=reviewer))
    )
    if audit_set is not None:
        sheets = sheets.filter(claim__answer__audit_set=audit_set)
    return sheets


def reviewer_feedback(*, reviewer, audit_set: AuditSet | None = None) -> Feedback:
    """Where gold differs from the reviewer's sheets, once feedback may show it."""
    sheets = list(
        feedback_sheets(reviewer=reviewer, audit_set=audit_set)
        .select_related(
            "wrong_citation_passage",
            "claim__answer__audit_set",
            "claim__adjudication__wrong_citation_passage",
        )
        .order_by("claim__answer__audit_set_id", "claim__answer_id", "claim__order", "pk")
    )
    rows = []
    for sheet in sheets:
        gold = sheet.claim.adjudication
        differences = gold_differences(_judged(sheet), _judged(gold))
        if differences:
            rows.append(FeedbackRow(sheet.claim, sheet, gold, differences))
    return Feedback(adjudicated=len(sheets), rows=rows)


def training_gold(*, claim: Claim, sheet: AuditSheet) -> FeedbackRow | None:
    """Gold for the review page of a training set, once the reviewer's sheet is in."""
    if not claim.answer.audit_set.is_training or sheet.status != AuditSheet.Status.SUBMITTED:
        return None
    gold = Adjudication.objects.filter(claim=claim).select_related("wrong_citation_passage").first()
    if gold is None:
        return None
    return FeedbackRow(claim, sheet, gold, gold_differences(_judged(sheet), _judged(gold)))


def guideline_versions(*, audit_set: AuditSet) -> list[GuidelineVersion]:
    """The set's guideline versions, newest first."""
    return list(
        GuidelineVersion.objects.filter(audit_set=audit_set)
        .select_related("by")
        .order_by("-number")
    )


@dataclass(frozen=True)
class VersionAgreement:
    version: GuidelineVersion | None  # None: claims judged under several versions
    summary: AgreementSummary


def agreement_by_guideline_version(
    *, audit_set: AuditSet, system: str = "", viewer=None
) -> list[VersionAgreement]:
    """Reviewer agreement on the claims judged wholly under each guideline version, so a
    lead sees whether a change of the rules made reviewers agree more. Counts the sheets
    the dashboard counts: submitted, with a judgment, by a reviewer still assigned."""
    sheets = AuditSheet.objects.filter(
        claim__answer__audit_set=audit_set,
        status=AuditSheet.Status.SUBMITTED,
        claim__assignments__reviewer=F("reviewer"),
    ).exclude(judgment="")
    if system:
        sheets = sheets.filter(claim__answer__system=system)
    if viewer is not None:
        sheets = sheets.exclude(claim_id__in=blind_claims(user=viewer))
    grouped = ratings_by_version(
        VersionedSheet(claim, str(reviewer), judgment, number)
        for claim, reviewer, judgment, number in sheets.values_list(
            "claim_id", "reviewer_id", "judgment", "guideline_version__number"
        )
    )
    versions = {v.number: v for v in guideline_versions(audit_set=audit_set)}
    rows = [
        VersionAgreement(versions.get(number), summarize(ratings))
        for number, ratings in sorted(grouped.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
    ]
    return [row for row in rows if row.summary.n_items]


@dataclass(frozen=True)
class CalibrationRow:
    reviewer: object
    calibration: ReviewerCalibration
    chart: Chart
    below: bool
    paused: bool


def set_calibration(*, audit_set: AuditSet, viewer=None) -> list[CalibrationRow]:
    """Each reviewer of the set against gold: on the control claims mixed into their queue,
    and on every adjudicated claim they judged; less claims the viewer is still blind on."""
    held = Exists(Assignment.objects.filter(claim=OuterRef("claim"), reviewer=OuterRef("reviewer")))
    control = Exists(
        ControlAssignment.objects.filter(claim=OuterRef("claim"), reviewer=OuterRef("reviewer"))
    )
    sheets = (
        AuditSheet.objects.filter(
            claim__answer__audit_set=audit_set,
            status=AuditSheet.Status.SUBMITTED,
            claim__adjudication__isnull=False,
        )
        .exclude(judgment="")
        .annotate(is_control=control)
        .filter(Q(held) | Q(is_control=True))
        .select_related("wrong_citation_passage", "claim__adjudication__wrong_citation_passage")
        .order_by("submitted_at", "pk")
    )
    if viewer is not None:
        sheets = sheets.exclude(claim_id__in=blind_claims(user=viewer))
    pairs: dict[int, list[GoldPair]] = {}
    for sheet in sheets:
        pairs.setdefault(sheet.reviewer_id, []).append(
            GoldPair(
                claim=sheet.claim_id,
                sheet=_judged(sheet),
                gold=_judged(sheet.claim.adjudication),
                control=sheet.is_control,
                day=(sheet.submitted_at or sheet.updated_at).date(),
            )
        )
    paused = set(
        ReviewerPause.objects.filter(audit_set=audit_set).values_list("reviewer_id", flat=True)
    )
    rows = []
    for reviewer in audit_set.reviewers.order_by("username"):
        calibration = reviewer_calibration(pairs.get(reviewer.pk, []))
        rows.append(
            CalibrationRow(
                reviewer=reviewer,
                calibration=calibration,
                chart=accuracy_chart(calibration.weeks, audit_set.calibration_threshold),
                below=calibration.below(audit_set.calibration_threshold),
                paused=reviewer.pk in paused,
            )
        )
    return rows


def set_controls(*, audit_set: AuditSet):
    """The set's control claims, with how many queues they are mixed into."""
    return (
        Claim.objects.filter(answer__audit_set=audit_set, control__isnull=False)
        .annotate(queues=Count("control_assignments", distinct=True))
        .only("pk", "text", "answer_id")
        .order_by("pk")
    )


def control_candidates(*, audit_set: AuditSet):
    """Adjudicated claims of the set that are not controls yet."""
    return (
        Claim.objects.filter(
            answer__audit_set=audit_set, adjudication__isnull=False, control__isnull=True
        )
        .select_related("adjudication")
        .only("pk", "text", "answer_id", "adjudication__judgment")
        .order_by("pk")
    )


def controls_unmixed_reason(*, audit_set: AuditSet) -> str:
    """Why saving the control settings mixed no control into any queue, in the words the
    lead reads beside "0 controls mixed"."""
    if audit_set.control_rate < 2:
        return "the control rate is 0, so no control is mixed in."
    if not ControlClaim.objects.filter(claim__answer__audit_set=audit_set).exists():
        return "no claim is marked as a control yet: mark adjudicated claims below."
    if audit_set.review_opened_at is None:
        return "the set is not open for review yet; controls are mixed in when it opens."
    if not audit_set.reviewers.exists():
        return "the set has no reviewers."
    return (
        f"every reviewer already has one control in {audit_set.control_rate} claims, or has "
        "judged every control; mark more controls to give them more."
    )
