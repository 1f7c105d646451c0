"""Run comparison: two runs (systems or imports) answering the same questions, claim by claim
(matched by question and text similarity), with the change in every release metric."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, utils

from audit import judgments
from audit.metrics import ClaimLabel, MetricSummary, summarize_claims

DEFAULT_THRESHOLD = 70.0
# Added to the similarity when both claims state numbers and state the same ones: a
# paraphrase keeps its figures ("25 days" in both) while an unrelated claim of the same
# answer rarely shares all of them.
SAME_NUMBERS_BONUS = 10.0
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

BECAME_SUPPORTED = "became_supported"
STOPPED_SUPPORTED = "stopped_supported"
UNCHANGED = "unchanged"
CHANGED = "changed"
# Either side has no judgment yet, so nothing can be said about a change.
NEWLY_JUDGED = "newly_judged"  # judged in B only
NOT_JUDGED = "not_judged"  # not judged in B


@dataclass(frozen=True)
class RunClaim:
    """A claim of one run: the question it answers, its text, and its label for the metrics."""

    question_id: str
    text: str
    label: ClaimLabel

    @property
    def claim_id(self) -> int:
        return self.label.claim_id

    @property
    def judgment(self) -> str | None:
        return self.label.judgment


@dataclass(frozen=True)
class ClaimPair:
    question_id: str
    a: RunClaim
    b: RunClaim
    score: float  # see similarity(), 0-100
    # became_supported, stopped_supported, changed or unchanged when both sides are judged;
    # newly_judged or not_judged otherwise.
    status: str


@dataclass(frozen=True)
class MetricDelta:
    name: str
    label: str
    a: float | int | None
    b: float | int | None
    # None when either side is undefined: a change from "no citations" is not a number.
    delta: float | int | None


@dataclass(frozen=True)
class RunComparison:
    pairs: tuple[ClaimPair, ...]
    appeared: tuple[RunClaim, ...]  # only in run B, for a question A answered too
    vanished: tuple[RunClaim, ...]  # only in run A, for a question B answered too
    # Claims of questions the other run has no answer to: not a change in the claims.
    unanswered_by_b: tuple[RunClaim, ...]
    unanswered_by_a: tuple[RunClaim, ...]
    summary_a: MetricSummary
    summary_b: MetricSummary
    deltas: tuple[MetricDelta, ...]

    @property
    def provisional(self) -> bool:
        return self.summary_a.provisional or self.summary_b.provisional

    def with_status(self, status: str) -> tuple[ClaimPair, ...]:
        return tuple(pair for pair in self.pairs if pair.status == status)


def similarity(a: str, b: str) -> float:
    """How alike two claims read, 0-100, ignoring case, punctuation and word order.

    The mean of rapidfuzz's token_sort_ratio (whole wording, any order: "In 2024 the rate
    was 5%" / "The rate was 5% in 2024") and token_set_ratio (shared words, forgiving
    dropped or swapped ones: "Full-time employees receive 25 days of paid annual leave per
    year" / "Full-time staff get 25 days of paid leave a year"); token_set_ratio alone
    scores 100 for any claim whose words all occur in a longer one. Claims that state the
    same numbers gain SAME_NUMBERS_BONUS, up to 100.
    """
    score = (
        fuzz.token_sort_ratio(a, b, processor=utils.default_process)
        + fuzz.token_set_ratio(a, b, processor=utils.default_process)
    ) / 2
    numbers_a, numbers_b = _numbers(a), _numbers(b)
    if numbers_a and numbers_a == numbers_b:
        score += SAME_NUMBERS_BONUS
    return min(100.0, score)


def _numbers(text: str) -> frozenset[str]:
    return frozenset(n.replace(",", ".") for n in _NUMBER.findall(text))


def pair_status(judgment_a: str | None, judgment_b: str | None) -> str:
    """How a pair's judgment moved; "changed" and "unchanged" need a judgment on both sides."""
    if judgment_b is None:
        return NOT_JUDGED
    if judgment_a is None:
        return NEWLY_JUDGED
    if judgment_a == judgment_b:
        return UNCHANGED
    if judgment_b == judgments.SUPPORTED:
        return BECAME_SUPPORTED
    if judgment_a == judgments.SUPPORTED:
        return STOPPED_SUPPORTED
    return CHANGED


