"""Acceptance criteria a lead writes down before review, and the release decision they give
for one system/run: pass or fail per criterion, with the claims that fail it.

Each criterion's rule is its `passes(counts)`, on a system's release counts (stored tallies
or the same sums over labels); `check(claims)` takes pass or fail from it and names the
claims that fail."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from audit import judgments
from audit.metrics import ClaimLabel, ReleaseCounts, label_counts


class CriteriaError(ValueError):
    """A criterion that cannot be read: the message says which one and why."""


class CriteriaReasonRequired(CriteriaError):
    """Criteria changed once review had started, without a reason written down."""


def _require_int(kind: str, name: str, value: object, *, minimum: int) -> int:
    # bool is an int subclass; `true` in a JSON form must not read as 1.
    if isinstance(value, bool) or not isinstance(value, int):
        raise CriteriaError(f"{kind}: {name} must be a whole number, got {value!r}")
    if value < minimum:
        raise CriteriaError(f"{kind}: {name} must be at least {minimum}, got {value}")
    return value


def _require_bool(kind: str, name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise CriteriaError(f"{kind}: {name} must be true or false, got {value!r}")
    return value


def _percent(share: float) -> str:
    return f"{share * 100:.1f}".removesuffix(".0") + "%"


def _join(words: Sequence[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _counted(claims: Sequence[ClaimLabel], counts: ReleaseCounts | None) -> ReleaseCounts:
    # A criterion's pass or fail is its `passes` on counts, always: `check` only explains it.
    return counts if counts is not None else label_counts(claims)


@dataclass(frozen=True)
class CriterionResult:
    criterion: Criterion
    passed: bool
    detail: str
    failing_claim_ids: tuple[int, ...] = ()
    # Why each failing claim fails, where a criterion can say more than its name: the
    # judgment and the words a reviewer marked unsupported. (claim id, reason), in order.
    reasons: tuple[tuple[int, str], ...] = ()


def _quoted(texts: Sequence[str]) -> str:
    return ", ".join(f"“{text}”" for text in texts)


def _why(claim: ClaimLabel, texts: Sequence[str]) -> str:
    """A failing claim's reason: its judgment and the assertions its sources do not back."""
    judgment = judgments.JUDGMENT_LABELS.get(claim.judgment or "", "not judged").lower()
    if not texts:
        return f"{judgment}; no unsupported words marked"
    return f"{judgment}; unsupported: {_quoted(texts)}"


@dataclass(frozen=True)
class NoContradicted:
    """No claim judged contradicted, optionally only in answers tagged with a high-risk topic."""

    topics: frozenset[str] = frozenset()
    kind: ClassVar[str] = "no_contradicted"

    def __post_init__(self) -> None:
        if isinstance(self.topics, str) or not all(
            isinstance(t, str) and t.strip() for t in self.topics
        ):
            raise CriteriaError(
                f"{self.kind}: topics must be a list of non-empty names, got {self.topics!r}"
            )
        # Tags are typed by hand on import and in the criteria form; "Pay " is still pay.
        object.__setattr__(self, "topics", frozenset(t.strip().casefold() for t in self.topics))

    def describe(self) -> str:
        if not self.topics:
            return "No contradicted claim."
        return f"No contradicted claim in answers tagged {_join(sorted(self.topics))}."

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "topics": sorted(self.topics)}

    def applies_to(self, claim: ClaimLabel) -> bool:
        return not self.topics or bool(self.topics & {t.casefold() for t in claim.topics})

    def passes(self, counts: ReleaseCounts) -> bool:
        return counts.contradicted_in(self.topics) == 0

    def check(
        self, claims: Sequence[ClaimLabel], counts: ReleaseCounts | None = None
    ) -> CriterionResult:
        # Every claim counts, worthy or not: a source that says otherwise is a finding either way.
        failing = tuple(
            c.claim_id
            for c in claims
            if self.applies_to(c) and c.judgment == judgments.CONTRADICTED
        )
        where = f" in answers tagged {_join(sorted(self.topics))}" if self.topics else ""
        passed = self.passes(_counted(claims, counts))
        if failing:
            detail = f"{_plural(len(failing), 'contradicted claim')}{where}."
        else:
            checked = sum(self.applies_to(c) for c in claims)
            detail = f"No contradicted claim among {_plural(checked, 'claim')}{where}."
        return CriterionResult(self, passed, detail, failing)


