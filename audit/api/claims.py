"""The API's answers, claims, sheets and gold, each list paged by cursor, with what the
token's owner may see."""

from __future__ import annotations

import json
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.http import HttpRequest, StreamingHttpResponse
from django.utils.cache import patch_cache_control
from ninja import Query, Schema

from audit import selectors
from audit.api.base import MAX_LIMIT, api, cursor_page, refusals, streamed
from audit.claims import claim_name
from audit.models import ClaimCheck, ReviewStatus
from audit.roles import is_lead, leads
from audit.selectors import api as api_selectors
from audit.views import access

# The largest key a database column holds: a larger batch id is 422, not an overflow.
MAX_BATCH_ID = 2**63 - 1

ClaimStatus = StrEnum(
    "ClaimStatus",
    {code: code for code, _ in ReviewStatus.choices}
    | {s: s for s in api_selectors.MY_SHEET_STATUSES},
)
MachineLabel = StrEnum("MachineLabel", {code: code for code, _ in ClaimCheck.Label.choices})


# ------------------------------------------------------------------ answers, claims, sheets


class AnswerRow(Schema):
    id: int
    external_id: str
    question_id: str
    system: str
    run: str
    replaced_at: datetime | None
    replaced_by: int | None
    is_partial: bool


class AnswerPage(Schema):
    items: list[AnswerRow]
    next_cursor: str | None


class ClaimRow(Schema):
    id: int
    # "refund-a1 claim 1": the claim by its answer's id and place, as the pages name it.
    name: str
    answer: int
    answer_external_id: str | None
    system: str
    parent: int | None
    order: int
    text: str
    start: int | None
    end: int | None
    location: str
    is_uncited: bool
    label: str | None
    # A lead's rows carry `status`, a reviewer's `my_sheet`: never both.
    status: str | None = None
    my_sheet: str | None = None


class ClaimPage(Schema):
    items: list[ClaimRow]
    next_cursor: str | None


class SheetRow(Schema):
    id: int
    claim: int
    reviewer: str
    status: str
    judgment: str
    evidence: Any
    unsupported_assertions: Any
    verification_worthy: Any
    answers_question: Any
    notes: str
    active_seconds: int | None
    submitted_at: str | None


class SheetPage(Schema):
    items: list[SheetRow]
    next_cursor: str | None


class GoldOut(Schema):
    source: str
    judgment: str
    evidence: Any
    unsupported_assertions: Any
    verification_worthy: Any
    answers_question: Any


class ClaimOut(Schema):
    id: int
    name: str
    answer: int
    answer_external_id: str
    question_id: str
    system: str
    parent: int | None
    order: int
    text: str
    start: int | None
    end: int | None
    sheets: list[SheetRow]
    gold: GoldOut | None


def _answer_row(answer) -> dict:
    return {
        "id": answer.pk,
        "external_id": answer.external_id,
        "question_id": answer.question.external_id,
        "system": answer.system,
        "run": answer.run,
        # A later push of its run replaced it (by replaced_by) or left it out (null).
        "replaced_at": answer.replaced_at,
        "replaced_by": answer.replaced_by_id,
        "is_partial": answer.is_partial,
    }


@api.get(
    "/sets/{set_id}/answers",
    response={200: AnswerPage, **refusals(403, 404, 422)},
    tags=["answers and claims"],
    url_name="answer-list",
)
def answer_list(
    request: HttpRequest,
    set_id: int,
    system: str = "",
    cursor: str = "",
    limit: int = Query(50, ge=1, le=MAX_LIMIT),
) -> dict:
    audit_set = access.get_set_for_user(request, set_id)
    rows = api_selectors.api_answers(audit_set=audit_set, system=system)
    return cursor_page(rows, cursor=cursor, limit=limit, row=_answer_row)


def _claim_row(lead: bool):
    def row(claim) -> dict:
        return {
            "id": claim.pk,
            "answer": claim.answer_id,
            "answer_external_id": claim.answer_external_id,
            "name": claim_name(
                answer_id=claim.answer_external_id,
                order=claim.order,
                parent_order=claim.parent_order if claim.parent_id else None,
            ),
            "system": claim.system,
            "parent": claim.parent_id,
            "order": claim.order,
            "text": claim.text,
            "start": claim.start,
            "end": claim.end,
            "location": claim.location,
            "is_uncited": claim.is_uncited,
            "label": claim.label,
            ("status" if lead else "my_sheet"): claim.shown_status,
        }

    return row


@api.get(
    "/sets/{set_id}/claims",
    response={200: ClaimPage, **refusals(403, 404, 422)},
    # Unset: a row names `status` or `my_sheet`, as the caller may see.
    exclude_unset=True,
    tags=["answers and claims"],
    url_name="claim-list",
)
def claim_list(
    request: HttpRequest,
    set_id: int,
    status: ClaimStatus | None = None,
    system: str = "",
    label: MachineLabel | None = None,
    question: str = "",
    batch: int | None = Query(None, ge=1, le=MAX_BATCH_ID),
    updated_since: datetime | None = None,
    cursor: str = "",
    limit: int = Query(50, ge=1, le=MAX_LIMIT),
) -> dict:
    """A lead: every claim with its review status. A reviewer: the claims assigned to them,
    with `my_sheet` (todo, draft, submitted) and nothing of the other sheets; their
    `status` filter takes those three values."""
    audit_set = access.get_set_for_user(request, set_id)
    rows = api_selectors.api_claims(
        user=request.user,
        audit_set=audit_set,
        status=str(status) if status else "",
        system=system,
        label=str(label) if label else "",
        question=question,
        batch=batch,
        updated_since=updated_since,
    )
    return cursor_page(
        rows, cursor=cursor, limit=limit, row=_claim_row(leads(request.user, audit_set))
    )


