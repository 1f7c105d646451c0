"""Reads of automatic judges: a set's judges and runs, a run's costs, a version's
calibration against adjudicated gold, and which claims an accepted judge fills."""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from django.conf import settings
from django.db.models import Avg, Count, Q, QuerySet, Sum

from audit.judge_calibration import (
    Calibration,
    GoldPair,
    Split,
    calibrate,
    claim_has_numbers,
    splits,
)
from audit.judgments import assertion_texts
from audit.metrics import ClaimLabel
from audit.models import (
    AuditSet,
    Claim,
    Judge,
    JudgeAcceptance,
    JudgeRun,
    JudgeVerdict,
    JudgeVersion,
    RaterLabel,
    ReviewStatus,
)
from audit.selectors.blindness import blind_claim_ids
from audit.selectors.release import evidence_spans


def judges_of_set(*, audit_set: AuditSet) -> QuerySet[Judge]:
    return Judge.objects.filter(audit_set=audit_set).order_by("name", "pk")


def judge_of_set(*, pk: int) -> Judge | None:
    """A judge by id, whatever its set; the caller checks the set through access helpers."""
    return Judge.objects.select_related("audit_set").filter(pk=pk).first()


@dataclass(frozen=True)
class RunCost:
    claims: int  # in the run
    judged: int  # verdicts without error
    errors: int
    prompt_tokens: int
    completion_tokens: int
    mean_latency_ms: float | None
    tokens_per_1000: int | None  # per 1,000 claims asked about
    money_per_1000: Decimal | None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def run_cost(*, run: JudgeRun) -> RunCost:
    sums = run.verdicts.aggregate(
        asked=Count("pk"),
        errors=Count("pk", filter=~Q(error="")),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        latency=Avg("latency_ms"),
    )
    asked = sums["asked"]
    tokens = (sums["prompt"] or 0) + (sums["completion"] or 0)
    per_1000 = round(tokens * 1000 / asked) if asked else None
    price = run.judge.price_per_million
    money = None
    if per_1000 is not None and price is not None:
        money = (Decimal(per_1000) * price / Decimal(1_000_000)).quantize(Decimal("0.0001"))
    return RunCost(
        claims=len(run.claim_ids),
        judged=asked - sums["errors"],
        errors=sums["errors"],
        prompt_tokens=sums["prompt"] or 0,
        completion_tokens=sums["completion"] or 0,
        mean_latency_ms=sums["latency"],
        tokens_per_1000=per_1000,
        money_per_1000=money,
    )


def gold_pairs(*, version: JudgeVersion) -> list[GoldPair]:
    """The version's latest verdict on each adjudicated claim of its set, with the claim's
    system, topics, machine label and whether it has numbers."""
    rows = (
        RaterLabel.objects.filter(
            rater_id=version.rater_id,
            claim__answer__audit_set_id=version.judge.audit_set_id,
            claim__adjudication__isnull=False,
        )
        .exclude(judgment="")
        .values(
            "claim_id",
            "judgment",
            "claim__adjudication__judgment",
            "claim__answer__system",
            "claim__answer__metadata",
            "claim__machine_check__label",
            "claim__text",
        )
        .order_by("claim_id")
    )
    pairs = []
    for row in rows:
        topics = (row["claim__answer__metadata"] or {}).get("topics") or []
        pairs.append(
            GoldPair(
                claim_id=row["claim_id"],
                gold=row["claim__adjudication__judgment"],
                judge=row["judgment"],
                system=row["claim__answer__system"],
                topics=tuple(str(t) for t in topics) if isinstance(topics, list) else (),
                trust=row["claim__machine_check__label"] or "",
                has_numbers=claim_has_numbers(row["claim__text"]),
            )
        )
    return pairs


def judge_calibration(*, version: JudgeVersion) -> tuple[Calibration, tuple[Split, ...]]:
    pairs = gold_pairs(version=version)
    return calibrate(pairs), splits(pairs)


def accepted_version(*, audit_set: AuditSet) -> JudgeAcceptance | None:
    """The set's accepted judge version. One accepted on fewer gold claims than the
    operator's floor (before the floor was set, or under a lower one) no longer counts."""
    return (
        JudgeAcceptance.objects.select_related("version__judge", "by")
        .filter(version__judge__audit_set=audit_set, n_gold__gte=settings.JUDGE_MIN_GOLD_FLOOR)
        .first()
    )


@dataclass(frozen=True)
class Provenance:
    """Where a system's claims get their verdicts, kept apart on the release report."""

    system: str
    claims: int
    gold: int  # adjudicated by humans
    provisional: int  # submitted sheets, no gold yet
    unjudged: int  # no human verdict at all
    judge_filled: int  # of the unjudged, those the accepted judge has a verdict on
    judge_supported: int  # of those, judged supported


