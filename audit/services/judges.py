"""Automatic judges run by the app: their configuration and versions, the threshold a lead
writes before looking, runs as background jobs, and accepting a judge for its set.

A run asks an OpenAI-compatible chat-completions endpoint about each claim from a thread
pool and writes each verdict as it comes (not in one transaction like an import), so a
cancelled or stopped run keeps what it has and resuming it asks only about the rest.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from audit import egress
from audit.judge_calibration import Threshold, meets
from audit.judge_prompt import (
    DEFAULT_TEMPLATE,
    ClaimPrompt,
    JudgeReply,
    PassageText,
    ReplyError,
    check_reply,
    render_prompt,
)
from audit.models import (
    QUEUE_ORDER,
    AuditSet,
    Claim,
    Job,
    Judge,
    JudgeAcceptance,
    JudgeRun,
    JudgeThresholdChange,
    JudgeVerdict,
    JudgeVersion,
    Rater,
    RaterLabel,
    ReviewStatus,
)
from audit.roles import leads
from audit.services.jobs import JobCancelled, JobFailed, JobRefused, enqueue_job

if TYPE_CHECKING:
    import openai

# Fields of a judge that only say how to reach it: editing them keeps the version.
TRANSPORT_FIELDS = ("base_url", "api_key_env", "max_concurrency", "timeout_seconds")
# Fields its verdicts depend on: editing them (or the template) makes a new version.
VERSION_FIELDS = ("model", "temperature")
RAW_LIMIT = 4000
CHUNK = 200
# The only environment variables a judge may name: the operator puts judge keys there, so
# no other setting of the server (its secret key, the database's password) is reachable.
KEY_PREFIX = "CITEAUDIT_JUDGE_KEY_"
KEY_NAME = re.compile(re.escape(KEY_PREFIX) + r"[A-Z0-9_]{1,80}")


class JudgeError(Exception):
    """A judge action that cannot be done as asked; the message is for the lead."""


class JudgeRefused(JudgeError):
    """Settings a judge may not have; `field` names the one at fault."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def judge_settings_check(*, base_url: str, api_key_env: str, resolve: bool = True) -> None:
    """Refuse (JudgeRefused) a base URL the server may not send to, a key variable outside
    the judges' own, or a key the operator has not allowed to go to that URL's host.
    Every door that saves or runs a judge asks this."""
    allow = egress.Allow.parse(settings.EGRESS_ALLOW)
    try:
        target = egress.check_url(base_url, allow, resolve=resolve)
    except egress.EgressRefused as refusal:
        raise JudgeRefused(str(refusal), "base_url") from None
    if not api_key_env:
        return
    if not KEY_NAME.fullmatch(api_key_env):
        raise JudgeRefused(
            f"A judge’s key variable is named {KEY_PREFIX}<NAME> (capitals, digits, _), "
            "set by the operator where the worker runs; no other variable can be used.",
            "api_key_env",
        )
    if target.host not in judge_key_hosts().get(api_key_env, set()):
        raise JudgeRefused(
            f"{api_key_env} may not be sent to {target.host}: the operator names the hosts "
            "each key may go to in CITEAUDIT_JUDGE_KEY_HOSTS.",
            "api_key_env",
        )


def judge_key_hosts() -> dict[str, set[str]]:
    """The hosts each key variable may be sent to, from the operator's JUDGE_KEY_HOSTS."""
    hosts: dict[str, set[str]] = {}
    for entry in settings.JUDGE_KEY_HOSTS:
        name, _, host = entry.partition("=")
        hosts.setdefault(name.strip(), set()).add(host.strip().lower().rstrip("."))
    return hosts


def judge_refusal(judge: Judge) -> str:
    """Why this judge, as saved, cannot run now (saved before the rules, or the operator's
    settings changed), or "" when it can."""
    try:
        judge_settings_check(base_url=judge.base_url, api_key_env=judge.api_key_env, resolve=False)
    except JudgeRefused as refusal:
        return str(refusal)
    return ""


