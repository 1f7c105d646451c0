"""Job pages: a job's progress (polled by htmx while it runs), cancelling, running a
stopped one again, and the list of recent jobs. Jobs are started by leads and followed by
leads."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST, require_safe

from audit import selectors, services
from audit.models import Job
from audit.views import access
from audit.views.access import HtmxHttpRequest

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
    jobs = list(selectors.jobs_for_lead(user=request.user)[:RECENT])
    rows = [(job, selectors.job_progress(job)) for job in jobs]
    return access.render_page_or_partial(request, "audit/job_list.html", "jobs", {"rows": rows})


@require_safe
@login_required
def job_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    job = _get_job_for_lead(request, pk)
    ctx = {"job": job, "progress": selectors.job_progress(job)}
    return access.render_page_or_partial(request, "audit/job.html", "job-status", ctx)


@require_POST
@login_required
def job_cancel(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    return _act(request, pk, services.job_cancel, "Cancelling: nothing of this job will be kept.")


@require_POST
@login_required
def job_retry(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    return _act(request, pk, services.job_retry, "Queued again: it runs from the start.")


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
