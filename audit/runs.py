"""Runs of a system: the key a run's answers are counted under, and what a new push of a run
changes against the answers it replaces. Pure: no Django."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

# Answer.system's length: a run's key must fit it.
MAX_KEY = 200
MAX_RUN = 100


def run_refusal(system: str, run: str) -> tuple[str, str] | None:
    """(field, why) when a push's system and run cannot name a run; None when they can."""
    if run and not system:
        return "system", "a run belongs to a system: name the system too"
    if len(run) > MAX_RUN:
        return "run", f"at most {MAX_RUN} characters"
    if len(run_key(system, run)) > MAX_KEY:
        return "system", f"the system and run together take at most {MAX_KEY - 1} characters"
    return None


def run_key(system: str, run: str) -> str:
    """What the answers of `run` of `system` are counted under: the system's name for the
    default run (no label), so files pushed without a run count as they always did."""
    return f"{system}@{run}" if run else system


def run_system(key: str, run: str) -> str:
    """The system's name back from a run's key."""
    return key[: -len(run) - 1] if run and key.endswith(f"@{run}") else key


@dataclass
class RunChanges:
    """What a push of a named run did to the run's current answers, by answer id."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "added": len(self.added),
            "changed": len(self.changed),
            "unchanged": len(self.unchanged),
            "retired": len(self.retired),
            "ids": {
                "added": sorted(self.added),
                "changed": sorted(self.changed),
                "unchanged": sorted(self.unchanged),
                "retired": sorted(self.retired),
            },
        }


def changes_of(
    *, held: dict[str, str], pushed: Iterable[tuple[str, str]], changes: RunChanges
) -> list[str]:
    """Sort one chunk of pushed (answer id, content hash) pairs against the run's current
    answers `held` (answer id → content hash) into `changes`; returns the ids to write, in
    the order given. Retired ids are added by `retired_of` once the whole file is read."""
    write = []
    for answer_id, digest in pushed:
        known = held.get(answer_id)
        if known is None:
            changes.added.append(answer_id)
            write.append(answer_id)
        elif known == digest:
            changes.unchanged.append(answer_id)
        else:
            changes.changed.append(answer_id)
            write.append(answer_id)
    return write


def retired_of(*, held: Iterable[str], pushed: set[str]) -> list[str]:
    """The run's current answers the new push left out: they are retired, not kept, since a
    push of a run is the whole run."""
    return sorted(set(held) - pushed)
