"""The API's lead work on a set: its reviewers and their assignment, control claims, the
adjudication queue and the comparison of two runs, each through the pages' own services and
selectors, so both doors write the same rows and show the same ones."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Query, Schema
from ninja.errors import HttpError
from pydantic import Field

from audit import comparison, judgments, selectors, services
from audit.api.base import MAX_LIMIT, api, plain, refusals
from audit.filters import AdjudicationQueueFilter
from audit.models import AuditSet, Severity
from audit.problems import FieldInvalid
from audit.views import access

# As many rows as the calibration page lists of each kind.
CONTROLS_SHOWN = 200
# The largest key the database stores (a 64-bit integer): a larger one would overflow there.
MAX_KEY = 2**63 - 1
Key = Annotated[int, Field(ge=1, le=MAX_KEY)]


class ReviewerRow(Schema):
    id: int
    username: str
    assigned: int
    submitted: int
    drafts: int
    median_seconds: float | None
    claims_per_hour: float | None
    flags: int


class ReviewersOut(Schema):
    overlap: int
    allow_reviewer_split: bool
    review_opened_at: datetime | None
    reviewers: list[ReviewerRow]
    # Usernames a lead may choose: the active reviewers of the set's workspace.
    candidates: list[str]


class AssignIn(Schema):
    reviewers: list[str] = Field(min_length=1, max_length=500)
    overlap: int
    allow_reviewer_split: bool | None = None


class AssignOut(Schema):
    claims: int
    created: int
    per_reviewer: dict[str, int]


class ReplaceIn(Schema):
    leaving: str = Field(min_length=1, max_length=150)
    joining: str = Field(min_length=1, max_length=150)


class ReplaceOut(Schema):
    moved: int
    kept: int
    dropped: int


class ControlsPatch(Schema):
    control_rate: int | None = None
    calibration_threshold: float | None = None


class ControlsMark(Schema):
    claims: list[Key] = Field(min_length=1, max_length=MAX_LIMIT)
    control: bool = True


class QueueQuery(Schema):
    severity: str = ""
    judgment: str = ""
    fast: bool | None = None
    label: str = ""
    system: str = ""
    limit: int = Field(50, ge=1, le=MAX_LIMIT)
    offset: int = Field(0, ge=0, le=MAX_KEY // 2)


# ------------------------------------------------------------------------------ reviewers


def _reviewers_out(audit_set: AuditSet) -> dict:
    return {
        "overlap": audit_set.overlap,
        "allow_reviewer_split": audit_set.allow_reviewer_split,
        "review_opened_at": audit_set.review_opened_at,
        "reviewers": [
            {
                "id": row.reviewer_id,
                "username": row.username,
                "assigned": row.assigned,
                "submitted": row.submitted,
                "drafts": row.drafts,
                "median_seconds": row.median_seconds,
                "claims_per_hour": row.claims_per_hour,
                "flags": row.flags,
            }
            for row in selectors.reviewer_progress(audit_set=audit_set)
        ],
        "candidates": list(
            selectors.review_candidates(audit_set=audit_set).values_list("username", flat=True)
        ),
    }


@api.get(
    "/sets/{set_id}/reviewers",
    response={200: ReviewersOut, **refusals(403, 404, 422)},
    tags=["review"],
    url_name="reviewers",
)
def reviewers(request: HttpRequest, set_id: int) -> dict:
    """Each reviewer's progress, as on the progress page, and who may be chosen."""
    return _reviewers_out(access.get_set_for_lead(request, set_id))


@api.post(
    "/sets/{set_id}/reviewers",
    response={200: AssignOut, **refusals(403, 404, 422)},
    tags=["review"],
    url_name="reviewers-assign",
)
def reviewers_assign(request: HttpRequest, set_id: int, payload: AssignIn) -> dict:
    """Open the set for review, or top it up: every claim to `overlap` of these reviewers,
    as the page's "Open for review" does. Claims already assigned keep their reviewers."""
    audit_set = access.get_set_for_lead(request, set_id)
    # In the page's order (by username): ties in load go to the earlier reviewer.
    chosen = list(
        selectors.review_candidates(audit_set=audit_set).filter(username__in=payload.reviewers)
    )
    unknown = sorted(set(payload.reviewers) - {user.username for user in chosen})
    if unknown:
        raise HttpError(
            422,
            "Invalid request: body.reviewers: not a reviewer of this set's workspace: "
            + ", ".join(unknown),
        )
    try:
        summary = services.review_open(
            audit_set=audit_set,
            reviewers=chosen,
            overlap=payload.overlap,
            by=request.user,
            allow_reviewer_split=payload.allow_reviewer_split,
        )
    except services.ReviewError as error:
        raise FieldInvalid("body.overlap", str(error)) from None
    names = {user.pk: user.username for user in chosen}
    return {
        "claims": summary.claims,
        "created": summary.created,
        "per_reviewer": {names[pk]: n for pk, n in summary.per_reviewer.items()},
    }


