"""The API's suggestions: a model pushes its suggestions for a set's claims (a JSON body or
the upload's file), and a lead reads the set's sources and one source's suggestions."""

from __future__ import annotations

import dataclasses
from typing import Any

from django.http import HttpRequest
from ninja import File, Form, Query, Schema
from ninja.errors import HttpError
from ninja.files import UploadedFile
from ninja.responses import Status
from pydantic import Field

from audit import problems, services
from audit.api.base import MAX_LIMIT, api, cursor_page, refusals
from audit.api.jobs import JobOut, job_out
from audit.claims import claim_name
from audit.formats import FormatError
from audit.formats.reading import FileTooLarge
from audit.models import Job, SuggestionSource
from audit.selectors import suggestions as suggestion_selectors
from audit.suggestions import SourceKey, Suggested
from audit.views import access


class SuggestionsIn(Schema):
    name: str = Field(description="The model's name, as the set's sources list it.")
    version: str = Field(description="Its version: a new version is a new source.")
    description: str = ""
    suggestions: list[Any] = Field(
        description="One object per claim, in the suggestions file's format."
    )


class SuggestionsPushOut(Schema):
    source: str
    name: str
    version: str
    created: int
    replaced: int


class SourceOut(Schema):
    key: str
    name: str
    version: str
    kind: str


class EvidenceOut(Schema):
    passage: int
    start: int
    end: int
    score: float | None


class WordsOut(Schema):
    start: int
    end: int
    text: str
    score: float | None


class SuggestionOut(Schema):
    claim: int
    claim_name: str
    source: str
    name: str
    version: str
    judgment: str
    judgment_score: float | None
    evidence: list[EvidenceOut]
    unsupported: list[WordsOut]
    wrong_citation_passage: int | None
    wrong_citation_score: float | None


class SuggestionPage(Schema):
    items: list[SuggestionOut]
    next_cursor: str | None


def _refused(error: FormatError, prefix: str) -> problems.FieldInvalid:
    """A refused record as a field error: `body.suggestions[3].evidence[0].end`."""
    parts = [prefix] if prefix else []
    if error.location and not error.location.startswith("line "):
        parts.append(error.location)
    if error.field:
        parts.append(error.field)
    field = ".".join(parts) or "body"
    place = f"{error.location}: " if error.location.startswith("line ") else ""
    return problems.FieldInvalid(field, place + error.message)


def _answer(result) -> Status | dict:
    if isinstance(result, Job):
        return Status(202, job_out(result))
    return dataclasses.asdict(result)


@api.post(
    "/sets/{set_id}/suggestions",
    response={200: SuggestionsPushOut, 202: JobOut, **refusals(403, 404, 422)},
    tags=["suggestions"],
    url_name="suggestions-push",
)
def suggestions_push(
    request: HttpRequest,
    set_id: int,
    payload: SuggestionsIn,
    run_as_job: bool = Query(False, alias="async"),
) -> Status | dict:
    """A model's suggestions for the set's claims, all or nothing: the source (name,
    version) is made or found and its suggestions on the claims named replace what it had.
    Up to WEB_DIRECT_MAX_SUGGESTIONS records are stored at once (200); more, or any with
    `?async=true`, are queued as a job (202: follow it at /jobs/{id})."""
    audit_set = access.get_set_for_lead(request, set_id)
    try:
        result = services.suggestions_push(
            audit_set=audit_set,
            user=request.user,
            name=payload.name,
            version=payload.version,
            description=payload.description,
            records=payload.suggestions,
            as_job=True if run_as_job else None,
        )
    except FormatError as error:
        raise _refused(error, "body") from None
    return _answer(result)


@api.post(
    "/sets/{set_id}/suggestions/file",
    response={200: SuggestionsPushOut, 202: JobOut, **refusals(403, 404, 413, 422)},
    tags=["suggestions"],
    url_name="suggestions-file",
)
def suggestions_file(
    request: HttpRequest,
    set_id: int,
    file: File[UploadedFile],
    name: Form[str],
    version: Form[str],
    description: Form[str] = "",
) -> Status | dict:
    """The same in the upload's JSONL file (multipart `file`, `name`, `version`): a file up
    to WEB_DIRECT_MAX_VERDICT_BYTES is stored at once (200), a bigger one by a job (202).
    A refused line is a 422 naming the line and field."""
    audit_set = access.get_set_for_lead(request, set_id)
    try:
        result = services.suggestions_upload(
            audit_set=audit_set,
            user=request.user,
            name=name,
            version=version,
            description=description,
            upload=file,
        )
    except FileTooLarge as error:
        raise HttpError(413, str(error)) from None
    except FormatError as error:
        raise _refused(error, "file" if error.location else "body") from None
    return _answer(result)