def _must_lead(user, audit_set: AuditSet) -> None:
    # Every door (page, API, command) passes through here: none may skip who may act.
    if not leads(user, audit_set):
        raise PermissionDenied("Only a lead of the set's workspace can manage its judges.")


def judge_create(*, audit_set: AuditSet, fields: dict, template: str = "", user) -> Judge:
    """Set up a judge for a set, with its first version (the default template if none).
    Raises JudgeRefused for settings no judge may have."""
    _must_lead(user, audit_set)
    judge_settings_check(base_url=fields["base_url"], api_key_env=fields.get("api_key_env", ""))
    with transaction.atomic():
        judge = Judge.objects.create(audit_set=audit_set, created_by=user, **fields)
        _new_version(judge, template or DEFAULT_TEMPLATE, user)
    return judge


def judge_update(*, judge: Judge, fields: dict, template: str, user) -> JudgeVersion:
    """Save a judge's settings; a new template, model or temperature makes a new version.
    Returns the current version. Raises JudgeRefused for settings no judge may have."""
    _must_lead(user, judge.audit_set)
    judge_settings_check(
        base_url=fields.get("base_url", judge.base_url),
        api_key_env=fields.get("api_key_env", judge.api_key_env),
    )
    with transaction.atomic():
        judge = Judge.objects.select_for_update().get(pk=judge.pk)
        current = judge_current_version(judge)
        for name, value in fields.items():
            setattr(judge, name, value)
        judge.save()
        changed = (
            template.replace("\r\n", "\n") != current.template
            or judge.model != current.model
            or judge.temperature != current.temperature
        )
        if changed:
            return _new_version(judge, template, user)
    return current


def judge_current_version(judge: Judge) -> JudgeVersion:
    return judge.versions.order_by("-number").first()


def _new_version(judge: Judge, template: str, user) -> JudgeVersion:
    number = (judge.versions.aggregate(top=Max("number"))["top"] or 0) + 1
    rater = Rater.objects.create(
        name=f"{judge.name} v{number} ({judge.model}) · judge {judge.pk}"[:200],
        kind=Rater.Kind.AUTOMATIC,
    )
    return JudgeVersion.objects.create(
        judge=judge,
        number=number,
        template=template.replace("\r\n", "\n"),
        model=judge.model,
        temperature=judge.temperature,
        rater=rater,
        created_by=user,
    )


def judge_threshold_set(*, judge: Judge, min_kappa: float, min_gold: int, user) -> None:
    """Write down the threshold a judge must meet to be accepted; logged, and marked when
    written after the judge's first run (verdicts could have been seen).

    Raises JudgeError for fewer gold claims than the operator's floor
    (settings.JUDGE_MIN_GOLD_FLOOR), and after the first run for any change that is not a
    tightening: a threshold chosen after looking may only ask for more."""
    _must_lead(user, judge.audit_set)
    floor = settings.JUDGE_MIN_GOLD_FLOOR
    if min_gold < floor:
        raise JudgeError(f"Ask for at least {floor} gold claims: fewer cannot show a judge agrees.")
    with transaction.atomic():
        judge = Judge.objects.select_for_update().get(pk=judge.pk)
        before = _threshold(judge)
        after = {"min_kappa": min_kappa, "min_gold": min_gold}
        if before == after:
            return
        if (
            judge.threshold_locked_at is not None
            and before
            and (min_kappa < before["min_kappa"] or min_gold < before["min_gold"])
        ):
            raise JudgeError(
                "After the first run the threshold may only tighten: "
                f"κ at least {before['min_kappa']:.2f} on at least {before['min_gold']} "
                "gold claims."
            )
        judge.min_kappa, judge.min_gold = min_kappa, min_gold
        judge.save(update_fields=["min_kappa", "min_gold"])
        JudgeThresholdChange.objects.create(
            judge=judge,
            by=user,
            before=before,
            after=after,
            after_lock=judge.threshold_locked_at is not None,
        )


