"""Runs of a set's systems: which run a decision names when none is given, and the runs a
page lists."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Max

from audit.models import Answer, AuditSet, ImportBatch
from audit.runs import run_key, run_system


@dataclass(frozen=True)
class SystemRun:
    """One run of a system: the key its answers are counted under, and its label ("" for
    the default run)."""

    system: str
    run: str
    key: str
    answers: int


def system_runs(*, audit_set: AuditSet, system: str | None = None) -> list[SystemRun]:
    """The runs of the set's systems (one system's with `system`) that have current answers,
    by system, newest push first."""
    rows = (
        Answer.objects.filter(audit_set=audit_set, replaced_at__isnull=True)
        .values("system", "run")
        .annotate(answers=Count("pk"), latest=Max("pk"))
        .order_by()
    )
    runs = [
        (
            SystemRun(
                run_system(row["system"], row["run"]), row["run"], row["system"], row["answers"]
            ),
            row["latest"],
        )
        for row in rows
    ]
    if system is not None:
        runs = [(item, latest) for item, latest in runs if item.system == system]
    pushed = _last_pushed(audit_set, {item.key for item, _ in runs})
    runs.sort(key=lambda pair: (pair[0].system, -pushed.get(pair[0].key, 0), -pair[1]))
    return [item for item, _ in runs]


def _last_pushed(audit_set: AuditSet, keys: set[str]) -> dict[str, int]:
    """Each named run's latest push (its import batch's id): a run pushed again, even with
    nothing changed, is the latest."""
    found: dict[str, int] = {}
    for system, run, pk in (
        ImportBatch.objects.filter(audit_set=audit_set)
        .exclude(run="")
        .values_list("system", "run")
        .annotate(last=Max("pk"))
        .order_by()
    ):
        key = run_key(system, run)
        if key in keys:
            found[key] = pk
    return found


def system_run(*, audit_set: AuditSet, system: str, run: str | None = None) -> SystemRun | None:
    """The run the decision of `system` is read for: its run `run`, or without one its
    latest run (the default run when it was never pushed with one); a run's own key given
    as `system` names that run. None when the set has no such system or run."""
    runs = system_runs(audit_set=audit_set, system=system)
    if run is not None:
        return next((item for item in runs if item.run == run), None)
    if runs:
        return runs[0]
    return next((item for item in system_runs(audit_set=audit_set) if item.key == system), None)


def decision_key(*, audit_set: AuditSet, system: str, run: str | None = None) -> str | None:
    """system_run's key: what the decision's counts are grouped under."""
    found = system_run(audit_set=audit_set, system=system, run=run)
    return found.key if found else None


def answer_versions_replaced(*, answer: Answer) -> list[Answer]:
    """The earlier versions this answer replaced, newest first: their reviews stay on them."""
    return list(
        Answer.objects.filter(replaced_by=answer)
        .order_by("-replaced_at", "-pk")
        .only("pk", "replaced_at")
    )
