"""The API's automatic judges of a set: list, set up, new version, threshold, runs (a job),
a run's verdicts, calibration and acceptance, each through the judge pages' own services and
selectors, so the secrets and egress rules and who may act are the same at both doors."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

from django.db import IntegrityError
from django.http import HttpRequest
from ninja import Query, Schema
from ninja.errors import HttpError
from ninja.responses import Status
from pydantic import Field

from audit import selectors, services
from audit.api.base import MAX_LIMIT, api, refusals
from audit.judge_calibration import Calibration, Interval, meets
from audit.models import Claim, Judge, JudgeRun, JudgeVersion
from audit.problems import FieldInvalid
from audit.selectors import judges as judge_selectors
from audit.services import JobRefused, jobs_reap_stale
from audit.services import judges as judge_services
from audit.views import access

MAX_KEY = 2**63 - 1
Key = Annotated[int, Field(ge=1, le=MAX_KEY)]


class JudgeIn(Schema):
    name: str = Field(min_length=1, max_length=100)
    base_url: str = Field(min_length=1, max_length=500)
    model: str = Field(min_length=1, max_length=200)
    # The name of the environment variable holding the key, never the key itself.
    api_key_env: str = Field("", max_length=100)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_concurrency: int = Field(4, ge=1, le=32)
    timeout_seconds: float = Field(60.0, ge=1.0, le=600.0)
    price_per_million: Decimal | None = Field(None, ge=0, max_digits=10, decimal_places=4)
    template: str = Field("", max_length=100_000)


class JudgePatch(Schema):
    """A new version: only the fields named change; a new template, model or temperature
    makes a new version, as saving the page's form does."""

    name: str | None = Field(None, min_length=1, max_length=100)
    base_url: str | None = Field(None, min_length=1, max_length=500)
    model: str | None = Field(None, min_length=1, max_length=200)
    api_key_env: str | None = Field(None, max_length=100)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    max_concurrency: int | None = Field(None, ge=1, le=32)
    timeout_seconds: float | None = Field(None, ge=1.0, le=600.0)
    price_per_million: Decimal | None = Field(None, ge=0, max_digits=10, decimal_places=4)
    template: str | None = Field(None, min_length=1, max_length=100_000)


class ThresholdIn(Schema):
    min_kappa: float = Field(ge=-1.0, le=1.0)
    min_gold: int = Field(ge=1, le=1_000_000)


class RunIn(Schema):
    subset: JudgeRun.Subset = JudgeRun.Subset.ALL
    system: str = Field("", max_length=200)


class AcceptIn(Schema):
    version: Key | None = None


class VersionOut(Schema):
    number: int
    model: str
    temperature: float
    accepted: bool


class JudgeOut(Schema):
    id: int
    set_id: int
    name: str
    base_url: str
    model: str
    # The variable's name; its value is never read out.
    api_key_env: str
    temperature: float
    max_concurrency: int
    timeout_seconds: float
    price_per_million: Decimal | None
    min_kappa: float | None
    min_gold: int | None
    threshold_locked_at: datetime | None
    current_version: int
    template: str
    versions: list[VersionOut]
    # Why the judge cannot run now ("" when it can), as the page warns.
    refusal: str


class VerdictOut(Schema):
    claim: int
    judgment: str
    answers_question: bool | None
    evidence: list
    unsupported_spans: list
    wrong_citation_passage: int | None
    rationale: str
    error: str
    attempts: int


class RunOut(Schema):
    id: int
    judge: int
    version: int
    subset: str
    system: str
    claims: int
    job: int | None
    status: str | None
    done: int
    verdicts: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    created_at: datetime
    items: list[VerdictOut]
    limit: int
    offset: int