@api.post(
    "/sets/{set_id}/reviewers/replace",
    response={200: ReplaceOut, **refusals(403, 404, 422)},
    tags=["review"],
    url_name="reviewers-replace",
)
def reviewers_replace(request: HttpRequest, set_id: int, payload: ReplaceIn) -> dict:
    """Take a reviewer off the set: their open claims go to `joining`, their submitted
    sheets stay, as the progress page's "Replace a reviewer" does."""
    audit_set = access.get_set_for_lead(request, set_id)
    leaving = selectors.set_assignees(audit_set=audit_set).filter(username=payload.leaving).first()
    if leaving is None:
        raise FieldInvalid("body.leaving", "holds no claim of this set.")
    joining = (
        selectors.review_candidates(audit_set=audit_set).filter(username=payload.joining).first()
    )
    if joining is None:
        raise FieldInvalid("body.joining", "not a reviewer of this set's workspace.")
    try:
        summary = services.reviewer_replace(audit_set=audit_set, leaving=leaving, joining=joining)
    except services.ReviewError as error:
        raise FieldInvalid("body.joining", str(error)) from None
    return {"moved": summary.moved, "kept": summary.kept, "dropped": summary.dropped}


# ------------------------------------------------------------------------------- controls


class ControlRow(Schema):
    claim: int
    text: str
    queues: int


class CandidateRow(Schema):
    claim: int
    text: str
    gold: str


class ControlsOut(Schema):
    control_rate: float
    calibration_threshold: float
    controls: list[ControlRow]
    candidates: list[CandidateRow]


class ControlsPatchOut(ControlsOut):
    added: int


class ControlsMarkOut(ControlsOut):
    changed: int


def _controls_out(audit_set: AuditSet) -> dict:
    return {
        "control_rate": audit_set.control_rate,
        "calibration_threshold": audit_set.calibration_threshold,
        "controls": [
            {"claim": claim.pk, "text": claim.text, "queues": claim.queues}
            for claim in selectors.set_controls(audit_set=audit_set)[:CONTROLS_SHOWN]
        ],
        "candidates": [
            {"claim": claim.pk, "text": claim.text, "gold": claim.adjudication.judgment}
            for claim in selectors.control_candidates(audit_set=audit_set)[:CONTROLS_SHOWN]
        ],
    }


@api.get(
    "/sets/{set_id}/controls",
    response={200: ControlsOut, **refusals(403, 404, 422)},
    tags=["review"],
    url_name="controls",
)
def controls(request: HttpRequest, set_id: int) -> dict:
    """The control rate and alert threshold, the control claims with how many queues each is
    in, and adjudicated claims that could become controls (the first 200 of each)."""
    return _controls_out(access.get_set_for_lead(request, set_id))


@api.patch(
    "/sets/{set_id}/controls",
    response={200: ControlsPatchOut, **refusals(403, 404, 422)},
    tags=["review"],
    url_name="controls-patch",
)
def controls_patch(request: HttpRequest, set_id: int, payload: ControlsPatch) -> dict:
    """Change the control rate or the alert threshold (a field left out keeps its value);
    `added` says how many controls this mixed into the queues."""
    audit_set = access.get_set_for_lead(request, set_id)
    rate = audit_set.control_rate if payload.control_rate is None else payload.control_rate
    threshold = (
        audit_set.calibration_threshold
        if payload.calibration_threshold is None
        else payload.calibration_threshold
    )
    try:
        added = services.control_settings_update(
            audit_set=audit_set, by=request.user, rate=rate, threshold=threshold
        )
    except services.ControlSettingRefused as refusal:
        raise FieldInvalid(f"body.{refusal.field}", str(refusal)) from None
    return {"added": added, **_controls_out(audit_set)}


@api.post(
    "/sets/{set_id}/controls",
    response={200: ControlsMarkOut, **refusals(403, 404, 422)},
    tags=["review"],
    url_name="controls-mark",
)
def controls_mark(request: HttpRequest, set_id: int, payload: ControlsMark) -> dict:
    """Make these adjudicated claims controls (`control: false`: no longer controls);
    `changed` counts the claims that changed, the rest were already so or have no gold."""
    audit_set = access.get_set_for_lead(request, set_id)
    changed = services.controls_mark(
        audit_set=audit_set, claim_ids=payload.claims, by=request.user, control=payload.control
    )
    return {"changed": changed, **_controls_out(audit_set)}


# --------------------------------------------------------------------- adjudication queue


class QueueSheet(Schema):
    letter: str
    reviewer: str | None
    judgment: str
    active_seconds: int | None


class QueueRow(Schema):
    claim: int
    severity: int
    severity_label: str
    answer: str
    atomic: bool
    snippet: str
    system: str
    machine_label: str | None
    sheets: list[QueueSheet]


class QueueOut(Schema):
    anonymous: bool
    items: list[QueueRow]
    next_offset: int | None


