"""Client: every endpoint of Citeaudit's /api/v1/ as a method, with retries on a busy
server, the errors as exceptions, and lists paged and files streamed for the caller."""

from __future__ import annotations

import contextlib
import email.utils
import io
import json
import os
import random
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TextIO, overload

import httpx2

from citeaudit_client.errors import (
    ConnectionFailed,
    NotFound,
    WaitTimeout,
    error_from_response,
)
from citeaudit_client.jobs import Job, ProgressBar

__version__ = "0.1.0"

# The gate's exit codes, as audit/gate.py and `manage.py gate` give them.
PASS, FAIL, PROVISIONAL, ERROR = 0, 1, 2, 3
EXIT_CODES = {"pass": PASS, "fail": FAIL, "provisional": PROVISIONAL}

RETRY_STATUSES = frozenset({429, 502, 503, 504})
# 429 and 503 say the server did not act on the request, so any method is sent again; after
# a 502 or 504 a proxy may have passed it on, so only a read is.
RETRY_ANY_METHOD = frozenset({429, 503})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# A request that never left (no connection) is safe to send again whatever its method.
NOT_SENT = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout)
RETRY_ERRORS = (httpx2.NetworkError, httpx2.TimeoutException, httpx2.RemoteProtocolError)
# The longest pause between tries, whatever a Retry-After asks.
MAX_PAUSE = 120.0
PAGE_SIZE = 100
# What the server sends of a hook's deliveries at a time.
DELIVERIES_PAGE = 100

# What push and verdicts_push send: a path, the bytes of a file, an open binary file, or
# records (dicts) written as JSON Lines.
FileInput = str | os.PathLike[str] | bytes | bytearray | IO[bytes] | Iterable[Mapping[str, Any]]
SetRef = int | str
Progress = Callable[[int, int], object] | bool | None


class _Upload:
    """A file to send as the multipart field `file`, opened afresh for each try."""

    def __init__(self, file: FileInput, default_name: str) -> None:
        self.path: Path | None = None
        self.data: bytes | None = None
        self.stream: IO[bytes] | None = None
        if isinstance(file, (str, os.PathLike)):
            self.path = Path(file)
            self.name = self.path.name
        elif isinstance(file, (bytes, bytearray)):
            self.data = bytes(file)
            self.name = default_name
        elif hasattr(file, "read"):
            self.stream = file  # type: ignore[assignment]
            self.name = Path(str(getattr(file, "name", "") or default_name)).name
            self.start = self.stream.tell() if self.stream.seekable() else None
        else:
            lines = (json.dumps(dict(record), ensure_ascii=False) + "\n" for record in file)
            self.data = "".join(lines).encode()
            self.name = default_name

    @contextlib.contextmanager
    def open(self) -> Iterator[dict[str, tuple[str, IO[bytes]]]]:
        if self.path is not None:
            with self.path.open("rb") as handle:
                yield {"file": (self.name, handle)}
        elif self.stream is not None:
            if self.start is not None:
                self.stream.seek(self.start)
            yield {"file": (self.name, self.stream)}
        else:
            yield {"file": (self.name, io.BytesIO(self.data or b""))}

    @property
    def retryable(self) -> bool:
        # An unseekable stream is spent after one try.
        return self.stream is None or self.start is not None