@dataclass(frozen=True)
class NumbersGrounded:
    """Every number of a claim is found in its cited passages (the matcher's ungrounded count
    is 0), optionally only for claims judged supported."""

    only_supported: bool = False
    kind: ClassVar[str] = "numbers_grounded"

    def __post_init__(self) -> None:
        _require_bool(self.kind, "only_supported", self.only_supported)

    def describe(self) -> str:
        scope = "claim judged supported" if self.only_supported else "verification-worthy claim"
        return f"Every number in a {scope} is found in its cited passages."

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "only_supported": self.only_supported}

    def passes(self, counts: ReleaseCounts) -> bool:
        failing = (
            counts.numbers_failing_supported if self.only_supported else counts.numbers_failing
        )
        return failing == 0

    def check(
        self, claims: Sequence[ClaimLabel], counts: ReleaseCounts | None = None
    ) -> CriterionResult:
        # A claim marked not verification-worthy has nothing a reader would check, so a phone
        # number in a closing line does not hold back a release. A claim whose number check
        # a lead overrode on its gold record passes, and the detail says how many did.
        checked = [
            c
            for c in claims
            if c.verification_worthy
            and c.ungrounded_numbers > 0
            and (not self.only_supported or c.judgment == judgments.SUPPORTED)
        ]
        failing_claims = [c for c in checked if not c.numbers_overridden]
        overridden = len(checked) - len(failing_claims)
        if failing_claims:
            numbers = sum(c.ungrounded_numbers for c in failing_claims)
            detail = (
                f"{_plural(len(failing_claims), 'claim')} with "
                f"{_plural(numbers, 'number')} not found in the cited passages."
            )
        else:
            detail = "Every number is found in the cited passages."
        if overridden:
            detail += f" Number check overridden by a lead for {_plural(overridden, 'claim')}."
        failing = tuple(c.claim_id for c in failing_claims)
        return CriterionResult(self, self.passes(_counted(claims, counts)), detail, failing)


@dataclass(frozen=True)
class MinSupportedShare:
    """At least `percent`% of verification-worthy claims fully supported by their own
    citations; uncited claims count against."""

    percent: float
    kind: ClassVar[str] = "min_supported_share"

    def __post_init__(self) -> None:
        value = self.percent
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            raise CriteriaError(f"{self.kind}: percent must be a number, got {value!r}")
        if not 0 <= value <= 100:
            raise CriteriaError(f"{self.kind}: percent must be between 0 and 100, got {value}")

    def describe(self) -> str:
        return (
            f"At least {self.percent:g}% of claims fully supported by their own citations "
            "(claims marked not verification-worthy, or whose source was inaccessible, left "
            "out)."
        )

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "percent": self.percent}

    def passes(self, counts: ReleaseCounts) -> bool:
        # Compared in whole numbers so 4 of 5 meets 80% exactly, with no float rounding.
        return counts.verifiable > 0 and counts.supported * 100 >= self.percent * counts.verifiable

    def check(
        self, claims: Sequence[ClaimLabel], counts: ReleaseCounts | None = None
    ) -> CriterionResult:
        # Claims whose source nobody could read are counted apart, in neither number.
        worthy = [c for c in claims if c.verifiable]
        supported = sum(c.fully_supported for c in worthy)
        failing = tuple(c.claim_id for c in worthy if not c.fully_supported)
        passed = self.passes(_counted(claims, counts))
        if not worthy:
            # Nothing shows the share is met, and a release gate should not pass on silence.
            return CriterionResult(self, passed, "No verification-worthy claim to measure.", ())
        share = _percent(supported / len(worthy))
        comparison = "at least" if passed else "below"
        detail = (
            f"{supported} of {len(worthy)} claims fully supported ({share}), "
            f"{comparison} {self.percent:g}%."
        )
        return CriterionResult(self, passed, detail, () if passed else failing)


@dataclass(frozen=True)
class UncitedOnlyIfNotWorthy:
    """Uncited claims are allowed only when marked not verification-worthy."""

    kind: ClassVar[str] = "uncited_only_if_not_worthy"

    def describe(self) -> str:
        return "Uncited claims only where marked not verification-worthy."

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def passes(self, counts: ReleaseCounts) -> bool:
        return counts.uncited_worthy == 0

    def check(
        self, claims: Sequence[ClaimLabel], counts: ReleaseCounts | None = None
    ) -> CriterionResult:
        failing = tuple(c.claim_id for c in claims if c.uncited and c.verification_worthy)
        if failing:
            detail = f"{_plural(len(failing), 'uncited claim')} marked verification-worthy."
        else:
            detail = "Every uncited claim is marked not verification-worthy."
        return CriterionResult(self, self.passes(_counted(claims, counts)), detail, failing)


