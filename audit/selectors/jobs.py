"""Reads of jobs: what a lead may see of them, and how far a running one has got."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.db.models import Q, QuerySet
from django.utils import timezone

from audit import roles
from audit.formats.catalogue import EXPORT_FORMATS
from audit.models import Job, JudgeRun

PROGRESS_KEY = "job:{token}:progress"
CANCEL_KEY = "job:{token}:cancel"
# When the running job's worker last said it was alive (services.jobs._heartbeat).
HEARTBEAT_KEY = "job:{token}:heartbeat"
# The kinds whose input is an uploaded file under JOBS_DIR, deleted when the job ends.
UPLOAD_KINDS = (Job.Kind.IMPORT, Job.Kind.VERDICTS)


@dataclass(frozen=True)
class JobProgress:
    done: int
    total: int
    elapsed: timedelta | None
    # A running job whose worker stopped reporting: killed, or its machine lost.
    stale: bool
    cancelling: bool

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.done / self.total)) if self.total else 0


def jobs_for_lead(*, user) -> QuerySet[Job]:
    """The jobs of the workspaces the user leads, newest first: only leads start jobs, and
    every lead of the workspace may follow them. A token limited to one set sees that
    set's jobs only."""
    workspaces = roles.lead_workspaces(user)
    jobs = Job.objects.select_related("audit_set", "created_by").filter(
        Q(audit_set__workspace__in=workspaces) | Q(audit_set__isnull=True, workspace__in=workspaces)
    )
    set_id = roles.limited_set_id(user)
    return jobs if set_id is None else jobs.filter(audit_set_id=set_id)


def job_is_stale(job: Job) -> bool:
    """Whether a running job's worker has said nothing (no heartbeat, no progress) for
    longer than JOB_STALE_SECONDS: killed, or its machine lost."""
    if job.status != Job.Status.RUNNING:
        return False
    entry = cache.get(PROGRESS_KEY.format(token=job.token)) or {}
    beats = [cache.get(HEARTBEAT_KEY.format(token=job.token)) or 0, entry.get("at", 0)]
    if job.started_at:
        beats.append(job.started_at.timestamp())
    return time.time() - max(beats) > settings.JOB_STALE_SECONDS


def jobs_stale_candidates() -> QuerySet[Job]:
    """Running jobs that started longer ago than the stale limit: only these can be stale."""
    since = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS)
    return Job.objects.filter(status=Job.Status.RUNNING, started_at__lt=since)


def job_retry_refusal(job: Job) -> str | None:
    """Why the job cannot be run again as it now is, or None when it can: one that failed,
    was cancelled or lost its worker, whose inputs are still there."""
    if job.status == Job.Status.RUNNING and not job_is_stale(job):
        return "This job is still running."
    if job.status == Job.Status.QUEUED:
        return "This job is queued already."
    if job.status == Job.Status.SUCCEEDED:
        return "This job has finished; start a new one instead."
    if job.kind in UPLOAD_KINDS and not Path(job.params.get("path", "")).is_file():
        return "Its uploaded file is no longer kept: upload it again."
    if job.kind == Job.Kind.JUDGE:
        current = JudgeRun.objects.filter(pk=job.params.get("run")).values_list("job", flat=True)
        if list(current) != [job.pk]:
            return "This run has a newer job: resume it from its judge’s page."
    return None


def job_progress(job: Job) -> JobProgress:
    entry = cache.get(PROGRESS_KEY.format(token=job.token)) or {}
    if job.status == Job.Status.SUCCEEDED:
        done = total = job.total or entry.get("total", 0)
    else:
        done, total = entry.get("done", 0), entry.get("total", 0) or job.total
    end = job.finished_at or timezone.now()
    return JobProgress(
        done=done,
        total=total,
        elapsed=end - job.started_at if job.started_at else None,
        stale=job_is_stale(job),
        cancelling=job.status == Job.Status.RUNNING
        and bool(cache.get(CANCEL_KEY.format(token=job.token))),
    )


def export_path(job: Job, extension: str) -> Path:
    """Where an export job writes its file: beside the uploads, under JOBS_DIR."""
    return Path(settings.JOBS_DIR) / "exports" / f"{job.token}.{extension}"


def export_expires_at(job: Job) -> datetime | None:
    stamp = job.result.get("expires_at") if job.kind == Job.Kind.EXPORT else None
    return datetime.fromisoformat(stamp) if stamp else None


def export_file(job: Job) -> Path | None:
    """A finished export's file while its link lasts; None once it expired or was removed."""
    expires = export_expires_at(job)
    if job.status != Job.Status.SUCCEEDED or expires is None or expires <= timezone.now():
        return None
    path = export_path(job, EXPORT_FORMATS[job.params["format"]].extension)
    return path if path.is_file() else None