def judge_threshold(judge: Judge) -> Threshold:
    """The judge's written threshold with the operator's floor, as acceptance applies it."""
    return Threshold(
        min_kappa=judge.min_kappa,
        min_gold=judge.min_gold,
        floor=settings.JUDGE_MIN_GOLD_FLOOR,
    )


def _threshold(judge: Judge) -> dict:
    if not judge.has_threshold:
        return {}
    return {"min_kappa": judge.min_kappa, "min_gold": judge.min_gold}


def subset_claims(*, audit_set: AuditSet, subset: str, system: str = "") -> list[int]:
    """The claims a run covers, in queue order: every claim a reviewer could judge (a split
    claim's parts, not the claim itself), or those no human has judged, or the set's
    controls, or one system's."""
    claims = Claim.objects.filter(answer__audit_set=audit_set).exclude(
        review_status=ReviewStatus.SPLIT
    )
    if subset == JudgeRun.Subset.UNREVIEWED:
        claims = claims.filter(adjudication__isnull=True).exclude(sheets__status="submitted")
    elif subset == JudgeRun.Subset.CONTROLS:
        # The claims a lead chose to measure reviewers by: the same test for a judge.
        claims = claims.filter(control__isnull=False)
    elif subset == JudgeRun.Subset.SYSTEM:
        claims = claims.filter(answer__system=system)
    return list(claims.order_by(*QUEUE_ORDER).values_list("pk", flat=True).distinct())


def judge_run_start(*, judge: Judge, subset: str, system: str = "", user) -> JudgeRun:
    """Queue a run of the judge's current version over a subset of its set's claims.

    Refused until the lead has written the acceptance threshold: it must be written before
    any verdict can be looked at. The first run locks it (later edits are marked).
    """
    _must_lead(user, judge.audit_set)
    if not judge.has_threshold:
        raise JudgeError("Write down the acceptance threshold before the first run.")
    if judge.min_gold < settings.JUDGE_MIN_GOLD_FLOOR:
        # A threshold written before the floor was raised: it must be raised first.
        raise JudgeError(
            f"The threshold asks for {judge.min_gold} gold claims; write down at least "
            f"{settings.JUDGE_MIN_GOLD_FLOOR} before running."
        )
    claim_ids = subset_claims(audit_set=judge.audit_set, subset=subset, system=system)
    if not claim_ids:
        raise JudgeError("No claims in this subset.")
    with transaction.atomic():
        judge = Judge.objects.select_for_update().get(pk=judge.pk)
        # The settings as stored: saved before the rules, or the operator's changed since.
        refusal = judge_refusal(judge)
        if refusal:
            raise JudgeError(f"This judge cannot run: {refusal}")
        if judge.threshold_locked_at is None:
            judge.threshold_locked_at = timezone.now()
            judge.save(update_fields=["threshold_locked_at"])
        run = JudgeRun.objects.create(
            judge=judge,
            version=judge_current_version(judge),
            subset=subset,
            system=system if subset == JudgeRun.Subset.SYSTEM else "",
            claim_ids=claim_ids,
            created_by=user,
        )
        _queue(run, user)
    return run


def judge_run_resume(*, run: JudgeRun, user) -> JudgeRun:
    """Queue a stopped run again: it asks only about claims without a verdict in this run
    (those that ended in an error are asked again)."""
    _must_lead(user, run.judge.audit_set)
    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().get(pk=run.pk)
        if run.job is not None and not run.job.finished:
            raise JobRefused("This run is still queued or running.")
        _queue(run, user)
    return run


def _queue(run: JudgeRun, user) -> None:
    job = Job.objects.create(
        kind=Job.Kind.JUDGE,
        audit_set=run.judge.audit_set,
        created_by=user,
        token=os.urandom(16).hex(),
        params={"run": run.pk},
        total=len(run.claim_ids),
    )
    run.job = job
    run.save(update_fields=["job"])
    enqueue_job(job)


@dataclass
class Outcome:
    """What one claim's requests came to, before anything is written."""

    reply: JudgeReply | None = None
    error: str = ""
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0
    raw: str = ""
    waits: list[float] = field(default_factory=list)


