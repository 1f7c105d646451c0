"""The tasks a worker process runs (`manage.py db_worker`). Each only names its job: what
to do is in the job's row, written by the request that queued it."""

from __future__ import annotations

from django.tasks import task

from audit.services.jobs import job_run


@task
def run_job(job_id: int) -> None:
    job_run(job_id=job_id)