class RunQuery(Schema):
    limit: int = Field(100, ge=1, le=MAX_LIMIT)
    offset: int = Field(0, ge=0, le=MAX_KEY // 2)


class CalibrationQuery(Schema):
    version: Key | None = None


class CalibrationOut(Schema):
    version: int
    threshold_set: bool
    threshold_changed_after_lock: bool
    min_kappa: float | None
    min_gold: int | None
    # The figures stay empty until a threshold is written, as on the page.
    n_gold: int | None = None
    kappa: float | None = None
    kappa_low: float | None = None
    kappa_high: float | None = None
    accuracy: float | None = None
    accuracy_low: float | None = None
    accuracy_high: float | None = None
    meets_threshold: bool | None = None
    why: str = ""
    accepted: bool


class AcceptOut(Schema):
    judge: int
    version: int
    n_gold: int
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None


# ------------------------------------------------------------------------------ lookups


def _judge_for_lead(request: HttpRequest, judge_id: int) -> Judge:
    judge = judge_selectors.judge_of_set(pk=judge_id)
    if judge is None:
        raise HttpError(404, "No such judge.")
    # The set lookup decides whether this caller may see the judge at all (404 otherwise).
    judge.audit_set = access.get_set_for_lead(request, judge.audit_set_id)
    return judge


def _run_for_lead(request: HttpRequest, run_id: int) -> JudgeRun:
    run = JudgeRun.objects.select_related("version", "job").filter(pk=run_id).first()
    if run is None:
        raise HttpError(404, "No such run.")
    run.judge = _judge_for_lead(request, run.judge_id)
    return run


def _version(judge: Judge, number: int | None) -> JudgeVersion:
    versions = judge.versions.select_related("acceptance")
    version = (
        versions.filter(number=number).first()
        if number is not None
        else versions.order_by("-number").first()
    )
    if version is None:
        raise HttpError(404, "No such version.")
    return version


def _judge_out(judge: Judge) -> dict:
    current = judge_services.judge_current_version(judge)
    return {
        "id": judge.pk,
        "set_id": judge.audit_set_id,
        "name": judge.name,
        "base_url": judge.base_url,
        "model": judge.model,
        "api_key_env": judge.api_key_env,
        "temperature": judge.temperature,
        "max_concurrency": judge.max_concurrency,
        "timeout_seconds": judge.timeout_seconds,
        "price_per_million": judge.price_per_million,
        "min_kappa": judge.min_kappa,
        "min_gold": judge.min_gold,
        "threshold_locked_at": judge.threshold_locked_at,
        "current_version": current.number,
        "template": current.template,
        "versions": [
            {
                "number": version.number,
                "model": version.model,
                "temperature": version.temperature,
                "accepted": hasattr(version, "acceptance"),
            }
            for version in judge.versions.select_related("acceptance").order_by("number")
        ],
        "refusal": judge_services.judge_refusal(judge),
    }


def _refused(refusal: judge_services.JudgeRefused) -> FieldInvalid:
    return FieldInvalid(f"body.{refusal.field}", str(refusal))


# ------------------------------------------------------------------------------ judges


@api.get(
    "/sets/{set_id}/judges",
    response={200: list[JudgeOut], **refusals(403, 404, 422)},
    tags=["judges"],
    url_name="judges",
)
def judges(request: HttpRequest, set_id: int) -> list[dict]:
    """The set's judges, as the judges page lists them."""
    audit_set = access.get_set_for_lead(request, set_id)
    return [_judge_out(judge) for judge in judge_selectors.judges_of_set(audit_set=audit_set)]


@api.post(
    "/sets/{set_id}/judges",
    response={201: JudgeOut, **refusals(403, 404, 409, 422)},
    tags=["judges"],
    url_name="judges-create",
)
def judge_create(request: HttpRequest, set_id: int, payload: JudgeIn) -> Status:
    """Set up a judge with its first version (the default template when none is given)."""
    audit_set = access.get_set_for_lead(request, set_id)
    fields = payload.dict(exclude={"template"})
    try:
        judge = judge_services.judge_create(
            audit_set=audit_set, fields=fields, template=payload.template, user=request.user
        )
    except judge_services.JudgeRefused as refusal:
        raise _refused(refusal) from None
    except IntegrityError:
        raise HttpError(409, "This set already has a judge of that name.") from None
    return Status(201, _judge_out(judge))


@api.get(
    "/judges/{judge_id}",
    response={200: JudgeOut, **refusals(403, 404, 422)},
    tags=["judges"],
    url_name="judge",
)
def judge(request: HttpRequest, judge_id: int) -> dict:
    return _judge_out(_judge_for_lead(request, judge_id))


@api.post(
    "/judges/{judge_id}/versions",
    response={200: JudgeOut, **refusals(403, 404, 409, 422)},
    tags=["judges"],
    url_name="judge-version",
)
def judge_version(request: HttpRequest, judge_id: int, payload: JudgePatch) -> dict:
    """Change a judge's settings; a new template, model or temperature makes a new version."""
    judge = _judge_for_lead(request, judge_id)
    changes = payload.dict(exclude_unset=True)
    # Only the price may be cleared; null for any other field is refused, naming it.
    cleared = sorted(name for name, value in changes.items() if value is None)
    if any(name != "price_per_million" for name in cleared):
        names = ", ".join(f"body.{name}" for name in cleared if name != "price_per_million")
        raise FieldInvalid(names, "may not be null.")
    template = changes.pop("template", None)
    if template is None:
        template = judge_services.judge_current_version(judge).template
    try:
        judge_services.judge_update(
            judge=judge, fields=changes, template=template, user=request.user
        )
    except judge_services.JudgeRefused as refusal:
        raise _refused(refusal) from None
    except IntegrityError:
        raise HttpError(409, "This set already has a judge of that name.") from None
    judge.refresh_from_db()
    return _judge_out(judge)


@api.put(
    "/judges/{judge_id}/threshold",
    response={200: JudgeOut, **refusals(403, 404, 422)},
    tags=["judges"],
    url_name="judge-threshold",
)
def judge_threshold(request: HttpRequest, judge_id: int, payload: ThresholdIn) -> dict:
    """Write down the acceptance threshold; after the first run it may only tighten."""
    judge = _judge_for_lead(request, judge_id)
    try:
        judge_services.judge_threshold_set(
            judge=judge, min_kappa=payload.min_kappa, min_gold=payload.min_gold, user=request.user
        )
    except judge_services.JudgeError as refusal:
        raise FieldInvalid("body", str(refusal)) from None
    judge.refresh_from_db()
    return _judge_out(judge)


# ------------------------------------------------------------------------------ runs


def _run_out(run: JudgeRun, limit: int = 100, offset: int = 0) -> dict:
    cost = judge_selectors.run_cost(run=run)
    progress = selectors.job_progress(run.job) if run.job else None
    verdicts = run.verdicts.order_by("pk")
    return {
        "id": run.pk,
        "judge": run.judge_id,
        "version": run.version.number,
        "subset": run.subset,
        "system": run.system,
        "claims": len(run.claim_ids),
        "job": run.job_id,
        "status": run.job.status if run.job else None,
        "done": progress.done if progress else 0,
        "verdicts": cost.judged,
        "errors": cost.errors,
        "prompt_tokens": cost.prompt_tokens,
        "completion_tokens": cost.completion_tokens,
        "created_at": run.created_at,
        "items": [
            {
                "claim": verdict.claim_id,
                "judgment": verdict.judgment,
                "answers_question": verdict.answers_question,
                "evidence": verdict.evidence,
                "unsupported_spans": verdict.unsupported_spans,
                "wrong_citation_passage": verdict.wrong_citation_passage,
                "rationale": verdict.rationale,
                "error": verdict.error,
                "attempts": verdict.attempts,
            }
            for verdict in verdicts[offset : offset + limit]
        ],
        "limit": limit,
        "offset": offset,
    }


@api.post(
    "/judges/{judge_id}/runs",
    response={202: RunOut, **refusals(403, 404, 409, 422)},
    tags=["judges"],
    url_name="judge-run-start",
)
def judge_run(request: HttpRequest, judge_id: int, payload: RunIn) -> Status:
    """Queue a run of the judge's current version on a subset of the set's claims (a job)."""
    judge = _judge_for_lead(request, judge_id)
    if payload.subset == JudgeRun.Subset.SYSTEM and not payload.system:
        raise FieldInvalid("body.system", "choose the system.")
    try:
        run = judge_services.judge_run_start(
            judge=judge, subset=payload.subset, system=payload.system, user=request.user
        )
    except judge_services.JudgeError as refusal:
        raise HttpError(409, str(refusal)) from None
    except JobRefused as refusal:
        raise HttpError(409, str(refusal)) from None
    run = JudgeRun.objects.select_related("version", "job").get(pk=run.pk)
    return Status(202, _run_out(run))


@api.get(
    "/judge-runs/{run_id}",
    response={200: RunOut, **refusals(403, 404, 422)},
    tags=["judges"],
    url_name="judge-run",
)
def judge_run_read(request: HttpRequest, run_id: int, query: Query[RunQuery]) -> dict:
    """A run: its job's status, counts, and a page of its verdicts (errors included)."""
    jobs_reap_stale()
    run = _run_for_lead(request, run_id)
    return _run_out(run, limit=query.limit, offset=query.offset)


# ------------------------------------------------------------------------------ calibration


def _low_high(interval: Interval) -> tuple[float | None, float | None]:
    return interval.low, interval.high


@api.get(
    "/judges/{judge_id}/calibration",
    response={200: CalibrationOut, **refusals(403, 404, 422)},
    tags=["judges"],
    url_name="judge-calibration",
)
def judge_calibration(request: HttpRequest, judge_id: int, query: Query[CalibrationQuery]) -> dict:
    """A version's agreement with gold, as the calibration page shows it (the current version
    unless one is named). The figures stay hidden until a threshold is written."""
    judge = _judge_for_lead(request, judge_id)
    version = _version(judge, query.version)
    out: dict = {
        "version": version.number,
        "threshold_set": judge.has_threshold,
        "threshold_changed_after_lock": judge.threshold_changes.filter(after_lock=True).exists(),
        "min_kappa": judge.min_kappa,
        "min_gold": judge.min_gold,
        "accepted": hasattr(version, "acceptance"),
    }
    if judge.has_threshold:
        overall, _splits = judge_selectors.judge_calibration(version=version)
        ok, why = meets(judge_services.judge_threshold(judge), overall)
        out.update(_figures(overall), meets_threshold=ok, why=why)
    return out


def _figures(calibration: Calibration) -> dict:
    kappa_low, kappa_high = _low_high(calibration.kappa_ci)
    accuracy_low, accuracy_high = _low_high(calibration.accuracy_ci)
    return {
        "n_gold": calibration.n,
        "kappa": calibration.report.kappa,
        "kappa_low": kappa_low,
        "kappa_high": kappa_high,
        "accuracy": calibration.report.accuracy,
        "accuracy_low": accuracy_low,
        "accuracy_high": accuracy_high,
    }


@api.post(
    "/judges/{judge_id}/accept",
    response={200: AcceptOut, **refusals(403, 404, 409, 422)},
    tags=["judges"],
    url_name="judge-accept",
)
def judge_accept(request: HttpRequest, judge_id: int, payload: AcceptIn) -> dict:
    """Accept a version (the current one unless named) if it meets the written threshold; it
    replaces any version accepted before in the set."""
    judge = _judge_for_lead(request, judge_id)
    version = _version(judge, payload.version)
    try:
        acceptance = judge_services.judge_accept(version=version, user=request.user)
    except judge_services.JudgeError as refusal:
        raise HttpError(409, str(refusal)) from None
    return {
        "judge": judge.pk,
        "version": version.number,
        "n_gold": acceptance.n_gold,
        "kappa": acceptance.kappa,
        "kappa_low": acceptance.kappa_low,
        "kappa_high": acceptance.kappa_high,
    }


# ------------------------------------------------------------------------------ answering


class AnsweringIn(Schema):
    value: bool = True


class AnsweringOut(Schema):
    claim: int
    answers_question: bool
    changed: bool


@api.put(
    "/claims/{claim_id}/answers-question",
    response={200: AnsweringOut, **refusals(403, 404, 422)},
    tags=["answers and claims"],
    url_name="claim-answers-question",
)
def claim_answers_question(request: HttpRequest, claim_id: int, payload: AnsweringIn) -> dict:
    """Mark a top-level claim as answering the question (or unmark it), as the claims list's
    bulk mark does: the criterion "no claim that answers the question is backed only
    partially" reads it."""
    claim = Claim.objects.select_related("answer").filter(pk=claim_id).first()
    if claim is None:
        raise HttpError(404, "No such claim.")
    # The set lookup decides whether this caller may see the claim at all (404 otherwise).
    audit_set = access.get_set_for_lead(request, claim.answer.audit_set_id)
    if claim.parent_id is not None:
        raise FieldInvalid("claim_id", "only a top-level claim answers the question.")
    changed = services.claims_mark_answering(
        audit_set=audit_set, claim_ids=[claim.pk], value=payload.value
    )
    return {"claim": claim.pk, "answers_question": payload.value, "changed": bool(changed)}
