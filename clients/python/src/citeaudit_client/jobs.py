"""A job as the API reports it (an import, queued and run by a worker), and the text progress
bar job_wait can draw on stderr."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, TextIO

# The statuses after which a job changes no more (unless retried).
ENDED = frozenset({"succeeded", "failed", "cancelled"})


@dataclasses.dataclass(frozen=True)
class Job:
    """A job's state: `status` is queued, running, succeeded, failed or cancelled; `done` of
    `total` rows; `result` what it made (answers, claims, set); `error` naming file, line and
    field when it failed. `raw` keeps the whole answer, fields added later included."""

    id: int
    status: str
    done: int = 0
    total: int = 0
    result: dict[str, Any] = dataclasses.field(default_factory=dict)
    error: str = ""
    kind: str = ""
    set: int | None = None
    filename: str = ""
    percent: int = 0
    attempts: int = 0
    cancelling: bool = False
    stale: bool = False
    worker: str = ""
    elapsed_seconds: float | None = None
    created_at: str | None = None
    finished_at: str | None = None
    raw: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Job:
        known = {f.name for f in dataclasses.fields(cls)} - {"raw"}
        return cls(**{k: v for k, v in data.items() if k in known}, raw=dict(data))

    @property
    def ok(self) -> bool:
        """The job succeeded."""
        return self.status == "succeeded"

    @property
    def ended(self) -> bool:
        """The job has ended, however: succeeded, failed or cancelled."""
        return self.status in ENDED


class ProgressBar:
    """`job 12 [##########..........] 50/100` redrawn in place on a terminal; on anything
    else (a CI log) a line only when the figures change, so the log stays short."""

    WIDTH = 30

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.last: tuple[int, int] | None = None
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done: int, total: int) -> None:
        if (done, total) == self.last:
            return
        self.last = (done, total)
        filled = self.WIDTH * done // total if total > 0 else 0
        bar = "#" * filled + "." * (self.WIDTH - filled)
        line = f"{self.label} [{bar}] {done}/{total or '?'}"
        self.stream.write(f"\r{line}" if self.live else f"{line}\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live and self.last is not None:
            self.stream.write("\n")
            self.stream.flush()