# How often a running judge looks for a lead's cancel while its requests are in flight, and
# how long a cancelled run still waits for the replies already on their way.
CANCEL_POLL_SECONDS = 1.0
CANCEL_GRACE_SECONDS = 3.0


def judge_run_execute(*, run_id: int, progress_for: Callable[[int], Callable[[int], None]]) -> dict:
    """The job's work: ask about every claim of the run not yet judged in it, store each
    verdict or error as it arrives. `progress_for(total)` gives the job's progress callback,
    which raises JobCancelled when a lead cancels (what is stored stays)."""
    run = JudgeRun.objects.select_related("judge__audit_set", "version").get(pk=run_id)
    judge, version = run.judge, run.version
    # Asked again here: the judge may have been saved before these rules, or the operator's
    # settings may have changed since the run was queued.
    refusal = judge_refusal(judge)
    if refusal:
        raise JobFailed(f"This judge cannot run: {refusal}")
    if judge.api_key_env and not os.environ.get(judge.api_key_env):
        raise JobFailed(
            f"The environment variable {judge.api_key_env} is not set where the worker runs."
        )
    judged = set(JudgeVerdict.objects.filter(run=run, error="").values_list("claim_id", flat=True))
    todo = [pk for pk in run.claim_ids if pk not in judged]
    progress = progress_for(len(run.claim_ids))
    progress(len(run.claim_ids) - len(todo))
    # Imported here: the client library takes ~0.5 s to import, which every other command
    # (an import, an export) and every web process would otherwise pay at start.
    import openai

    client = openai.OpenAI(
        base_url=judge.base_url,
        api_key=os.environ.get(judge.api_key_env, "") if judge.api_key_env else "none",
        max_retries=0,
        timeout=judge.timeout_seconds,
        http_client=_guarded_http_client(judge),
    )
    pool = ThreadPoolExecutor(max_workers=judge.max_concurrency)
    futures: dict = {}
    try:
        for start in range(0, len(todo), CHUNK):
            prompts = claim_prompts(todo[start : start + CHUNK], judge.audit_set.guidelines)
            futures = {
                pool.submit(ask_judge, client, version, prompt): claim_id
                for claim_id, prompt in prompts.items()
            }
            while futures:
                # Woken at least every CANCEL_POLL_SECONDS, so a cancel is seen within
                # seconds even while every request waits on a slow endpoint.
                done, _ = wait(futures, timeout=CANCEL_POLL_SECONDS, return_when=FIRST_COMPLETED)
                for future in done:
                    _store(run, futures.pop(future), future.result())
                progress(len(done))
            progress(len(todo[start : start + CHUNK]) - len(prompts))  # claims gone since
    except JobCancelled:
        # Requests not yet sent are dropped. Those in flight get a short grace to finish and
        # are kept, as their tokens are spent; the rest are abandoned (their threads end at
        # the judge's own timeout) and resuming asks about them again.
        pool.shutdown(wait=False, cancel_futures=True)
        wait(futures, timeout=CANCEL_GRACE_SECONDS)
        for future, claim_id in futures.items():
            if future.done() and not future.cancelled():
                _store(run, claim_id, future.result())
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        client.close()
    counts = JudgeVerdict.objects.filter(run=run)
    return {
        "audit_set": judge.audit_set_id,
        "run": run.pk,
        "verdicts": counts.filter(error="").count(),
        "errors": counts.exclude(error="").count(),
    }


def claim_prompts(claim_ids: list[int], guidelines: str) -> dict[int, ClaimPrompt]:
    """What the judge is shown about each claim, by claim id, in the order given."""
    claims = (
        Claim.objects.filter(pk__in=claim_ids)
        .select_related("answer__question")
        .prefetch_related("citations", "answer__passages")
    )
    by_id = {}
    for claim in claims:
        cited = {p.position for p in claim.citations.all()}
        by_id[claim.pk] = ClaimPrompt(
            guidelines=guidelines,
            question=claim.answer.question.text,
            answer=claim.answer.text,
            claim=claim.text,
            claim_start=claim.start,
            claim_end=claim.end,
            passages=tuple(
                PassageText(
                    position=p.position, title=p.title, text=p.text, cited=p.position in cited
                )
                for p in sorted(claim.answer.passages.all(), key=lambda p: p.position)
            ),
        )
    return {pk: by_id[pk] for pk in claim_ids if pk in by_id}