class Client:
    """Citeaudit's HTTP API for scripts and CI.

    `url` is the server's address (`https://citeaudit.example.org`), `token` an API token
    (`cit_…`). A request answered 429, 502, 503 or 504, or that met a connection error, is
    tried again up to `retries` times, after the server's Retry-After or a growing pause;
    `timeout` bounds each request in seconds. Use it in a `with` block, or call close().

    Sets are named by id or by name (`set=3` or `set="Nightly"`) everywhere. Lists are
    iterators that fetch the next page as they are consumed. Failures raise CiteauditError
    subclasses (citeaudit_client.errors).
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        transport: httpx2.BaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.retries = retries
        self._http = httpx2.Client(
            base_url=f"{self.url}/api/v1/",
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json",
                "User-Agent": f"citeaudit-client/{__version__}",
            },
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------------- requests

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        data: Mapping[str, str] | None = None,
        upload: _Upload | None = None,
        stream: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> httpx2.Response:
        """One call, tried again while the server is busy or unreachable; any answer but a
        2xx raises. A `stream` response is the caller's to close. A request carrying an
        Idempotency-Key is tried again as a read is: the server answers a repeat with the
        first one's result."""
        safe = method in SAFE_METHODS or "Idempotency-Key" in (headers or {})
        query = {k: v for k, v in (params or {}).items() if v is not None}
        attempt = 0
        while True:
            last = attempt >= self.retries or (upload is not None and not upload.retryable)
            try:
                with contextlib.ExitStack() as stack:
                    files = stack.enter_context(upload.open()) if upload else None
                    request = self._http.build_request(
                        method,
                        path,
                        params=query,
                        json=json,
                        data=data,
                        files=files,
                        headers=headers,
                    )
                    response = self._http.send(request, stream=stream)
            except httpx2.TransportError as error:
                retry = isinstance(error, NOT_SENT) or (safe and isinstance(error, RETRY_ERRORS))
                if retry and not last:
                    time.sleep(self._pause(attempt, None))
                    attempt += 1
                    continue
                sent = "" if isinstance(error, NOT_SENT) else " (the server may have acted on it)"
                raise ConnectionFailed(
                    f"{method} {self.url}/api/v1/{path}: {error or type(error).__name__}{sent}"
                ) from error
            status = response.status_code
            if status in RETRY_STATUSES and not last and (safe or status in RETRY_ANY_METHOD):
                pause = self._pause(attempt, response.headers.get("Retry-After"))
                response.close()
                time.sleep(pause)
                attempt += 1
                continue
            if not response.is_success:
                try:
                    raise error_from_response(response)
                finally:
                    response.close()
            return response

    @staticmethod
    def _pause(attempt: int, retry_after: str | None) -> float:
        """The server's Retry-After (seconds or an HTTP date) if it sent one, else 0.5 s
        doubling with each try, with some jitter so that many clients do not return together."""
        if retry_after:
            wait: float | None = None
            try:
                wait = float(retry_after)
            except ValueError:
                with contextlib.suppress(TypeError, ValueError, IndexError):
                    when = email.utils.parsedate_to_datetime(retry_after)
                    wait = (when - datetime.now(UTC)).total_seconds()
            if wait is not None:
                return min(max(wait, 0.0), MAX_PAUSE)
        return min(0.5 * 2**attempt, 30.0) * random.uniform(1.0, 1.25)

    def _get(self, path: str, **params: Any) -> Any:
        return self._request("GET", path, params=params).json()

    def _pages(self, path: str, page_size: int, **params: Any) -> Iterator[dict[str, Any]]:
        """Every item of a cursor-paged list, a page of `page_size` (the API's `limit`,
        1–500) fetched as the previous one is used up."""
        cursor: str | None = None
        while True:
            page = self._get(path, limit=page_size, cursor=cursor, **params)
            yield from page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def _set_id(self, ref: SetRef) -> int:
        """A set's id from its id or name; a string of digits is an id, as for the gate."""
        if isinstance(ref, int) and not isinstance(ref, bool):
            return ref
        if isinstance(ref, str) and ref.isdigit():
            return int(ref)
        if isinstance(ref, str):
            for found in self._get("sets", name=ref):
                return int(found["id"])
            raise NotFound(f"No set named {ref!r} that this token may see.", status=404)
        raise TypeError(f"a set is an id or a name, not {type(ref).__name__}")

    # ----------------------------------------------------------------------------- sets

    def me(self) -> dict[str, Any]:
        """The token's owner: `username`, `lead`, the token's `scope` and `token` name."""
        return self._get("me")

    def sets(self, name: str | None = None) -> Iterator[dict[str, Any]]:
        """The sets the token's owner may see (a reviewer: those they review); `name` picks
        the one of that name."""
        yield from self._get("sets", name=name)

    def set(self, id: SetRef) -> dict[str, Any]:  # noqa: A002 - the API's name
        """One set: id, name, description, guidelines, created_at."""
        return self._get(f"sets/{self._set_id(id)}")

    def set_create(
        self, name: str, description: str = "", guidelines: str = "", *, workspace: str = ""
    ) -> dict[str, Any]:
        """A new set (leads). `workspace` is a slug, needed only by a lead of several.
        Conflict if the name is taken."""
        body = {
            "name": name,
            "description": description,
            "guidelines": guidelines,
            "workspace": workspace,
        }
        return self._request("POST", "sets", json=body).json()

    def set_settings(self, id: SetRef) -> dict[str, Any]:  # noqa: A002
        """A set's settings and release criteria (leads)."""
        return self._get(f"sets/{self._set_id(id)}/settings")

    def set_settings_update(self, id: SetRef, **fields: Any) -> dict[str, Any]:  # noqa: A002
        """Change only the fields given: name, description, guidelines, allow_reviewer_split,
        auto_gold, evidence_jaccard_threshold, anonymous_adjudication, criteria (with
        criteria_reason once review has started), suggestion_source,
        show_suggested_judgment, withhold_share (before review starts). Returns the
        settings as they now are."""
        path = f"sets/{self._set_id(id)}/settings"
        return self._request("PATCH", path, json=fields).json()

    # --------------------------------------------------------------- review (leads)

    def reviewers(self, set: SetRef) -> dict[str, Any]:  # noqa: A002
        """The set's `overlap`, each reviewer's progress (`reviewers`: assigned, submitted,
        drafts, median_seconds, claims_per_hour, flags) and the usernames that may be
        chosen (`candidates`)."""
        return self._get(f"sets/{self._set_id(set)}/reviewers")

    def assign(
        self,
        set: SetRef,  # noqa: A002
        reviewers: Sequence[str],
        overlap: int,
        *,
        allow_reviewer_split: bool | None = None,
    ) -> dict[str, Any]:
        """Open the set for review, or top it up: every claim to `overlap` of these
        reviewers (usernames). Claims keep the reviewers they have. Returns `claims`,
        `created` (new assignments) and `per_reviewer`."""
        body: dict[str, Any] = {"reviewers": list(reviewers), "overlap": overlap}
        if allow_reviewer_split is not None:
            body["allow_reviewer_split"] = allow_reviewer_split
        return self._request("POST", f"sets/{self._set_id(set)}/reviewers", json=body).json()

    def reviewer_replace(
        self,
        set: SetRef,  # noqa: A002
        leaving: str,
        joining: str,
    ) -> dict[str, Any]:
        """Take `leaving` off the set: their open claims go to `joining`, their submitted
        sheets stay. Returns `moved`, `kept` and `dropped`."""
        body = {"leaving": leaving, "joining": joining}
        path = f"sets/{self._set_id(set)}/reviewers/replace"
        return self._request("POST", path, json=body).json()

    def controls(self, set: SetRef) -> dict[str, Any]:  # noqa: A002
        """`control_rate`, `calibration_threshold`, the control claims (`controls`) and
        adjudicated claims that could become controls (`candidates`)."""
        return self._get(f"sets/{self._set_id(set)}/controls")

    def controls_update(
        self,
        set: SetRef,  # noqa: A002
        *,
        control_rate: int | None = None,
        calibration_threshold: float | None = None,
    ) -> dict[str, Any]:
        """Change the control rate (one control in N claims; 0: none) or the accuracy
        below which a reviewer is shown to the leads; what is left out keeps its value."""
        body = {
            name: value
            for name, value in (
                ("control_rate", control_rate),
                ("calibration_threshold", calibration_threshold),
            )
            if value is not None
        }
        return self._request("PATCH", f"sets/{self._set_id(set)}/controls", json=body).json()

    def controls_mark(
        self,
        set: SetRef,  # noqa: A002
        claims: Sequence[int],
        *,
        control: bool = True,
    ) -> dict[str, Any]:
        """Make these adjudicated claims controls (`control=False`: no longer controls);
        `changed` counts the claims that changed."""
        body = {"claims": list(claims), "control": control}
        return self._request("POST", f"sets/{self._set_id(set)}/controls", json=body).json()

    def webhooks(
        self,
        set: SetRef | None = None,  # noqa: A002
        *,
        workspace: str | None = None,
    ) -> list[dict[str, Any]]:
        """A set's webhooks, or with `workspace` (its slug) the workspace's own, fired for
        every set of it: `id`, `url`, `events`, `created_at`, never their secrets."""
        return self._get(self._hooks_path(set, workspace))

    def webhook_create(
        self,
        set: SetRef | None,  # noqa: A002
        url: str,
        events: Sequence[str],
        *,
        workspace: str | None = None,
    ) -> dict[str, Any]:
        """Add a webhook for these events to a set, or (`set=None, workspace=slug`) to every
        set of a workspace. The answer's `secret` signs every delivery and is shown this
        once: keep it."""
        body = {"url": url, "events": list(events)}
        return self._request("POST", self._hooks_path(set, workspace), json=body).json()

    def _hooks_path(self, set: SetRef | None, workspace: str | None) -> str:  # noqa: A002
        if (set is None) == (workspace is None):
            raise ValueError("Name a set or a workspace.")
        if workspace is not None:
            return f"workspaces/{workspace}/webhooks"
        return f"sets/{self._set_id(set)}/webhooks"

    def webhook_delete(self, id: int) -> None:  # noqa: A002
        """Remove a webhook and its deliveries."""
        self._request("DELETE", f"webhooks/{id}")

    def deliveries(self, webhook: int) -> Iterator[dict[str, Any]]:
        """A webhook's deliveries, newest first: `uuid` (the Citeaudit-Delivery header),
        `event`, `status`, `attempts`, `response_code` and every attempt (`attempt_log`)."""
        offset = 0
        while True:
            rows = self._get(f"webhooks/{webhook}/deliveries", offset=offset)
            yield from rows
            if len(rows) < DELIVERIES_PAGE:
                return
            offset += len(rows)

    def redeliver(self, webhook: int, delivery: str) -> dict[str, Any]:
        """Send a delivery again, with the same `uuid` and body; it is queued and goes out
        after any earlier delivery of the hook still pending."""
        path = f"webhooks/{webhook}/deliveries/{delivery}/redeliver"
        return self._request("POST", path).json()

    def adjudication_queue(
        self,
        set: SetRef,  # noqa: A002
        *,
        severity: int | None = None,
        judgment: str | None = None,
        fast: bool | None = None,
        label: str | None = None,
        system: str | None = None,
        page_size: int = 50,
    ) -> Iterator[dict[str, Any]]:
        """The claims waiting for a lead, most severe first, each with its submitted
        sheets, under the queue page's filters."""
        path = f"sets/{self._set_id(set)}/adjudication"
        query = {
            "severity": severity,
            "judgment": judgment,
            "fast": None if fast is None else str(fast).lower(),
            "label": label,
            "system": system,
        }
        offset: int | None = 0
        while offset is not None:
            page = self._get(path, limit=page_size, offset=offset, **query)
            yield from page["items"]
            offset = page.get("next_offset")

    def compare(
        self,
        set: SetRef,  # noqa: A002
        a: str | None = None,
        b: str | None = None,
    ) -> dict[str, Any]:
        """Run `a` (before) against run `b` (after): `deltas` of the metrics and the claims
        paired by wording (`pairs`, `appeared`, `vanished`, …). A run is `system:<name>`
        or `import:<id>` (`runs` lists them); left out, the two latest systems."""
        return self._get(f"sets/{self._set_id(set)}/compare", a=a, b=b)

    # ------------------------------------------------------------------- automatic judges

    def judges(self, set: SetRef) -> list[dict[str, Any]]:  # noqa: A002
        """The set's automatic judges: settings (`api_key_env` names the key's variable,
        never its value), threshold, `current_version`, `versions` and `refusal`."""
        return self._get(f"sets/{self._set_id(set)}/judges")

    def judge_create(
        self,
        set: SetRef,  # noqa: A002
        name: str,
        base_url: str,
        model: str,
        **fields: Any,
    ) -> dict[str, Any]:
        """Set up a judge: optional `api_key_env` (a CITEAUDIT_JUDGE_KEY_<NAME> variable),
        `temperature`, `max_concurrency`, `timeout_seconds`, `price_per_million`,
        `template` (the default prompt if left out). Returns the judge."""
        body = {"name": name, "base_url": base_url, "model": model, **fields}
        return self._request("POST", f"sets/{self._set_id(set)}/judges", json=body).json()

    def judge_version(self, judge: int, **fields: Any) -> dict[str, Any]:
        """Change a judge's settings (`template`, `model`, `temperature`, …); a new
        template, model or temperature makes a new version. Returns the judge."""
        return self._request("POST", f"judges/{judge}/versions", json=fields).json()

    def judge_threshold(self, judge: int, min_kappa: float, min_gold: int) -> dict[str, Any]:
        """Write down the threshold a version must meet to be accepted (after the first run
        it may only tighten). Returns the judge."""
        body = {"min_kappa": min_kappa, "min_gold": min_gold}
        return self._request("PUT", f"judges/{judge}/threshold", json=body).json()

    def judge_run(
        self,
        judge: int,
        subset: str = "all",
        system: str | None = None,
        *,
        wait: bool = False,
        poll: float = 1.0,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Queue a run of the judge's current version on `subset` ("all", "unreviewed",
        "controls", or "system" with `system`). With `wait=True` its job is polled until it
        ends and the run is read again (status, counts, the first verdicts)."""
        body: dict[str, Any] = {"subset": subset}
        if system is not None:
            body["system"] = system
        run = self._request("POST", f"judges/{judge}/runs", json=body).json()
        if wait and run.get("job") is not None:
            self.job_wait(run["job"], poll=poll, timeout=timeout)
            run = self.judge_run_read(run["id"])
        return run

    def judge_run_read(self, run: int, *, limit: int = 100, offset: int = 0) -> dict[str, Any]:
        """A run: its job's `status`, `verdicts` and `errors` counted, and a page of its
        verdicts (`items`)."""
        return self._get(f"judge-runs/{run}", limit=limit, offset=offset)

    def judge_calibration(self, judge: int, version: int | None = None) -> dict[str, Any]:
        """A version's agreement with gold (the current one if left out): `n_gold`, `kappa`
        with `kappa_low`/`kappa_high`, `accuracy`, `meets_threshold` and `why`."""
        return self._get(f"judges/{judge}/calibration", version=version)

    def judge_accept(self, judge: int, version: int | None = None) -> dict[str, Any]:
        """Accept a version for its set if it meets the written threshold (Conflict with
        the reason otherwise)."""
        body = {"version": version} if version is not None else {}
        return self._request("POST", f"judges/{judge}/accept", json=body).json()

    def answers_question(self, claim: int, value: bool = True) -> dict[str, Any]:
        """Mark a top-level claim as answering the question (`value=False` unmarks it)."""
        return self._request(
            "PUT", f"claims/{claim}/answers-question", json={"value": value}
        ).json()

    # ----------------------------------------------------------------------- runs, jobs

    def push(
        self,
        *,
        set: SetRef | None = None,  # noqa: A002 - the API's name
        file: FileInput,
        new_set_name: str | None = None,
        format: str = "auto",  # noqa: A002 - the API's name
        workspace: str | None = None,
        system: str | None = None,
        run: str | None = None,
        idempotency_key: str | None = None,
    ) -> Job:
        """Queue the import of a run's answers into `set`, or into a new set `new_set_name`;
        returns the queued job (follow it with job_wait). `file` is a path, bytes, an open
        binary file, or an iterable of records (dicts) sent as JSON Lines. TooLarge if the
        file is over the server's limit; a file's own problems end the job as failed.

        `system` names the system of every answer in the file; with `run` the file is that
        run of the system, whole: pushing the same run again replaces it by answer id.
        Each call sends an Idempotency-Key (`idempotency_key`, or a new random one) and
        reuses it on its own retries, so a retry after a lost answer queues nothing twice."""
        form = {"format": format}
        if set is not None:
            form["set"] = str(self._set_id(set))
        if new_set_name is not None:
            form["new_set_name"] = new_set_name
        if workspace is not None:
            form["workspace"] = workspace
        if system is not None:
            form["system"] = system
        if run is not None:
            form["run"] = run
        key = idempotency_key or uuid.uuid4().hex
        upload = _Upload(file, "answers.jsonl")
        response = self._request(
            "POST", "imports", data=form, upload=upload, headers={"Idempotency-Key": key}
        )
        return Job.from_api(response.json())

    def job(self, id: int) -> Job:  # noqa: A002
        """A job's state now."""
        return Job.from_api(self._get(f"jobs/{id}"))

    def jobs(
        self,
        status: str | None = None,
        set: SetRef | None = None,  # noqa: A002
        *,
        page_size: int = PAGE_SIZE,
    ) -> Iterator[Job]:
        """The jobs of the workspaces the token's owner leads, oldest first."""
        set_id = self._set_id(set) if set is not None else None
        for item in self._pages("jobs", page_size, status=status, set=set_id):
            yield Job.from_api(item)

    def job_wait(
        self,
        id: int,  # noqa: A002
        *,
        poll: float = 1.0,
        timeout: float | None = None,
        progress: Progress = None,
    ) -> Job:
        """Poll the job every `poll` seconds until it ends, and return it (check `.ok`).
        `progress` is called with `(done, total)` after each poll; `progress=True` draws a
        text bar on stderr. WaitTimeout after `timeout` seconds (the job goes on)."""
        bar = ProgressBar(f"job {id}") if progress is True else None
        report = bar or (progress if callable(progress) else None)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                job = self.job(id)
                if report is not None:
                    report(job.done, job.total)
                if job.ended:
                    return job
                if deadline is not None and time.monotonic() + poll > deadline:
                    raise WaitTimeout(
                        f"job {id} is still {job.status} ({job.done}/{job.total}) after {timeout} s"
                    )
                time.sleep(poll)
        finally:
            if bar is not None:
                bar.close()

    def job_cancel(self, id: int) -> Job:  # noqa: A002
        """Cancel a job: at once if queued, else at its next chunk (`cancelling` until
        then). Conflict once it has ended."""
        return Job.from_api(self._request("POST", f"jobs/{id}/cancel").json())

    def job_retry(self, id: int) -> Job:  # noqa: A002
        """Queue again a failed, cancelled or lost job under the same id. Conflict while it
        is queued or running, after it succeeded, or when its file is no longer kept."""
        return Job.from_api(self._request("POST", f"jobs/{id}/retry").json())

    # ------------------------------------------------------- answers, claims, sheets, gold

    def answers(
        self,
        set: SetRef,  # noqa: A002
        system: str | None = None,
        *,
        page_size: int = PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """The set's answers, optionally of one system."""
        yield from self._pages(f"sets/{self._set_id(set)}/answers", page_size, system=system)

    def claims(
        self,
        set: SetRef,  # noqa: A002
        status: str | None = None,
        system: str | None = None,
        label: str | None = None,
        *,
        question: str | None = None,
        batch: int | None = None,
        updated_since: datetime | str | None = None,
        page_size: int = PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """The set's claims (a reviewer: those assigned to them, with `my_sheet`), filtered
        by review `status`, `system`, the matcher's `label`, the `question` id, the import
        `batch` and `updated_since` (changed since then)."""
        path = f"sets/{self._set_id(set)}/claims"
        yield from self._pages(
            path,
            page_size,
            status=status,
            system=system,
            label=label,
            question=question,
            batch=batch,
            updated_since=(
                updated_since.isoformat() if isinstance(updated_since, datetime) else updated_since
            ),
        )

    def claim(self, id: int) -> dict[str, Any]:  # noqa: A002
        """A claim with the sheets the token's owner may see and its gold."""
        return self._get(f"claims/{id}")

    def sheets(
        self,
        set: SetRef,  # noqa: A002
        *,
        updated_since: datetime | str | None = None,
        system: str | None = None,
        question: str | None = None,
        batch: int | None = None,
        page_size: int = PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """The set's sheets (a reviewer: their own), filtered by when they were last written
        (`updated_since`, a datetime or ISO text), `system`, `question` id and import `batch`."""
        yield from self._pages(
            f"sets/{self._set_id(set)}/sheets",
            page_size,
            **_pull_filters(updated_since, system, question, batch),
        )

    def gold(
        self,
        set: SetRef,  # noqa: A002
        *,
        updated_since: datetime | str | None = None,
        system: str | None = None,
        question: str | None = None,
        batch: int | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Every gold record of the set (leads), read as the server streams it; filtered as
        `sheets` is."""
        params = _pull_filters(updated_since, system, question, batch)
        for line in self._lines(f"sets/{self._set_id(set)}/gold", params):
            if line.strip():
                yield json.loads(line)

    @overload
    def export(self, set: SetRef, format: str, path: None = None) -> Iterator[str]: ...  # noqa: A002

    @overload
    def export(self, set: SetRef, format: str, path: str | os.PathLike[str]) -> Path: ...  # noqa: A002

    def export(
        self,
        set: SetRef,  # noqa: A002
        format: str,  # noqa: A002
        path: str | os.PathLike[str] | None = None,
    ) -> Iterator[str] | Path:
        """The set's labelled data in an export format (`jsonl`, `audit-sheets`, `csv`,
        `evidence`; leads). With `path`, streamed into that file, which is returned;
        without, an iterator of its lines (a CSV field may hold a line break, so read CSV
        through `csv` from a file rather than line by line)."""
        where = f"sets/{self._set_id(set)}/exports/{format}"
        if path is None:
            return self._lines(where)
        target = Path(path)
        response = self._request("GET", where, stream=True)
        try:
            with target.open("wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
        finally:
            response.close()
        return target

    def _lines(self, path: str, params: Mapping[str, Any] | None = None) -> Iterator[str]:
        response = self._request("GET", path, params=params, stream=True)
        try:
            yield from response.iter_lines()
        finally:
            response.close()

    def verdicts_push(
        self,
        set: SetRef,  # noqa: A002
        file: FileInput,
        *,
        as_job: bool = False,
        wait: bool = False,
        timeout: float | None = None,
        progress: Progress = None,
    ) -> dict[str, Any] | Job:
        """An automatic judge's verdicts (the verdicts upload's format), all or nothing.
        A small file is stored at once: the summary (`judges`, `created`, `replaced`), or
        Invalid naming the file, line and field of the first problem. A big file, or any
        with `as_job=True`, is queued as a job with no bound on its verdicts: the Job, or
        with `wait=True` the ended Job (a refused line fails it, naming the line)."""
        upload = _Upload(file, "verdicts.jsonl")
        path = f"sets/{self._set_id(set)}/verdicts"
        params = {"async": "true"} if as_job else None
        response = self._request("POST", path, upload=upload, params=params)
        if response.status_code != 202:
            return response.json()
        job = Job.from_api(response.json())
        if wait:
            return self.job_wait(job.id, timeout=timeout, progress=progress)
        return job

    # ----------------------------------------------------------------------- suggestions

    def suggestions_push(
        self,
        set: SetRef,  # noqa: A002
        name: str,
        version: str,
        suggestions: Iterable[Mapping[str, Any]],
        *,
        description: str = "",
        as_job: bool | None = None,
        wait: bool = True,
        timeout: float | None = None,
        progress: Progress = None,
    ) -> dict[str, Any] | Job:
        """A model's suggestions for the set's claims, one mapping a claim in the
        suggestions file's format (`claim`, and any of `judgment`, `judgment_score`,
        `evidence`, `unsupported`, `wrong_citation`), all or nothing: the summary
        (`source`, `name`, `version`, `created`, `replaced`), or Invalid naming the record
        and field of the first problem. Pushing the same name and version again replaces
        its suggestions on those claims. Many records, or any with `as_job=True`, are
        queued as a job: with `wait=True` (the default) the ended Job, else the Job."""
        path = f"sets/{self._set_id(set)}/suggestions"
        body = {
            "name": name,
            "version": version,
            "description": description,
            "suggestions": [dict(record) for record in suggestions],
        }
        params = {"async": "true"} if as_job else None
        response = self._request("POST", path, json=body, params=params)
        if response.status_code != 202:
            return response.json()
        job = Job.from_api(response.json())
        if wait:
            return self.job_wait(job.id, timeout=timeout, progress=progress)
        return job

    def suggestion_sources(self, set: SetRef) -> list[dict[str, Any]]:  # noqa: A002
        """The set's sources of suggestions (`key`, `name`, `version`, `kind`): the matcher,
        each judge run, each pushed model."""
        return self._get(f"sets/{self._set_id(set)}/suggestion-sources")

    def suggestion_source_delete(self, set: SetRef, source: str | int) -> None:  # noqa: A002
        """Delete a pushed source (its `key`, `source:<id>`, or the id) and its suggestions.
        Conflict once reviewers were shown them: the source is kept with that record."""
        text = str(source)
        source_id = text.removeprefix("source:") if text.startswith("source:") else text
        self._request("DELETE", f"sets/{self._set_id(set)}/suggestion-sources/{source_id}")

    def suggestions(
        self,
        set: SetRef,  # noqa: A002
        source: str = "matcher",
        *,
        page_size: int = PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """One source's suggestions (its `key`, from suggestion_sources), a claim each."""
        yield from self._pages(f"sets/{self._set_id(set)}/suggestions", page_size, source=source)

    # --------------------------------------------------------------- agreement, release

    def agreement(self, set: SetRef, system: str | None = None) -> dict[str, Any]:  # noqa: A002
        """The agreement dashboard's figures, optionally for one system's answers."""
        return self._get(f"sets/{self._set_id(set)}/agreement", system=system)

    def report(self, set: SetRef) -> dict[str, Any]:  # noqa: A002
        """The release report: the criteria and, per system, metrics and decision."""
        return self._get(f"sets/{self._set_id(set)}/report")

    def decision(
        self,
        set: SetRef,  # noqa: A002
        system: str,
        *,
        run: str | None = None,
        with_judge: bool = False,
    ) -> dict[str, Any]:
        """`decision` (pass, fail, provisional, or none without criteria) for one system,
        each criterion's result and the claims failing it: of its run `run`, or of the run
        pushed last. With `with_judge`, the set's accepted automatic judge stands for the
        claims no human judged."""
        query = {"system": system, "run": run, "with_judge": "true" if with_judge else None}
        return self._get(f"sets/{self._set_id(set)}/decision", **query)

    def gate(
        self,
        set: SetRef,  # noqa: A002
        system: str,
        *,
        run: str | None = None,
        with_judge: bool = False,
        out: TextIO | None = None,
    ) -> int:
        """The release gate's exit code, as audit/gate.py gives it: 0 pass, 1 fail,
        2 provisional, 3 for no criteria or anything that kept it from a decision (an
        unknown set or system, a refused token, no connection, a crash), never 1 for those.
        The verdict and each criterion's result, or the error, go to `out` if given."""
        try:
            found = self.decision(set, system, run=run, with_judge=with_judge)
            code = EXIT_CODES.get(found["decision"], ERROR)
        except Exception as error:  # a broken gate is an error (3), never a failed system
            if out is not None:
                print(f"gate: {error}", file=out)
            return ERROR
        if out is not None:
            print(describe(found), file=out)
        return code


def describe(decision: Mapping[str, Any]) -> str:
    """A decision as a few lines for a CI log: the verdict, then each criterion's result
    with the first claims failing it."""
    lines = [f"{decision.get('system', '?')}: {str(decision.get('decision', '?')).upper()}"]
    if decision.get("criteria_error"):
        lines.append(f"  criteria could not be read: {decision['criteria_error']}")
    for result in decision.get("criteria") or ():
        mark = "ok  " if result.get("passed") else "FAIL"
        lines.append(f"  {mark} {result.get('criterion', '')} {result.get('detail', '')}")
        for claim in () if result.get("passed") else result.get("claims") or ():
            lines.append(f"       claim {claim.get('id')}: {str(claim.get('text', ''))[:120]}")
    return "\n".join(lines)


def _pull_filters(
    updated_since: datetime | str | None,
    system: str | None,
    question: str | None,
    batch: int | None,
) -> dict[str, Any]:
    """The query of an incremental pull; a datetime is sent as ISO 8601."""
    since = updated_since.isoformat() if isinstance(updated_since, datetime) else updated_since
    return {"updated_since": since, "system": system, "question": question, "batch": batch}
