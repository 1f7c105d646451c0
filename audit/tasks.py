"""The tasks a worker process runs (`manage.py db_worker`). Each only names its row: what
to do is in the job's (or the delivery's) row, written by the request that queued it."""

from __future__ import annotations

from django.tasks import task

from audit.services.jobs import job_run
from audit.services.webhooks import webhook_deliver


@task
def run_job(job_id: int) -> None:
    job_run(job_id=job_id)


@task
def deliver_webhook(delivery_id: int) -> None:
    webhook_deliver(delivery_id=delivery_id)
