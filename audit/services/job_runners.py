"""What each kind of job does: the queue (services.jobs) runs a job's row with the function
registered here for its kind. Apart from the queue, so the queue depends on none of the
services these call, and those services (judges, say) may queue jobs without a loop."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.formats import parse_path
from audit.formats.suggestions import parse_records, parse_suggestions
from audit.formats.verdicts import parse_verdicts
from audit.matching import MATCHER_VERSION
from audit.models import Answer, AuditSet, Job
from audit.selectors.jobs import export_path
from audit.services import exports
from audit.services.adjudication import adjudication_settings_update
from audit.services.checks import claim_checks_recompute
from audit.services.disagreements import comparable_claim_ids
from audit.services.imports import answers_import
from audit.services.jobs import HEARTBEAT_THREAD, job_runner, progress_reporter, progress_total
from audit.services.judges import judge_run_execute
from audit.services.sets import SetNameTaken, set_create
from audit.services.suggestions import suggestions_store
from audit.services.verdicts import verdicts_store

# Answers between two reports of a rematch (one report per answer would be a cache write
# per answer).
_PROGRESS_ROWS = 50


@job_runner(Job.Kind.IMPORT)
def _import_run(job: Job) -> dict:
    params = job.params
    parsed, check = parse_path(
        params["path"],
        params["filename"],
        fmt=params["format"],
        max_bytes=settings.IMPORT_MAX_BYTES,
        max_whole_bytes=settings.IMPORT_MAX_WHOLE_BYTES,
    )
    total = len(parsed.records) if isinstance(parsed.records, tuple) else check.lines
    progress_total(job, total)
    with transaction.atomic():
        audit_set = job.audit_set
        if audit_set is None:
            # The set is made as every door makes one (its guidelines' first version, the
            # name's rules); a job queued twice for one new name imports into the set the
            # first made.
            try:
                audit_set = set_create(
                    workspace=job.workspace, name=params["new_set_name"], by=job.created_by
                )
            except SetNameTaken as taken:
                audit_set = AuditSet.objects.get(workspace=job.workspace, name=taken.name)
        summary = answers_import(
            audit_set=audit_set,
            parsed=parsed,
            filename=params["filename"],
            sha256=check.sha256,
            user=job.created_by,
            progress=progress_reporter(job, total),
            workers=settings.IMPORT_WORKERS if _may_fork() else 0,
            system=params.get("system", ""),
            run=params.get("run", ""),
        )
    return {"audit_set": audit_set.pk, **asdict(summary)}


def _may_fork() -> bool:
    """Whether this job may fork matching processes as the command line does: only from
    a process whose one thread runs it. `manage.py db_worker` runs one job at a time in
    its main thread; under --reload (DEBUG's default) it runs in a thread beside the
    reloader's, and a web server's threads may not fork either: a forked child gets a
    copy of any lock another thread held, never released."""
    main = threading.main_thread()
    # The job's heartbeat thread is the one other thread allowed: it writes only under
    # FORK_LOCK, which the pool holds while it forks.
    return threading.current_thread() is main and all(
        thread is main or thread.name == HEARTBEAT_THREAD for thread in threading.enumerate()
    )


@job_runner(Job.Kind.JUDGE)
def _judge_run(job: Job) -> dict:
    # A judge run writes each verdict as it arrives (so cancel and resume keep them), not
    # in one transaction; see audit/services/judges.py.
    def progress_for(total: int) -> Callable[[int], None]:
        progress_total(job, total)
        return progress_reporter(job, total)

    return judge_run_execute(run_id=job.params["run"], progress_for=progress_for)


@job_runner(Job.Kind.EXPORT)
def _export_run(job: Job) -> dict:
    fmt = job.params["format"]
    spec = exports.EXPORT_FORMATS[fmt]
    total = exports.export_answer_count(audit_set=job.audit_set)
    progress_total(job, total)
    final = export_path(job, spec.extension)
    final.parent.mkdir(parents=True, exist_ok=True)
    # Written under another name and renamed when whole: a download never finds half a file.
    partial = final.with_name(final.name + ".part")
    try:
        with open(partial, "w", encoding="utf-8", newline="") as out:
            for piece in exports.export_stream(
                audit_set=job.audit_set,
                fmt=fmt,
                viewer=job.created_by,
                progress=progress_reporter(job, total),
                chunk_size=exports.CHUNK,
            ):
                out.write(piece)
        partial.replace(final)
    finally:
        partial.unlink(missing_ok=True)
    expires = timezone.now() + timedelta(hours=settings.EXPORT_LINK_HOURS)
    return {
        "format": fmt,
        "answers": total,
        "size": final.stat().st_size,
        "expires_at": expires.isoformat(),
    }


@job_runner(Job.Kind.REMATCH)
def _rematch_run(job: Job) -> dict:
    total = Answer.objects.filter(audit_set=job.audit_set).count()
    progress_total(job, total)
    # One transaction over the per-answer ones: cancelled or killed, no claim keeps a new check.
    with transaction.atomic():
        claims = claim_checks_recompute(
            audit_set=job.audit_set, progress=_every(_PROGRESS_ROWS, progress_reporter(job, total))
        )
    return {"claims": claims, "matcher_version": MATCHER_VERSION}


@job_runner(Job.Kind.RECOMPARE)
def _recompare_run(job: Job) -> dict:
    params = job.params
    with transaction.atomic():
        total = len(comparable_claim_ids(audit_set=job.audit_set))
        progress_total(job, total)
        summary = adjudication_settings_update(
            audit_set=job.audit_set,
            by=job.created_by,
            auto_gold=params["auto_gold"],
            evidence_jaccard_threshold=params["evidence_jaccard_threshold"],
            anonymous_adjudication=params["anonymous_adjudication"],
            progress=progress_reporter(job, total),
        )
    return asdict(summary)


@job_runner(Job.Kind.VERDICTS)
def _verdicts_run(job: Job) -> dict:
    params = job.params
    data = Path(params["path"]).read_bytes()
    verdicts = parse_verdicts(data, params["filename"], max_bytes=settings.IMPORT_MAX_WHOLE_BYTES)
    progress_total(job, len(verdicts))
    summary = verdicts_store(
        audit_set=job.audit_set,
        verdicts=verdicts,
        filename=params["filename"],
        sha256=hashlib.sha256(data).hexdigest(),
        progress=progress_reporter(job, len(verdicts)),
    )
    return {**asdict(summary), "judges": list(summary.judges)}


@job_runner(Job.Kind.SUGGESTIONS)
def _suggestions_run(job: Job) -> dict:
    params = job.params
    data = Path(params["path"]).read_bytes()
    filename = params["filename"]
    if params.get("body"):
        # Written by the push from records it had parsed: plain JSON, read back as such.
        records = parse_records(json.loads(data), filename)
    else:
        records = parse_suggestions(data, filename, max_bytes=settings.IMPORT_MAX_WHOLE_BYTES)
    progress_total(job, len(records))
    summary = suggestions_store(
        audit_set=job.audit_set,
        user=job.created_by,
        name=params["name"],
        version=params["version"],
        description=params.get("description", ""),
        records=records,
        filename=filename,
        progress=progress_reporter(job, len(records)),
    )
    return asdict(summary)


def _every(rows: int, progress: Callable[[int], None]) -> Callable[[int], None]:
    """Pass progress on every `rows` rows, for work that reports one row at a time."""
    pending = 0

    def report(done: int) -> None:
        nonlocal pending
        pending += done
        if pending >= rows:
            progress(pending)
            pending = 0

    return report