def match_claims(
    claims_a: Sequence[RunClaim],
    claims_b: Sequence[RunClaim],
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> tuple[tuple[ClaimPair, ...], tuple[RunClaim, ...], tuple[RunClaim, ...]]:
    """Pair claims of the same question one-to-one; returns (pairs, appeared, vanished).

    Greedy by best score: the most similar pair (ties: earlier A claim, then earlier B claim)
    is taken first, then the next among the claims still free, down to `threshold`. Greedy
    rather than a total-score optimum on purpose: the optimum may break up a near-identical
    pair to gain two middling ones, and a reader pairs the obvious match first too.
    Pairs come in question order (as first seen in A, then B), then in A's claim order.
    """
    questions: dict[str, tuple[list[int], list[int]]] = {}
    for i, claim in enumerate(claims_a):
        questions.setdefault(claim.question_id, ([], []))[0].append(i)
    for j, claim in enumerate(claims_b):
        questions.setdefault(claim.question_id, ([], []))[1].append(j)

    pairs: list[ClaimPair] = []
    matched_a: set[int] = set()
    matched_b: set[int] = set()
    for question_id, (indexes_a, indexes_b) in questions.items():
        candidates = sorted(
            (
                (-score, i, j)
                for i in indexes_a
                for j in indexes_b
                if (score := similarity(claims_a[i].text, claims_b[j].text)) >= threshold
            ),
        )
        question_pairs = []
        for negative_score, i, j in candidates:
            if i in matched_a or j in matched_b:
                continue
            matched_a.add(i)
            matched_b.add(j)
            a, b = claims_a[i], claims_b[j]
            status = pair_status(a.judgment, b.judgment)
            question_pairs.append((i, ClaimPair(question_id, a, b, -negative_score, status)))
        pairs.extend(pair for _, pair in sorted(question_pairs, key=lambda item: item[0]))

    appeared = tuple(c for j, c in enumerate(claims_b) if j not in matched_b)
    vanished = tuple(c for i, c in enumerate(claims_a) if i not in matched_a)
    return tuple(pairs), appeared, vanished


_DELTA_FIELDS: tuple[tuple[str, str], ...] = (
    ("supported_share", "Claims fully supported by their own citations"),
    ("citation_recall", "Citation recall (ALCE)"),
    ("citation_precision", "Citation precision (ALCE)"),
    ("supported", "Fully supported claims"),
    ("verifiable", "Verification-worthy claims"),
    ("contradicted", "Contradicted claims"),
    ("wrong_citations", "Wrong citations"),
    ("ungrounded_numbers", "Ungrounded numbers"),
    ("cited_unknown", "Cited-unknown markers"),
    ("uncited", "Uncited claims"),
    ("provisional_claims", "Provisional labels"),
)


def metric_deltas(a: MetricSummary, b: MetricSummary) -> tuple[MetricDelta, ...]:
    """B minus A for every metric, so a positive share delta is an improvement."""
    deltas = []
    for name, label in _DELTA_FIELDS:
        value_a, value_b = getattr(a, name), getattr(b, name)
        delta = None if value_a is None or value_b is None else value_b - value_a
        deltas.append(MetricDelta(name, label, value_a, value_b, delta))
    return tuple(deltas)


def compare_runs(
    claims_a: Iterable[RunClaim],
    claims_b: Iterable[RunClaim],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    name_a: str = "A",
    name_b: str = "B",
    questions_a: Collection[str] | None = None,
    questions_b: Collection[str] | None = None,
) -> RunComparison:
    """Claim-by-claim comparison of run A (before) with run B (after), and metric deltas
    computed from each run's own claims; the names key the two summaries.

    `questions_a`/`questions_b` are the questions each run answered (default: those its
    claims belong to; an answer without claims still answers its question). Claims of a
    question the other run never answered are listed apart, not as vanished or appeared.
    """
    claims_a, claims_b = list(claims_a), list(claims_b)
    answered_a = set(questions_a) if questions_a is not None else {c.question_id for c in claims_a}
    answered_b = set(questions_b) if questions_b is not None else {c.question_id for c in claims_b}
    pairs, appeared, vanished = match_claims(
        [c for c in claims_a if c.question_id in answered_b],
        [c for c in claims_b if c.question_id in answered_a],
        threshold=threshold,
    )
    summary_a = summarize_claims([c.label for c in claims_a], scope="system", key=name_a)
    summary_b = summarize_claims([c.label for c in claims_b], scope="system", key=name_b)
    return RunComparison(
        pairs=pairs,
        appeared=appeared,
        vanished=vanished,
        unanswered_by_b=tuple(c for c in claims_a if c.question_id not in answered_b),
        unanswered_by_a=tuple(c for c in claims_b if c.question_id not in answered_a),
        summary_a=summary_a,
        summary_b=summary_b,
        deltas=metric_deltas(summary_a, summary_b),
    )