def _judgment_fields(record) -> dict:
    return {
        "judgment": record.judgment,
        "evidence": record.evidence,
        "unsupported_assertions": record.unsupported_assertions,
        "verification_worthy": record.verification_worthy,
        "answers_question": record.answers_question,
    }


def _sheet_row(sheet) -> dict:
    return {
        "id": sheet.pk,
        "claim": sheet.claim_id,
        "reviewer": sheet.reviewer.username,
        "status": sheet.status,
        **_judgment_fields(sheet),
        "notes": sheet.notes,
        "active_seconds": sheet.active_seconds,
        "submitted_at": sheet.submitted_at.isoformat() if sheet.submitted_at else None,
    }


@api.get(
    "/claims/{claim_id}",
    response={200: ClaimOut, **refusals(403, 404, 422)},
    tags=["answers and claims"],
    url_name="claim-detail",
)
def claim_detail(request: HttpRequest, claim_id: int) -> dict:
    """A claim with the sheets the user may see and its gold: for a reviewer, a claim
    assigned to them and their own sheet only."""
    claim = selectors.lead_claim(user=request.user, pk=claim_id) if is_lead(request.user) else None
    lead = claim is not None
    if claim is None:
        claim = access.get_claim_for_reviewer(request, claim_id)
    sheets = selectors.visible_sheets(claim.sheets.select_related("reviewer"), user=request.user)
    if not lead:
        sheets = sheets.filter(reviewer=request.user)
    blind = selectors.is_blind(user=request.user, claim=claim)
    gold = getattr(claim, "adjudication", None) if lead and not blind else None
    return {
        "id": claim.pk,
        "answer": claim.answer_id,
        "answer_external_id": claim.answer.external_id,
        "question_id": claim.answer.question.external_id,
        "name": claim_name(
            answer_id=claim.answer.external_id,
            order=claim.order,
            parent_order=claim.parent_order if claim.parent_id else None,
        ),
        "system": claim.answer.system,
        "parent": claim.parent_id,
        "order": claim.order,
        "text": claim.text,
        "start": claim.start,
        "end": claim.end,
        "sheets": [_sheet_row(sheet) for sheet in sheets.order_by("pk")],
        "gold": ({"source": gold.source, **_judgment_fields(gold)} if gold else None),
    }


@api.get(
    "/sets/{set_id}/sheets",
    response={200: SheetPage, **refusals(403, 404, 422)},
    tags=["sheets and gold"],
    url_name="sheet-list",
)
def sheet_list(
    request: HttpRequest,
    set_id: int,
    updated_since: datetime | None = None,
    system: str = "",
    question: str = "",
    batch: int | None = Query(None, ge=1, le=MAX_BATCH_ID),
    cursor: str = "",
    limit: int = Query(50, ge=1, le=MAX_LIMIT),
) -> dict:
    """A lead: the set's sheets (none but their own on claims they still review); a
    reviewer: their own sheets. Filtered by when they were last written, the answer's
    system, question id and import batch."""
    audit_set = access.get_set_for_user(request, set_id)
    rows = api_selectors.api_sheets(
        user=request.user,
        audit_set=audit_set,
        updated_since=updated_since,
        system=system,
        question=question,
        batch=batch,
    )
    return cursor_page(rows, cursor=cursor, limit=limit, row=_sheet_row)


def _ndjson(rows) -> Any:
    for row in rows:
        yield json.dumps(row, ensure_ascii=False) + "\n"


@api.get(
    "/sets/{set_id}/gold",
    response=refusals(403, 404, 422),
    openapi_extra=streamed("One gold record a line.", "application/x-ndjson; charset=utf-8"),
    tags=["sheets and gold"],
    url_name="gold",
)
def gold(
    request: HttpRequest,
    set_id: int,
    updated_since: datetime | None = None,
    system: str = "",
    question: str = "",
    batch: int | None = Query(None, ge=1, le=MAX_BATCH_ID),
) -> StreamingHttpResponse:
    """Every gold record of the set as JSON Lines, streamed (leads); filtered by when it was
    last written, the answer's system, question id and import batch."""
    audit_set = access.get_set_for_lead(request, set_id)
    rows = api_selectors.api_gold(
        user=request.user,
        audit_set=audit_set,
        updated_since=updated_since,
        system=system,
        question=question,
        batch=batch,
    )
    response = StreamingHttpResponse(
        _ndjson(rows),
        content_type="application/x-ndjson; charset=utf-8",
    )
    patch_cache_control(response, private=True, no_store=True)
    return response