@api.get(
    "/sets/{set_id}/suggestion-sources",
    response={200: list[SourceOut], **refusals(403, 404)},
    tags=["suggestions"],
    url_name="suggestion-sources",
)
def suggestion_sources(request: HttpRequest, set_id: int) -> list[dict]:
    """The set's sources of suggestions: the matcher, each judge run, each pushed model.
    Leads only: a reviewer sees suggestions on the review page, as the set shows them."""
    audit_set = access.get_set_for_lead(request, set_id)
    return [
        {"key": str(s.key), "name": s.name, "version": s.version, "kind": s.kind}
        for s in suggestion_selectors.sources(audit_set)
    ]


@api.delete(
    "/sets/{set_id}/suggestion-sources/{source_id}",
    response={204: None, **refusals(403, 404, 409)},
    tags=["suggestions"],
    url_name="suggestion-source-delete",
)
def suggestion_source_delete(request: HttpRequest, set_id: int, source_id: int) -> Status:
    """Delete a pushed source (`source:<id>` in the list) and its suggestions, as the
    *Suggestion sources* page does. 409 once reviewers were shown its suggestions: it is
    kept with the record of what they saw. A set that pre-highlights with it goes back to
    the matcher. The matcher and judge runs are not pushed sources: 404."""
    audit_set = access.get_set_for_lead(request, set_id)
    source = SuggestionSource.objects.filter(audit_set=audit_set, pk=source_id).first()
    if source is None:
        raise HttpError(404, "This set has no pushed source of suggestions with that id.")
    try:
        services.source_delete(source=source, user=request.user)
    except services.SourceInUse as refusal:
        raise HttpError(409, str(refusal)) from None
    except SuggestionSource.DoesNotExist:
        raise HttpError(404, "This set has no pushed source of suggestions with that id.") from None
    return Status(204, None)


def _spans(spans, *, claim: bool) -> list[dict]:
    if claim:
        return [{"start": s.start, "end": s.end, "text": s.text, "score": s.score} for s in spans]
    return [{"passage": s.passage, "start": s.start, "end": s.end, "score": s.score} for s in spans]


@api.get(
    "/sets/{set_id}/suggestions",
    response={200: SuggestionPage, **refusals(403, 404, 422)},
    tags=["suggestions"],
    url_name="suggestion-list",
)
def suggestion_list(
    request: HttpRequest,
    set_id: int,
    source: str = Query("matcher", description="A source's key from /suggestion-sources."),
    cursor: str = "",
    limit: int = Query(50, ge=1, le=MAX_LIMIT),
) -> dict:
    """One source's suggestions, a claim each, in claim order; leads only."""
    audit_set = access.get_set_for_lead(request, set_id)
    key = SourceKey.parse(source)
    info = suggestion_selectors.source_info(audit_set, key) if key else None
    if info is None:
        raise HttpError(404, f"No source {source[:100]!r} in this set.")
    claims = suggestion_selectors.suggested_claims(audit_set, key).select_related("answer")
    page = cursor_page(claims, cursor=cursor, limit=limit, row=lambda claim: claim)
    found = suggestion_selectors.suggestions(
        audit_set, key, claim_ids=[claim.pk for claim in page["items"]]
    )
    items = []
    for claim in page["items"]:
        suggested: Suggested | None = found.get(claim.pk)
        if suggested is None:
            continue
        items.append(
            {
                "claim": claim.pk,
                "claim_name": claim_name(
                    answer_id=claim.answer.external_id,
                    order=claim.order,
                    parent_order=claim.parent_order if claim.parent_id else None,
                ),
                "source": str(key),
                "name": info.name,
                "version": info.version,
                "judgment": suggested.judgment,
                "judgment_score": suggested.judgment_score,
                "evidence": _spans(suggested.evidence, claim=False),
                "unsupported": _spans(suggested.unsupported, claim=True),
                "wrong_citation_passage": suggested.wrong_citation_passage,
                "wrong_citation_score": suggested.wrong_citation_score,
            }
        )
    return {"items": items, "next_cursor": page["next_cursor"]}
