"""Reads for release metrics and run comparison: runs, verdicts, claim labels, criteria."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import (
    Max,
    Q,
    QuerySet,
)
from django.db.models.functions import Left

from audit import judgments
from audit.comparison import RunClaim, RunComparison, compare_runs
from audit.metrics import (
    RELEASE_FLAGS,
    ClaimLabel,
    ReleaseCounts,
    ReleaseFlags,
    release_counts_weighted,
)
from audit.models import (
    QUEUE_ORDER,
    Adjudication,
    Answer,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    ReleaseTally,
)
from audit.selectors.adjudication import set_systems
from audit.selectors.blindness import blind_claims

# ------------------------------------------------------------------------- release metrics


class UnknownRun(LookupError):
    """A run key that names neither a system nor an import of the set (views answer 404)."""


class SameRun(ValueError):
    """A comparison of a run with itself, which says nothing."""


@dataclass(frozen=True)
class Run:
    """A run to report on or compare: a system of the set, or one import batch."""

    key: str  # "system:<name>" or "import:<pk>"
    name: str


def set_runs(*, audit_set: AuditSet) -> list[Run]:
    runs = [Run(f"system:{name}", name) for name in set_systems(audit_set=audit_set)]
    for batch in audit_set.imports.order_by("created_at", "pk").only("pk", "filename"):
        runs.append(Run(f"import:{batch.pk}", f"import #{batch.pk} · {batch.filename}"))
    return runs


def compare_defaults(*, audit_set: AuditSet) -> tuple[str, str] | None:
    """The run keys the comparison page starts with: the set's two most recently imported
    systems, older first; the two latest import batches when it has one system only."""
    systems = list(
        Answer.objects.filter(audit_set=audit_set)
        .values("system")
        .annotate(latest=Max("created_at"), last_pk=Max("pk"))
        .order_by("-latest", "-last_pk")
        .values_list("system", flat=True)[:2]
    )
    if len(systems) == 2:
        return f"system:{systems[1]}", f"system:{systems[0]}"
    batches = list(
        audit_set.imports.order_by("-created_at", "-pk").values_list("pk", flat=True)[:2]
    )
    if len(batches) == 2:
        return f"import:{batches[1]}", f"import:{batches[0]}"
    return None


def _run_filter(run_key: str | None) -> Q:
    if not run_key:
        return Q()
    kind, _, value = run_key.partition(":")
    if kind == "system":
        return Q(answer__system=value)
    if kind == "import" and value.isdigit():
        return Q(answer__import_batch_id=int(value))
    raise UnknownRun(run_key)


def evidence_spans(evidence: list) -> tuple[tuple[int, int, int], ...]:
    spans = []
    for item in evidence or []:
        try:
            spans.append((int(item["passage"]), int(item["start"]), int(item["end"])))
        except (KeyError, TypeError, ValueError):
            continue
    return tuple(spans)


@dataclass(frozen=True)
class _Verdict:
    judgment: str | None
    provisional: bool
    verification_worthy: bool
    evidence: tuple[tuple[int, int, int], ...]
    wrong_passage: int | None
    numbers_overridden: bool = False
    answers_question: bool = False
    unsupported: tuple[str, ...] = ()


# The verdict of a claim without gold, submitted sheets or atomic parts (every new claim).
UNJUDGED = _Verdict(None, True, True, (), None)


def claim_label(
    *,
    claim_id: int,
    answer_id: int,
    system: str,
    verdict: _Verdict = UNJUDGED,
    citations: Iterable[int],
    cited_unknown: list | tuple | None,
    ungrounded: int,
    topics: frozenset[str],
    uncited: bool,
    answers_question: bool,
) -> ClaimLabel:
    """A top-level claim's label from its stored facts (citations: the cited passages'
    positions in order; cited_unknown: Claim.cited_unknown) and its verdict. Pure: an
    import labels the claims it creates with it before they are read back."""
    return ClaimLabel(
        claim_id=claim_id,
        answer_id=answer_id,
        system=system,
        judgment=verdict.judgment,
        provisional=verdict.provisional,
        verification_worthy=verdict.verification_worthy,
        citations=tuple(citations),
        cited_unknown=tuple(m for m in cited_unknown or () if isinstance(m, int)),
        evidence=verdict.evidence,
        wrong_citation_passage=verdict.wrong_passage,
        ungrounded_numbers=ungrounded,
        numbers_overridden=verdict.numbers_overridden,
        topics=topics,
        uncited=uncited,
        answers_question=answers_question or verdict.answers_question,
        unsupported=verdict.unsupported,
    )


def ungrounded_numbers(numbers: list | None) -> int:
    """How many numbers of a claim its check did not find (ClaimCheck.numbers)."""
    return sum(1 for n in numbers or [] if not n.get("grounded"))


def answer_topics(metadata: object) -> frozenset[str]:
    """An answer's topics, from its metadata's "topics" list of strings."""
    raw = metadata.get("topics", []) if isinstance(metadata, dict) else []
    return frozenset(t for t in raw if isinstance(t, str)) if isinstance(raw, list) else frozenset()


def _verdicts(claims: QuerySet[Claim], *, viewer=None) -> dict[int, _Verdict]:
    """Gold where adjudicated; else the submitted sheets' shared judgment, provisional.

    A claim the viewer still reviews has no verdict for them (see blind_claims).
    """
    if viewer is not None:
        claims = claims.exclude(pk__in=blind_claims(user=viewer))
    verdicts: dict[int, _Verdict] = {}
    for row in Adjudication.objects.filter(claim__in=claims).values(
        "claim_id",
        "judgment",
        "verification_worthy",
        "evidence",
        "wrong_citation_passage__position",
        "numbers_overridden",
        "answers_question",
        "unsupported_assertions",
    ):
        verdicts[row["claim_id"]] = _Verdict(
            row["judgment"],
            False,
            row["verification_worthy"],
            evidence_spans(row["evidence"]),
            row["wrong_citation_passage__position"],
            row["numbers_overridden"],
            row["answers_question"],
            judgments.assertion_texts(row["unsupported_assertions"]),
        )
    sheets: dict[int, list[dict]] = defaultdict(list)
    for row in (
        AuditSheet.objects.filter(claim__in=claims, status=AuditSheet.Status.SUBMITTED)
        .exclude(claim_id__in=list(verdicts))
        .order_by("pk")
        .values(
            "claim_id",
            "judgment",
            "verification_worthy",
            "evidence",
            "wrong_citation_passage__position",
            "answers_question",
            "unsupported_assertions",
        )
    ):
        sheets[row["claim_id"]].append(row)
    for claim_id, rows in sheets.items():
        agreed = len({row["judgment"] for row in rows}) == 1
        first = rows[0]
        verdicts[claim_id] = _Verdict(
            first["judgment"] if agreed else None,
            True,
            # Left out of the denominator only when every reviewer says so.
            any(row["verification_worthy"] for row in rows),
            evidence_spans(first["evidence"]) if agreed else (),
            first["wrong_citation_passage__position"] if agreed else None,
            # Critical once any reviewer says so; until gold, what any reviewer marked.
            answers_question=any(row["answers_question"] for row in rows),
            unsupported=tuple(
                dict.fromkeys(
                    text
                    for row in rows
                    for text in judgments.assertion_texts(row["unsupported_assertions"])
                )
            ),
        )
    return verdicts


def run_claims(*, audit_set: AuditSet, run: str | None = None, viewer=None) -> list[RunClaim]:
    """The set's top-level claims as the metrics see them (optionally one run: see
    `set_runs`), each with its question; no answer or passage text is loaded.

    A claim split into atomic claims takes the derived verdict of its atomic claims, and is
    provisional when any of them is. Topics come from the answer's `metadata.topics`.
    """
    scope = Q(answer__audit_set=audit_set) & _run_filter(run)
    return _labelled(Claim.objects.filter(scope), viewer=viewer)


def top_claim_labels(*, claim_ids: list[int]) -> list[ClaimLabel]:
    """ClaimLabel rows of these top-level claims, as `run_claims` gives them (ids of atomic
    claims are left out: their parent's label covers them)."""
    claims = Claim.objects.filter(
        Q(pk__in=claim_ids, parent__isnull=True) | Q(parent_id__in=claim_ids)
    )
    return [claim.label for claim in _labelled(claims)]


def _labelled(claims: QuerySet[Claim], *, viewer=None) -> list[RunClaim]:
    """The top-level claims among `claims`, labelled from the atomic claims among them;
    claims of a replaced answer count nowhere."""
    claims = claims.filter(answer__replaced_at__isnull=True)
    top = list(
        claims.filter(parent__isnull=True)
        .order_by(*QUEUE_ORDER)
        .values(
            "pk",
            "text",
            "answer_id",
            "answer__system",
            "answer__question__external_id",
            "cited_unknown",
            "is_uncited",
            "answers_question",
        )
    )
    children: dict[int, list[int]] = defaultdict(list)
    for pk, parent_id in (
        claims.filter(parent__isnull=False).order_by("order").values_list("pk", "parent_id")
    ):
        children[parent_id].append(pk)
    citations: dict[int, list[int]] = defaultdict(list)
    for claim_id, position in (
        Claim.citations.through.objects.filter(claim__in=claims)
        .order_by("passage__position")
        .values_list("claim_id", "passage__position")
    ):
        citations[claim_id].append(position)
    ungrounded = {
        claim_id: ungrounded_numbers(numbers)
        for claim_id, numbers in ClaimCheck.objects.filter(claim__in=claims).values_list(
            "claim_id", "numbers"
        )
    }
    topics = {
        pk: answer_topics(metadata)
        for pk, metadata in Answer.objects.filter(claims__in=claims)
        .distinct()
        .values_list("pk", "metadata")
    }
    verdicts = _verdicts(claims, viewer=viewer)
    unjudged = UNJUDGED

    result = []
    for row in top:
        verdict = verdicts.get(row["pk"], unjudged)
        parts = children.get(row["pk"])
        if parts:
            atomic = [verdicts.get(pk, unjudged) for pk in parts]
            verdict = _Verdict(
                judgments.derived_verdict([v.judgment for v in atomic]),
                any(v.provisional for v in atomic),
                any(v.verification_worthy for v in atomic),
                tuple(span for v in atomic for span in v.evidence),
                next((v.wrong_passage for v in atomic if v.wrong_passage), None),
                # The parent's numbers are spread over its atomic claims: overridden once
                # a lead overrode every atomic claim whose own check misses a number.
                any(v.numbers_overridden for v in atomic)
                and all(
                    v.numbers_overridden
                    for pk, v in zip(parts, atomic, strict=True)
                    if ungrounded.get(pk, 0)
                ),
                any(v.answers_question for v in atomic),
                tuple(text for v in atomic for text in v.unsupported),
            )
        label = claim_label(
            claim_id=row["pk"],
            answer_id=row["answer_id"],
            system=row["answer__system"],
            verdict=verdict,
            citations=citations.get(row["pk"], ()),
            cited_unknown=row["cited_unknown"],
            ungrounded=ungrounded.get(row["pk"], 0),
            topics=topics.get(row["answer_id"], frozenset()),
            uncited=row["is_uncited"],
            answers_question=row["answers_question"],
        )
        result.append(RunClaim(row["answer__question__external_id"], row["text"], label))
    return result


def release_counts_by_system(*, audit_set: AuditSet) -> dict[str, ReleaseCounts]:
    """The set's release tallies summed per system, by system name: a few rows, one per
    combination of flags that some claim of the set has."""
    groups: dict[str, list[tuple[ReleaseFlags, int]]] = defaultdict(list)
    for row in (
        ReleaseTally.objects.filter(audit_set=audit_set, claims__gt=0)
        .order_by("system", "key")
        .values("system", "topics", "claims", *RELEASE_FLAGS)
    ):
        groups[row["system"]].append((ReleaseFlags.from_row(row), row["claims"]))
    return {system: release_counts_weighted(groups[system]) for system in sorted(groups)}


@dataclass(frozen=True)
class Compared:
    """Run A (before) against run B (after), each with the name the set gives it."""

    a: Run
    b: Run
    result: RunComparison


def run_comparison(*, audit_set: AuditSet, a: str, b: str, viewer=None) -> Compared:
    """Compare two runs of the set (keys as `set_runs` gives them) claim by claim, each
    claim labelled as `viewer` may see it. Raises UnknownRun for a key the set does not
    have and SameRun when both keys are one run."""
    names = {run.key: run.name for run in set_runs(audit_set=audit_set)}
    for key in (a, b):
        if key not in names:
            raise UnknownRun(key)
    if a == b:
        raise SameRun("Pick two different runs.")
    result = compare_runs(
        run_claims(audit_set=audit_set, run=a, viewer=viewer),
        run_claims(audit_set=audit_set, run=b, viewer=viewer),
        name_a=names[a],
        name_b=names[b],
        questions_a=run_question_ids(audit_set=audit_set, run=a),
        questions_b=run_question_ids(audit_set=audit_set, run=b),
    )
    return Compared(a=Run(a, names[a]), b=Run(b, names[b]), result=result)


def run_question_ids(*, audit_set: AuditSet, run: str) -> set[str]:
    """External ids of the questions a run (see `set_runs`) has an answer to."""
    kind, _, value = run.partition(":")
    answers = Answer.objects.filter(audit_set=audit_set)
    if kind == "system":
        answers = answers.filter(system=value)
    elif kind == "import" and value.isdigit():
        answers = answers.filter(import_batch_id=int(value))
    else:
        raise UnknownRun(run)
    return set(answers.values_list("question__external_id", flat=True))


def number_overrides(*, audit_set: AuditSet) -> list[Adjudication]:
    """Gold records of the set whose number check a lead overrode, by system then claim,
    each with `snippet` (the claim's first 200 characters) and `missing` (the numbers the
    matcher did not find)."""
    rows = list(
        Adjudication.objects.filter(claim__answer__audit_set=audit_set, numbers_overridden=True)
        .annotate(snippet=Left("claim__text", 200))
        .select_related("claim__answer", "lead")
        .only(
            "pk",
            "claim_id",
            "numbers_override_reason",
            "updated_at",
            "claim__answer__system",
            "lead__username",
        )
        .order_by("claim__answer__system", "claim__answer_id", "claim__order", "pk")
    )
    numbers = dict(
        ClaimCheck.objects.filter(claim_id__in=[r.claim_id for r in rows]).values_list(
            "claim_id", "numbers"
        )
    )
    for row in rows:
        row.missing = [n["token"] for n in numbers.get(row.claim_id) or [] if not n["grounded"]]
    return rows


def claim_labels(*, audit_set: AuditSet, run: str | None = None, viewer=None) -> list[ClaimLabel]:
    """metrics.ClaimLabel rows of the set's top-level claims (see `run_claims`)."""
    return [claim.label for claim in run_claims(audit_set=audit_set, run=run, viewer=viewer)]


def answer_names(*, ids: list[int]) -> dict[int, Answer]:
    """Answers by pk with their question id and system, for a page of the per-answer table."""
    return {
        answer.pk: answer
        for answer in Answer.objects.filter(pk__in=ids)
        .select_related("question")
        .only("pk", "external_id", "system", "question__external_id")
    }


def claim_names(*, ids: list[int]) -> dict[int, Claim]:
    """Claims by pk with their text and answer's id: how a report names a failing claim."""
    return {
        claim.pk: claim
        for claim in Claim.objects.filter(pk__in=ids)
        .select_related("answer")
        .only("pk", "text", "order", "parent_id", "parent_order", "answer__external_id")
    }


def criteria_changes(*, audit_set: AuditSet) -> QuerySet:
    return audit_set.criteria_changes.select_related("by")


@dataclass(frozen=True)
class CriteriaVersion:
    """One version of a set's criteria: who wrote it, when, why, and whether review had
    started by then."""

    version: int
    by: str
    at: datetime
    reason: str
    after_review_started: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "by": self.by,
            "at": self.at.isoformat(),
            "reason": self.reason,
            "after_review_started": self.after_review_started,
        }