def ask_judge(client: openai.OpenAI, version: JudgeVersion, prompt: ClaimPrompt) -> Outcome:
    """Ask about one claim; runs in a pool thread, so it touches no database.

    An invalid reply is asked again once; a 429 is asked again once after its Retry-After
    (at most settings.JUDGE_MAX_RETRY_AFTER seconds). Anything else ends as a stored error.
    """
    import openai  # loaded by judge_run's client already: a lookup, not an import

    out = Outcome()
    content = render_prompt(version.template, prompt)
    asked_again = waited = False
    while True:
        out.attempts += 1
        started = time.monotonic()
        try:
            response = client.chat.completions.create(
                model=version.model,
                temperature=version.temperature,
                messages=[{"role": "user", "content": content}],
            )
        except openai.RateLimitError as refusal:
            out.latency_ms += _ms(started)
            wait = _retry_after(refusal.response.headers.get("retry-after"))
            shown = f"Retry-After {refusal.response.headers.get('retry-after')!r}"
            if not waited and wait is not None and wait <= settings.JUDGE_MAX_RETRY_AFTER:
                waited = True
                out.waits.append(wait)
                time.sleep(wait)
                continue
            if waited:
                out.error = f"Rate limited: the endpoint answered 429 again ({shown})."
            else:
                out.error = f"Rate limited: the endpoint answered 429 ({shown}); not retried."
            return out
        except openai.APITimeoutError:
            out.latency_ms += _ms(started)
            out.error = f"Timeout: no reply within {client.timeout} s."
            return out
        except openai.APIConnectionError as failure:
            out.latency_ms += _ms(started)
            out.error = _connection_error(client, failure)
            return out
        except openai.APIStatusError as failure:
            out.latency_ms += _ms(started)
            out.error = (
                f"The endpoint answered HTTP {failure.status_code}: {_clip(failure.message)}"
            )
            return out
        except openai.OpenAIError as failure:
            out.latency_ms += _ms(started)
            out.error = f"Not a chat completion: {_clip(str(failure))}"
            return out
        out.latency_ms += _ms(started)
        usage = getattr(response, "usage", None)
        out.prompt_tokens += getattr(usage, "prompt_tokens", 0) or 0
        out.completion_tokens += getattr(usage, "completion_tokens", 0) or 0
        choices = getattr(response, "choices", None) or []
        reply_text = choices[0].message.content if choices else None
        out.raw = (reply_text or "")[:RAW_LIMIT]
        try:
            out.reply = check_reply(reply_text, prompt)
            return out
        except ReplyError as invalid:
            if not asked_again:
                asked_again = True
                continue
            out.error = f"Invalid reply (asked twice): {invalid}"
            return out


def _connection_error(client: openai.OpenAI, failure: Exception) -> str:
    """What a lead is told of a request that got no usable reply: the guard's own words
    when it refused or cut it (never the reply's body)."""
    cause: BaseException | None = failure
    while cause is not None and not isinstance(cause, egress.EgressError):
        cause = cause.__cause__
    if isinstance(cause, egress.EgressRefused):
        return f"Refused: {cause}"
    if isinstance(cause, egress.EgressTooLarge | egress.EgressRedirect):
        return f"Reply refused: {cause}"
    detail = cause or failure
    return f"Unreachable: could not connect to {client.base_url} ({detail})."


