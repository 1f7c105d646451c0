"""Lead-only downloads of a set's labelled data, streamed while the set is read."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, StreamingHttpResponse
from django.utils.cache import patch_cache_control
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.views.decorators.http import require_GET

from audit.services.exports import EXPORT_FORMATS, export_stream
from audit.views import access


@login_required
@require_GET
def set_export(request: HttpRequest, pk: int, fmt: str) -> StreamingHttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    spec = EXPORT_FORMATS.get(fmt)
    if spec is None:
        raise Http404(f"No export format “{fmt}”.")
    response = StreamingHttpResponse(
        export_stream(audit_set=audit_set, fmt=fmt, viewer=request.user),
        content_type=spec.content_type,
    )
    filename = f"{slugify(audit_set.name) or 'set'}-{fmt}.{spec.extension}"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    # Reviewers' judgments: no shared cache may keep a copy.
    patch_cache_control(response, private=True, no_store=True)
    return response