def release_provenance(*, audit_set: AuditSet) -> list[Provenance]:
    """Per system: claims with human gold, with provisional sheets, with no human verdict,
    and how many of the last an accepted judge fills (none when no judge is accepted)."""
    accepted = accepted_version(audit_set=audit_set)
    rater_id = accepted.version.rater_id if accepted else None
    claims = Claim.objects.filter(answer__audit_set=audit_set, parent__isnull=True).exclude(
        review_status=ReviewStatus.SPLIT
    )
    human = Q(adjudication__isnull=False)
    sheets = Q(review_status__in=_SUBMITTED)
    rows = (
        claims.values("answer__system")
        .annotate(
            claims=Count("pk", distinct=True),
            gold=Count("pk", filter=human, distinct=True),
            provisional=Count("pk", filter=~human & sheets, distinct=True),
        )
        .order_by("answer__system")
    )
    filled: dict[str, tuple[int, int]] = {}
    if rater_id is not None:
        for row in (
            RaterLabel.objects.filter(rater_id=rater_id, claim__in=_no_human_verdict(claims))
            .exclude(judgment="")
            .values("claim__answer__system")
            .annotate(n=Count("pk"), supported=Count("pk", filter=Q(judgment="supported")))
        ):
            filled[row["claim__answer__system"]] = (row["n"], row["supported"])
    return [
        Provenance(
            system=row["answer__system"],
            claims=row["claims"],
            gold=row["gold"],
            provisional=row["provisional"],
            unjudged=row["claims"] - row["gold"] - row["provisional"],
            judge_filled=filled.get(row["answer__system"], (0, 0))[0],
            judge_supported=filled.get(row["answer__system"], (0, 0))[1],
        )
        for row in rows
    ]


@dataclass(frozen=True)
class JudgeFill:
    """A set's labels with its accepted judge's verdicts standing for the claims no human
    judged: what "with the accepted judge" figures and decisions are computed from, always
    beside the human-only ones and never in their place."""

    acceptance: JudgeAcceptance
    labels: list[ClaimLabel]
    filled: frozenset[int]  # claims whose label is the judge's


# Review statuses of a claim with at least one submitted sheet: a human verdict, if provisional.
_SUBMITTED = [ReviewStatus.PARTLY, ReviewStatus.SUBMITTED, ReviewStatus.DISAGREEMENT]


def _no_human_verdict(claims: QuerySet[Claim]) -> QuerySet[Claim]:
    """Top-level claims with neither gold nor a submitted sheet: those release_provenance
    counts as "no human verdict", the only ones an accepted judge may stand for."""
    return claims.filter(parent__isnull=True, adjudication__isnull=True).exclude(
        review_status__in=[ReviewStatus.SPLIT, *_SUBMITTED]
    )


def judge_filled_labels(
    *, audit_set: AuditSet, labels: list[ClaimLabel], viewer=None
) -> JudgeFill | None:
    """`labels` (the report's, for `viewer`) with each claim no human judged labelled by the
    accepted judge's latest verdict on it: its judgment, evidence sentences, unsupported
    words and wrong-citation passage, no longer provisional. None when no judge is accepted.

    A claim the viewer still reviews keeps no verdict, as it has none on the report: a lead
    who also reviews must not read the judge's call on a claim before judging it."""
    accepted = accepted_version(audit_set=audit_set)
    if accepted is None:
        return None
    # The labels' claims are picked here, not passed to the database: a set's 100k ids in
    # one IN list would pass SQLite's limit on a query's parameters.
    wanted = {label.claim_id for label in labels}
    if viewer is not None:
        wanted -= blind_claim_ids(user=viewer, audit_set=audit_set)
    open_claims = _no_human_verdict(Claim.objects.filter(answer__audit_set=audit_set))
    latest: dict[int, dict] = {}
    # Runs in order, so a later run's verdict on a claim replaces an earlier one's, as the
    # version's rater label does.
    for row in (
        JudgeVerdict.objects.filter(run__version=accepted.version, claim__in=open_claims)
        .exclude(judgment="")
        .order_by("run_id", "pk")
        .values(
            "claim_id",
            "judgment",
            "evidence",
            "unsupported_spans",
            "wrong_citation_passage",
            "answers_question",
        )
    ):
        if row["claim_id"] in wanted:
            latest[row["claim_id"]] = row
    filled = []
    for label in labels:
        row = latest.get(label.claim_id)
        if row is None:
            filled.append(label)
            continue
        filled.append(
            replace(
                label,
                judgment=row["judgment"],
                provisional=False,
                evidence=evidence_spans(row["evidence"]),
                wrong_citation_passage=row["wrong_citation_passage"],
                unsupported=assertion_texts(row["unsupported_spans"]),
                # A claim marked by a lead stays marked; the judge may mark one too, so that
                # "no claim that answers the question is backed only partially" can fail.
                answers_question=label.answers_question or bool(row["answers_question"]),
            )
        )
    return JudgeFill(acceptance=accepted, labels=filled, filled=frozenset(latest))


def run_numbers(*, judge: Judge) -> dict[int, int]:
    """Each run's number among its judge's runs (run id → 1, 2, …): run numbers count per
    judge, not across the set's judges."""
    ids = judge.runs.order_by("pk").values_list("pk", flat=True)
    return {pk: number for number, pk in enumerate(ids, start=1)}


def run_outcome(*, run: JudgeRun, cost: RunCost) -> str:
    """A run's state as its pages say it: a finished job whose every claim failed is not
    simply "Finished"."""
    if run.job is None:
        return ""
    status = run.job.get_status_display()
    if not run.job.finished or run.job.status != run.job.Status.SUCCEEDED:
        return status
    if cost.errors and not cost.judged:
        return f"Failed on every claim ({cost.errors} error{'s' if cost.errors != 1 else ''})"
    if cost.errors:
        return f"{status} with {cost.errors} error{'s' if cost.errors != 1 else ''}"
    return status
