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
from audit.models import Job

PROGRESS_KEY = "job:{token}:progress"
CANCEL_KEY = "job:{token}:cancel"


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
    every lead of the workspace may follow them."""
    workspaces = roles.lead_workspaces(user)
    return Job.objects.select_related("audit_set", "created_by").filter(
        Q(audit_set__workspace__in=workspaces) | Q(audit_set__isnull=True, workspace__in=workspaces)
    )


def job_is_stale(job: Job) -> bool:
    if job.status != Job.Status.RUNNING:
        return False
    entry = cache.get(PROGRESS_KEY.format(token=job.token))
    last = entry["at"] if entry else (job.started_at.timestamp() if job.started_at else 0)
    return time.time() - last > settings.JOB_STALE_SECONDS


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