@dataclass(frozen=True)
class CriteriaProvenance:
    """What a decision stands on: the criteria version in force (None if the criteria were
    never written), when review started, and every change made after it."""

    current: CriteriaVersion | None
    review_started_at: datetime | None
    changed_after_review: tuple[CriteriaVersion, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "criteria_version": self.current.as_dict() if self.current else None,
            "review_started_at": (
                self.review_started_at.isoformat() if self.review_started_at else None
            ),
            "criteria_changed_after_review_started": bool(self.changed_after_review),
            "criteria_changes_after_review_started": [
                change.as_dict() for change in self.changed_after_review
            ],
        }


def criteria_provenance(*, audit_set: AuditSet) -> CriteriaProvenance:
    """The criteria version a decision of the set is made on, for the report page, the API's
    decision and the gate alike."""
    versions = [
        CriteriaVersion(
            version=change.version,
            by=change.by.get_username() if change.by else "",
            at=change.at,
            reason=change.reason,
            after_review_started=change.after_lock,
        )
        for change in audit_set.criteria_changes.select_related("by").order_by("version")
    ]
    return CriteriaProvenance(
        current=versions[-1] if versions else None,
        review_started_at=criteria_locked_since(audit_set=audit_set),
        changed_after_review=tuple(v for v in versions if v.after_review_started),
    )


def criteria_locked_since(*, audit_set: AuditSet):
    """When the set's first sheet was submitted (criteria locked since), or None."""
    if audit_set.criteria_locked_at is not None:
        return audit_set.criteria_locked_at
    first = (
        AuditSheet.objects.filter(
            claim__answer__audit_set=audit_set, status=AuditSheet.Status.SUBMITTED
        )
        .order_by("submitted_at")
        .values_list("submitted_at", flat=True)
        .first()
    )
    return first