@dataclass(frozen=True)
class MaxWrongCitations:
    """At most `limit` claims citing the wrong passage (judged wrong citation, or with the
    passage that does hold the claim named on the sheet)."""

    limit: int
    kind: ClassVar[str] = "max_wrong_citations"

    def __post_init__(self) -> None:
        _require_int(self.kind, "limit", self.limit, minimum=0)

    def describe(self) -> str:
        return f"At most {_plural(self.limit, 'wrong citation')}."

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "limit": self.limit}

    def passes(self, counts: ReleaseCounts) -> bool:
        return counts.wrong_citations <= self.limit

    def check(
        self, claims: Sequence[ClaimLabel], counts: ReleaseCounts | None = None
    ) -> CriterionResult:
        wrong = tuple(c.claim_id for c in claims if c.is_wrong_citation)
        passed = self.passes(_counted(claims, counts))
        detail = f"{_plural(len(wrong), 'wrong citation')}, at most {self.limit} allowed."
        return CriterionResult(self, passed, detail, () if passed else wrong)


@dataclass(frozen=True)
class AnsweringClaimsBacked:
    """No claim marked as answering the question is partially supported, not supported or
    contradicted: the answer's point must stand on its sources, whatever the share."""

    kind: ClassVar[str] = "answering_claims_backed"

    def describe(self) -> str:
        return (
            "No claim that answers the question is partially supported, not supported or "
            "contradicted."
        )

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def passes(self, counts: ReleaseCounts) -> bool:
        return counts.fail_the_question == 0

    def check(
        self, claims: Sequence[ClaimLabel], counts: ReleaseCounts | None = None
    ) -> CriterionResult:
        failing = [c for c in claims if c.fails_the_question]
        marked = sum(c.answers_question for c in claims)
        if failing:
            verb = "answers" if len(failing) == 1 else "answer"
            detail = (
                f"{_plural(len(failing), 'claim')} that {verb} the question not backed by "
                "its sources."
            )
        elif marked:
            detail = f"Every claim that answers the question is backed ({marked} marked)."
        else:
            detail = "No claim is marked as answering the question."
        return CriterionResult(
            self,
            self.passes(_counted(claims, counts)),
            detail,
            tuple(c.claim_id for c in failing),
            tuple((c.claim_id, _why(c, c.unsupported)) for c in failing),
        )


@dataclass(frozen=True)
class NoUnsupportedNumbers:
    """No verification-worthy claim with an unsupported assertion that states a number or a
    date: a figure or date the sources do not give is the costliest wrong detail."""

    kind: ClassVar[str] = "no_unsupported_numbers"

    def describe(self) -> str:
        return "No unsupported assertion containing a number or date."

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def passes(self, counts: ReleaseCounts) -> bool:
        return counts.unsupported_numbers == 0

    def check(
        self, claims: Sequence[ClaimLabel], counts: ReleaseCounts | None = None
    ) -> CriterionResult:
        failing = [c for c in claims if c.verification_worthy and c.unsupported_numbers]
        if failing:
            detail = f"{_plural(len(failing), 'claim')} with a number or date marked unsupported."
        else:
            detail = "No number or date is marked unsupported."
        return CriterionResult(
            self,
            self.passes(_counted(claims, counts)),
            detail,
            tuple(c.claim_id for c in failing),
            tuple((c.claim_id, _why(c, c.unsupported_numbers)) for c in failing),
        )


Criterion = (
    NoContradicted
    | NumbersGrounded
    | MinSupportedShare
    | UncitedOnlyIfNotWorthy
    | MaxWrongCitations
    | AnsweringClaimsBacked
    | NoUnsupportedNumbers
)

_KINDS: dict[str, type[Criterion]] = {
    cls.kind: cls
    for cls in (
        NoContradicted,
        NumbersGrounded,
        MinSupportedShare,
        UncitedOnlyIfNotWorthy,
        MaxWrongCitations,
        AnsweringClaimsBacked,
        NoUnsupportedNumbers,
    )
}
_PARAMS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # kind: (required, optional)
    "no_contradicted": (frozenset(), frozenset({"topics"})),
    "numbers_grounded": (frozenset(), frozenset({"only_supported"})),
    "min_supported_share": (frozenset({"percent"}), frozenset()),
    "uncited_only_if_not_worthy": (frozenset(), frozenset()),
    "max_wrong_citations": (frozenset({"limit"}), frozenset()),
    "answering_claims_backed": (frozenset(), frozenset()),
    "no_unsupported_numbers": (frozenset(), frozenset()),
}


