"""Lead-only downloads of a set's labelled data: streamed while the set is read for a set of
up to WEB_DIRECT_MAX_ANSWERS answers; a larger one is written by a job, then downloaded."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_cache_control
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.views.decorators.http import require_http_methods

from audit import selectors, services
from audit.formats.catalogue import EXPORT_FORMATS
from audit.services.exports import export_stream
from audit.views import access


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def set_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    spec = EXPORT_FORMATS.get(fmt)
    if spec is None:
        raise Http404(f"No export format “{fmt}”.")
    if request.method == "POST":
        job = services.job_export_create(audit_set=audit_set, fmt=fmt, user=request.user)
        return redirect(job)
    answers = selectors.set_answer_count(audit_set=audit_set)
    if answers > settings.WEB_DIRECT_MAX_ANSWERS:
        # Too long for one request: the page offers a job (a GET must not start one).
        ctx = {
            "audit_set": audit_set,
            "spec": spec,
            "answers": answers,
            "link_hours": settings.EXPORT_LINK_HOURS,
        }
        return render(request, "audit/export_start.html", ctx)
    response = StreamingHttpResponse(
        export_stream(audit_set=audit_set, fmt=fmt, viewer=request.user),
        content_type=spec.content_type,
    )
    return attachment(response, audit_set.name, fmt, spec.extension)


def attachment(response: HttpResponse, set_name: str, fmt: str, extension: str) -> HttpResponse:
    filename = f"{slugify(set_name) or 'set'}-{fmt}.{extension}"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    # Reviewers' judgments: no shared cache may keep a copy.
    patch_cache_control(response, private=True, no_store=True)
    return response
