"""Job pages: a job's progress (polled by htmx while it runs), cancelling, running a
stopped one again, and the list of recent jobs. Jobs are started by leads and followed by
leads."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST, require_safe

from audit import selectors, services
from audit.formats.catalogue import EXPORT_FORMATS
from audit.models import Job
from audit.views import access
from audit.views.access import HtmxHttpRequest
from audit.views.exports import attachment

RECENT = 50


def _get_job_for_lead(request: HtmxHttpRequest, pk: int) -> Job:
    access.require_lead(request)
    job = selectors.jobs_for_lead(user=request.user).filter(pk=pk).first()
    if job is None:
        raise Http404("No such job.")
    return job


@require_safe
@login_required
def job_list(request: HtmxHttpRequest) -> HttpResponse:
    access.require_lead(request)
    services.jobs_reap_stale()
    jobs = list(selectors.jobs_for_lead(user=request.user)[:RECENT])
    rows = [(job, selectors.job_progress(job)) for job in jobs]
    return access.render_page_or_partial(request, "audit/job_list.html", "jobs", {"rows": rows})


@require_safe
@login_required
def job_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    services.jobs_reap_stale()
    job = _get_job_for_lead(request, pk)
    ctx = {
        "job": job,
        "progress": selectors.job_progress(job),
        "can_retry": selectors.job_retry_refusal(job) is None,
        "expires_at": selectors.export_expires_at(job),
        "can_download": _downloadable(request, job) is not None,
    }
    return access.render_page_or_partial(request, "audit/job.html", "job-status", ctx)


@require_safe
@login_required
def job_download(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """A finished export's file, for the lead who asked for it, while its link lasts."""
    job = _get_job_for_lead(request, pk)
    path = _downloadable(request, job)
    if path is None:
        raise Http404("No file to download: the export has expired, or is not yours.")
    spec = EXPORT_FORMATS[job.params["format"]]
    # FileResponse closes the file once it is sent.
    response = FileResponse(open(path, "rb"), content_type=spec.content_type)  # noqa: SIM115
    return attachment(response, job.audit_set.name, spec.name, spec.extension)


def _downloadable(request: HtmxHttpRequest, job: Job):
    """The export's file if this lead may download it: the lead who asked for it (it holds
    what they may see) and who may still open the set."""
    if job.kind != Job.Kind.EXPORT or job.created_by_id != request.user.pk:
        return None
    if job.audit_set_id is None:
        return None
    access.get_set_for_lead(request, job.audit_set_id)
    return selectors.export_file(job)


@require_POST
@login_required
def job_cancel(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    job = _get_job_for_lead(request, pk)
    # A judge run keeps each verdict as it comes; an import keeps nothing of a cancelled run.
    if job.status == Job.Status.RUNNING and selectors.job_is_stale(job):
        done = "Cancelled: its worker had stopped answering."
    elif job.kind == Job.Kind.JUDGE:
        done = "Cancelling: verdicts stored so far are kept."
    else:
        done = "Cancelling: nothing of this job will be kept."
    return _act(request, pk, services.job_cancel, done)


@require_POST
@login_required
def job_retry(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    job = _get_job_for_lead(request, pk)
    if job.kind == Job.Kind.JUDGE:
        done = "Queued again: claims it has a verdict on are skipped."
    else:
        done = "Queued again: it runs from the start."
    return _act(request, pk, services.job_retry, done)


def _act(request: HtmxHttpRequest, pk: int, action, done: str) -> HttpResponse:
    """Cancel or rerun a job; a refusal (it has ended meanwhile) is said, not raised."""
    job = _get_job_for_lead(request, pk)
    try:
        action(job=job)
    except services.JobRefused as refusal:
        messages.error(request, str(refusal))
    else:
        messages.success(request, done)
    return redirect(job)