def criterion_from_dict(data: Mapping[str, Any]) -> Criterion:
    """Read one criterion from its JSON form, e.g. `{"kind": "max_wrong_citations",
    "limit": 2}`; raises CriteriaError saying what is wrong."""
    if not isinstance(data, Mapping):
        raise CriteriaError(f"a criterion must be an object, got {data!r}")
    kind = data.get("kind")
    if kind not in _KINDS:
        raise CriteriaError(
            f"unknown criterion kind {kind!r}; expected one of {', '.join(sorted(_KINDS))}"
        )
    required, optional = _PARAMS[kind]
    params = {k: v for k, v in data.items() if k != "kind"}
    unknown = sorted(set(params) - required - optional)
    if unknown:
        takes = ", ".join(sorted(required | optional)) or "nothing"
        raise CriteriaError(f"{kind}: unknown setting {unknown[0]!r}; it takes {takes}")
    missing = sorted(required - set(params))
    if missing:
        raise CriteriaError(f"{kind}: missing setting {missing[0]!r}")
    if "topics" in params:
        topics = params["topics"]
        if not isinstance(topics, list | tuple):
            raise CriteriaError(f"{kind}: topics must be a list of names, got {topics!r}")
        # NoContradicted turns the list into a set once it has checked the names.
    return _KINDS[kind](**params)


def criteria_from_dicts(items: Iterable[Mapping[str, Any]]) -> tuple[Criterion, ...]:
    """Read a list of criteria; an error names the criterion by its 1-based number."""
    criteria = []
    for number, item in enumerate(items, start=1):
        try:
            criteria.append(criterion_from_dict(item))
        except CriteriaError as error:
            raise CriteriaError(f"criterion {number}: {error}") from None
    return tuple(criteria)


def criteria_to_dicts(criteria: Iterable[Criterion]) -> list[dict[str, Any]]:
    return [criterion.to_dict() for criterion in criteria]


@dataclass(frozen=True)
class Decision:
    """The release decision for one system/run; provisional until every claim is adjudicated."""

    system: str
    passed: bool
    provisional: bool
    results: tuple[CriterionResult, ...]

    @property
    def failed(self) -> tuple[CriterionResult, ...]:
        return tuple(result for result in self.results if not result.passed)


def decision_badge(decision: Decision | Outcome | None) -> str:
    """ "pass", "fail", "provisional" (some claim has no gold yet, whatever the criteria
    say so far) or "none" (the set has no criteria)."""
    if decision is None:
        return "none"
    if decision.provisional:
        return "provisional"
    return "pass" if decision.passed else "fail"


def evaluate(
    criteria: Iterable[Criterion],
    claims: Iterable[ClaimLabel],
    *,
    system: str | None = None,
    counts: ReleaseCounts | None = None,
) -> Decision:
    """Decide one system/run. `claims` must all come from it; `system` names it when there
    are no claims to take the name from. Pass or fail, of each criterion and of the whole,
    is `decide_counts` on `counts` (the stored tallies of these claims), or without them on
    the claims' own counts; the claims only say which of them fail and why."""
    claims = list(claims)
    systems = {claim.system for claim in claims}
    if system is not None:
        systems.add(system)
    if len(systems) > 1:
        raise ValueError(
            f"claims of several systems ({', '.join(sorted(systems))}); use evaluate_by_system"
        )
    criteria = tuple(criteria)
    if counts is None:
        counts = label_counts(claims)
    outcome = decide_counts(criteria, counts)
    return Decision(
        system=systems.pop() if systems else "",
        passed=outcome.passed,
        provisional=outcome.provisional,
        results=tuple(criterion.check(claims, counts) for criterion in criteria),
    )


@dataclass(frozen=True)
class Outcome:
    """Pass or fail and whether it is provisional, without the per-criterion details: the
    release decision of a system, decided from counts (see `decide_counts`)."""

    passed: bool
    provisional: bool


def decide_counts(criteria: Iterable[Criterion], counts: ReleaseCounts) -> Outcome:
    """The release decision: every criterion's `passes` on the counts. The one rule that
    decides; `evaluate` uses it too."""
    return Outcome(
        passed=all(criterion.passes(counts) for criterion in criteria),
        provisional=counts.provisional,
    )


def evaluate_by_system(
    criteria: Iterable[Criterion], claims: Iterable[ClaimLabel]
) -> dict[str, Decision]:
    """One decision per system/run found in `claims`, by system name."""
    criteria = tuple(criteria)
    by_system: dict[str, list[ClaimLabel]] = {}
    for claim in claims:
        by_system.setdefault(claim.system, []).append(claim)
    return {system: evaluate(criteria, by_system[system]) for system in sorted(by_system)}