def _guarded_http_client(judge: Judge):
    """The judge client's HTTP client: every request through egress.fetch, with the judge's
    timeout as the deadline for the whole request and the reply capped in size."""
    import httpx2  # the openai client's own HTTP library, loaded with it

    allow = egress.Allow.parse(settings.EGRESS_ALLOW)

    class GuardedTransport(httpx2.BaseTransport):
        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            try:
                reply = egress.fetch(
                    request.method,
                    str(request.url),
                    allow=allow,
                    time_limit=judge.timeout_seconds,
                    max_bytes=settings.JUDGE_MAX_REPLY_BYTES,
                    headers=dict(request.headers),
                    body=request.read(),
                )
            except egress.EgressTimeout as failure:
                raise httpx2.ReadTimeout(str(failure), request=request) from failure
            except egress.EgressError as failure:
                raise httpx2.ConnectError(str(failure), request=request) from failure
            return httpx2.Response(
                reply.status, headers=reply.headers, content=reply.body, request=request
            )

    # No proxies from the environment: they would take the request past the guard.
    return httpx2.Client(transport=GuardedTransport(), trust_env=False, follow_redirects=False)


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return 1.0
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: not worth parsing to wait that long


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _store(run: JudgeRun, claim_id: int, outcome: Outcome) -> None:
    """Write one claim's verdict (or error) in this run; a verdict also becomes the version's
    rater label on the claim, with its provenance in the label's note."""
    reply = outcome.reply
    values = {
        "judgment": reply.judgment if reply else "",
        "evidence": [
            {
                "sentence": s.number,
                "passage": s.passage,
                "start": s.start,
                "end": s.end,
                "text": s.text,
            }
            for s in reply.evidence
        ]
        if reply
        else [],
        "unsupported_spans": list(reply.unsupported_spans) if reply else [],
        "wrong_citation_passage": reply.wrong_citation_passage if reply else None,
        "answers_question": reply.answers_question if reply else None,
        "rationale": reply.rationale if reply else "",
        "error": outcome.error,
        "attempts": outcome.attempts,
        "prompt_tokens": outcome.prompt_tokens,
        "completion_tokens": outcome.completion_tokens,
        "latency_ms": outcome.latency_ms,
        "raw_reply": outcome.raw,
    }
    with transaction.atomic():
        JudgeVerdict.objects.update_or_create(run=run, claim_id=claim_id, defaults=values)
        if reply is None:
            return
        version, judge = run.version, run.judge
        RaterLabel.objects.update_or_create(
            rater_id=version.rater_id,
            claim_id=claim_id,
            defaults={
                "judgment": reply.judgment,
                "raw_label": reply.judgment,
                "evidence": [s.text for s in reply.evidence],
                "rationale": reply.rationale,
                "note": (
                    f"judge {judge.name}; model {version.model}; prompt v{version.number}; "
                    f"run {run.pk}"
                ),
            },
        )


def judge_accept(*, version: JudgeVersion, user) -> JudgeAcceptance:
    """Accept a judge version for its set, if its calibration meets the written threshold;
    it replaces any version accepted before in the set."""
    _must_lead(user, version.judge.audit_set)
    from audit.selectors.judges import judge_calibration

    judge = Judge.objects.get(pk=version.judge_id)  # the threshold as written now
    if not judge.has_threshold:
        raise JudgeError("No threshold was written down for this judge.")
    overall, _splits = judge_calibration(version=version)
    ok, why = meets(judge_threshold(judge), overall)
    if not ok:
        raise JudgeError(f"Not accepted: {why}")
    with transaction.atomic():
        JudgeAcceptance.objects.filter(version__judge__audit_set=judge.audit_set).delete()
        return JudgeAcceptance.objects.create(
            version=version,
            by=user,
            n_gold=overall.n,
            kappa=overall.report.kappa,
            kappa_low=overall.kappa_ci.low,
            kappa_high=overall.kappa_ci.high,
            threshold={
                **_threshold(judge),
                "changed_after_lock": judge.threshold_changes.filter(after_lock=True).exists(),
            },
        )


def judge_raters_forget(*, rater_ids: list[int]) -> None:
    """Delete the raters of judge versions that are gone (their set was deleted): a version
    protects its rater, so the rater outlives it, empty, unless deleted here."""
    Rater.objects.filter(pk__in=rater_ids, judge_version__isnull=True).delete()
