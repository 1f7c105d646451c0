"""The API's results: machine verdicts pushed, the agreement figures, the release report
and decision (from the one reader in audit.selectors.decision), and exports."""

from __future__ import annotations

import dataclasses
from enum import StrEnum
from typing import Any

from django.http import HttpRequest, StreamingHttpResponse
from django.utils.cache import patch_cache_control
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from ninja import File, Query, Schema
from ninja.errors import HttpError
from ninja.files import UploadedFile
from ninja.responses import Status
from pydantic import BaseModel, ConfigDict

from audit import selectors, services
from audit.api.base import api, plain, refusals, streamed
from audit.api.jobs import JobOut, job_out
from audit.formats import FormatError
from audit.formats.reading import FileTooLarge
from audit.models import Job
from audit.selectors import dashboard
from audit.services.exports import EXPORT_FORMATS, export_stream
from audit.views import access

ExportFormat = StrEnum("ExportFormat", {name: name for name in EXPORT_FORMATS})


# ---------------------------------------------------------------- verdicts and agreement


class VerdictsOut(Schema):
    judges: list[str]
    created: int
    replaced: int


class Figures(BaseModel):
    """A report whose nested figures follow the metrics modules; the members named here are
    always present, and the rest are passed on as they are (a plain pydantic model: ninja's
    Schema reads a dict through its getter, which drops the members not named)."""

    model_config = ConfigDict(extra="allow")


class AgreementOut(Figures):
    system: str
    sheets: int
    claims: int
    gold: int
    full: Any
    binary: Any
    evidence_jaccard: Any
    evidence_f1: Any
    unsupported_f1: Any
    raters: list[dict[str, Any]]


class ReportOut(Figures):
    criteria: list[Any]
    criteria_error: str | None
    overall: Any
    systems: list[dict[str, Any]]


class DecisionOut(Figures):
    run: str | None


@api.post(
    "/sets/{set_id}/verdicts",
    response={200: VerdictsOut, 202: JobOut, **refusals(403, 404, 413, 422)},
    tags=["verdicts"],
    url_name="verdicts",
)
def verdicts_push(
    request: HttpRequest,
    set_id: int,
    file: File[UploadedFile],
    run_as_job: bool = Query(False, alias="async"),
) -> Status | dict:
    """An automatic judge's verdicts, in the verdicts upload's format; all or nothing. A
    small file is stored at once (200, the summary, up to WEB_IMPORT_MAX_VERDICTS); a big
    one, or any with `?async=true`, is queued as a job with no bound on its verdicts (202,
    the job: follow it at /jobs/{id}; a refused line fails it, naming the line, and
    nothing is stored)."""
    audit_set = access.get_set_for_lead(request, set_id)
    try:
        result = services.verdicts_push(
            audit_set=audit_set, upload=file, user=request.user, as_job=run_as_job
        )
    except FileTooLarge as error:
        # Too large, as for an import: 413, not a refusal of its content.
        raise HttpError(413, str(error)) from None
    except FormatError as error:
        raise HttpError(422, str(error)) from None
    if isinstance(result, Job):
        return Status(202, job_out(result))
    return dataclasses.asdict(result)


@api.get(
    "/sets/{set_id}/agreement",
    response={200: AgreementOut, **refusals(403, 404, 422)},
    tags=["agreement and release"],
    url_name="agreement",
)
def agreement(request: HttpRequest, set_id: int, system: str = "") -> dict:
    """The agreement dashboard's figures: reviewer agreement, evidence overlap, raters
    against gold; one system's answers with `system`."""
    audit_set = access.get_set_for_lead(request, set_id)
    if system and system not in selectors.set_systems(audit_set=audit_set):
        raise HttpError(404, "No such system in this set.")
    board = dashboard.agreement_dashboard(audit_set=audit_set, system=system)
    return {
        "system": board.system,
        "sheets": board.sheets,
        "claims": board.claims,
        "gold": board.gold,
        "full": plain(board.full),
        "binary": plain(board.binary),
        "evidence_jaccard": plain(board.evidence_jaccard),
        "evidence_f1": plain(board.evidence_f1),
        "unsupported_f1": plain(board.unsupported_f1),
        "raters": [
            {"name": r.name, "kind": r.kind, "full": plain(r.full), "binary": plain(r.binary)}
            for r in board.raters
        ],
    }


# ------------------------------------------------------------------------------- release


@api.get(
    "/sets/{set_id}/report",
    response={200: ReportOut, **refusals(403, 404, 422)},
    tags=["agreement and release"],
    url_name="report",
)
def report(request: HttpRequest, set_id: int) -> dict:
    """The release report per system: metrics and the decision, as on the report page."""
    audit_set = access.get_set_for_lead(request, set_id)
    overview = selectors.release_overview(audit_set=audit_set, viewer=request.user)
    return {
        "criteria": [criterion.describe() for criterion in overview.criteria],
        "criteria_error": overview.criteria_error,
        **overview.provenance.as_dict(),
        "overall": plain(overview.overall),
        "systems": [
            {
                "system": release.system,
                "decision": release.badge,
                "metrics": plain(release.summary),
                # Only with an accepted judge: the same with its verdicts on unjudged claims.
                "with_accepted_judge": {
                    "decision": release.judged.badge,
                    "claims_filled": release.judged.filled,
                    "metrics": plain(release.judged.summary),
                }
                if release.judged
                else None,
            }
            for release in overview.systems
        ],
    }


@api.get(
    "/sets/{set_id}/decision",
    response={200: DecisionOut, **refusals(403, 404, 422)},
    tags=["agreement and release"],
    url_name="decision",
)
def decision(
    request: HttpRequest,
    set_id: int,
    system: str,
    run: str | None = None,
    with_judge: bool = False,
) -> dict:
    """pass, fail or provisional (some claim has no gold yet) for one system, with each
    criterion's result and the claims that fail it; "none" when the set has no criteria.
    `run` names one run of the system; without it, the run pushed last. `system` in the
    answer is the run's key (name@run), `run` its label.
    With `with_judge=true` the set's accepted automatic judge stands for the claims no human
    judged; `judge` then names it and each named claim says whose verdict it carries."""
    audit_set = access.get_set_for_lead(request, set_id)
    found = selectors.system_run(audit_set=audit_set, system=system, run=run)
    if found is None:
        named = f"run “{run}” of system “{system}”" if run is not None else f"system “{system}”"
        raise HttpError(404, f"No {named} in this set.")
    return {
        **selectors.decision_report(
            audit_set=audit_set, system=found.key, viewer=request.user, with_judge=with_judge
        ),
        "run": found.run,
    }


# ------------------------------------------------------------------------------- exports


@api.get(
    "/sets/{set_id}/exports/{fmt}",
    response=refusals(403, 404, 422),
    openapi_extra=streamed(
        "The export file, in its format.", *(spec.content_type for spec in EXPORT_FORMATS.values())
    ),
    tags=["exports"],
    url_name="export",
)
def export(request: HttpRequest, set_id: int, fmt: ExportFormat) -> StreamingHttpResponse:
    """The set's labelled data in any export format, streamed as it is read (leads)."""
    audit_set = access.get_set_for_lead(request, set_id)
    spec = EXPORT_FORMATS[str(fmt)]
    response = StreamingHttpResponse(
        export_stream(audit_set=audit_set, fmt=str(fmt), viewer=request.user),
        content_type=spec.content_type,
    )
    filename = f"{slugify(audit_set.name) or 'set'}-{fmt}.{spec.extension}"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    patch_cache_control(response, private=True, no_store=True)
    return response