@api.get(
    "/sets/{set_id}/adjudication",
    response={200: QueueOut, **refusals(403, 404, 422)},
    tags=["review"],
    url_name="adjudication",
)
def adjudication_queue(request: HttpRequest, set_id: int, query: Query[QueueQuery]) -> dict:
    """The claims waiting for a lead, most severe first, as the adjudication queue page
    lists them under the same filters: only claims whose sheets are all in, none the
    caller still reviews, reviewers named only where adjudication is not anonymous."""
    audit_set = access.get_set_for_lead(request, set_id)
    filters = {
        "severity": query.severity,
        "judgment": query.judgment,
        "label": query.label,
        "system": query.system,
        "fast": "" if query.fast is None else str(query.fast).lower(),
    }
    filterset = AdjudicationQueueFilter(
        filters,
        queryset=selectors.adjudication_queue(audit_set=audit_set, viewer=request.user),
        audit_set=audit_set,
    )
    if not filterset.is_valid():
        problems = "; ".join(
            f"query.{name}: {' '.join(errors)}" for name, errors in filterset.errors.items()
        )
        raise HttpError(422, f"Invalid request: {problems}")
    rows = list(filterset.qs[query.offset : query.offset + query.limit + 1])
    more = len(rows) > query.limit
    anonymous = audit_set.anonymous_adjudication
    letters = selectors.sheet_letters(audit_set=audit_set)
    return {
        "anonymous": anonymous,
        "items": [
            _queue_row(claim, anonymous=anonymous, letters=letters) for claim in rows[: query.limit]
        ],
        "next_offset": query.offset + query.limit if more else None,
    }


def _queue_row(claim: Any, *, anonymous: bool, letters: dict[int, str]) -> dict:
    return {
        "claim": claim.pk,
        "severity": claim.severity,
        "severity_label": Severity(claim.severity).label,
        "answer": claim.answer.external_id or f"#{claim.answer_id}",
        "atomic": claim.parent_id is not None,
        "snippet": claim.snippet,
        "system": claim.system,
        "machine_label": claim.label,
        "sheets": [
            {
                "letter": letters.get(sheet.reviewer_id) or judgments.sheet_letter(index),
                "reviewer": None if anonymous else sheet.reviewer.username,
                "judgment": sheet.judgment,
                "active_seconds": sheet.active_seconds,
            }
            for index, sheet in enumerate(claim.submitted_sheets)
        ],
    }


# -------------------------------------------------------------------------------- compare


class RunRef(Schema):
    key: str
    name: str


class RunClaimOut(Schema):
    claim: int
    question_id: str
    text: str
    judgment: str | None
    provisional: bool


class PairOut(Schema):
    question_id: str
    status: str
    score: float | None
    a: RunClaimOut
    b: RunClaimOut


class CompareOut(Schema):
    a: RunRef
    b: RunRef
    runs: list[RunRef]
    provisional: bool
    # Each metric's change from run A to run B (comparison.MetricDelta).
    deltas: list[dict[str, Any]]
    pairs: list[PairOut]
    appeared: list[RunClaimOut]
    vanished: list[RunClaimOut]
    unanswered_by_b: list[RunClaimOut]
    unanswered_by_a: list[RunClaimOut]


def _run_claim(claim: comparison.RunClaim) -> dict:
    return {
        "claim": claim.claim_id,
        "question_id": claim.question_id,
        "text": claim.text,
        "judgment": claim.judgment,
        "provisional": claim.label.provisional,
    }


@api.get(
    "/sets/{set_id}/compare",
    response={200: CompareOut, **refusals(403, 404, 422)},
    tags=["agreement and release"],
    url_name="compare",
)
def compare(request: HttpRequest, set_id: int, a: str = "", b: str = "") -> dict:
    """Run A (before) against run B (after), as on the compare page: metric changes and the
    claims paired by wording. A run is `system:<name>` or `import:<id>` (see `runs`); left
    out, the page's default pair: the two most recently imported systems."""
    audit_set = access.get_set_for_lead(request, set_id)
    if not (a and b):
        defaults = selectors.compare_defaults(audit_set=audit_set)
        if defaults is None:
            raise FieldInvalid("query.a", "name two runs to compare.")
        a, b = a or defaults[0], b or defaults[1]
    try:
        compared = selectors.run_comparison(audit_set=audit_set, a=a, b=b, viewer=request.user)
    except selectors.UnknownRun as unknown:
        raise HttpError(404, f"No run “{unknown}” in this set.") from None
    except selectors.SameRun as same:
        raise FieldInvalid("query.b", str(same)) from None
    result = compared.result
    return {
        "a": {"key": compared.a.key, "name": compared.a.name},
        "b": {"key": compared.b.key, "name": compared.b.name},
        "runs": [
            {"key": run.key, "name": run.name} for run in selectors.set_runs(audit_set=audit_set)
        ],
        "provisional": result.provisional,
        "deltas": [plain(delta) for delta in result.deltas],
        "pairs": [
            {
                "question_id": pair.question_id,
                "status": pair.status,
                "score": pair.score,
                "a": _run_claim(pair.a),
                "b": _run_claim(pair.b),
            }
            for pair in result.pairs
        ],
        "appeared": [_run_claim(claim) for claim in result.appeared],
        "vanished": [_run_claim(claim) for claim in result.vanished],
        "unanswered_by_b": [_run_claim(claim) for claim in result.unanswered_by_b],
        "unanswered_by_a": [_run_claim(claim) for claim in result.unanswered_by_a],
    }
