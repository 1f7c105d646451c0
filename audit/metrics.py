"""Release metrics from claim labels: the supported share, ALCE citation recall and precision,
problem counts and judgment distributions, per answer, per system/run and per set."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from statistics import fmean
from typing import Any

from audit import judgments


@dataclass(frozen=True)
class ClaimLabel:
    """One claim as the metrics see it: its gold judgment where adjudicated, else the
    provisional one (`provisional=True`), with the facts of its answer, citations and sheet.

    `citations` are valid passage positions; `cited_unknown` are marker numbers that point
    past the supplied passages; `evidence` holds the sheet's evidence sentences as
    `(passage position, start, end)`.
    """

    claim_id: int
    answer_id: int
    system: str
    judgment: str | None
    provisional: bool = False
    verification_worthy: bool = True
    citations: tuple[int, ...] = ()
    cited_unknown: tuple[int, ...] = ()
    evidence: tuple[tuple[int, int, int], ...] = ()
    wrong_citation_passage: int | None = None
    ungrounded_numbers: int = 0
    topics: frozenset[str] = frozenset()
    uncited: bool = False
    # A lead found the numbers in the sources in another form ("four weeks" for "4 weeks"):
    # the matcher's ungrounded count stays as it is but no longer counts against release.
    numbers_overridden: bool = False
    # Marked by a reviewer or a lead as stating what the question asks: if it is not
    # supported, the answer fails its reader whatever the share of supported claims.
    answers_question: bool = False
    # The label's unsupported assertions (the words of the claim the evidence does not
    # support, or a reviewer's free text), as text.
    unsupported: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Callers pass lists straight from JSON fields; tuples keep the label hashable, and a
        # passage cited twice is still one citation.
        object.__setattr__(self, "citations", tuple(dict.fromkeys(self.citations)))
        object.__setattr__(self, "cited_unknown", tuple(dict.fromkeys(self.cited_unknown)))
        object.__setattr__(self, "evidence", tuple(tuple(span) for span in self.evidence))
        object.__setattr__(self, "topics", frozenset(self.topics))
        object.__setattr__(self, "unsupported", tuple(self.unsupported))

    @property
    def inaccessible(self) -> bool:
        """Nobody could read the cited source: counted apart, never in the supported share."""
        return self.judgment == judgments.INACCESSIBLE

    @property
    def verifiable(self) -> bool:
        """In the supported share's denominator: worth verifying, and its source readable."""
        return self.verification_worthy and not self.inaccessible

    @property
    def fails_the_question(self) -> bool:
        """Answers the question, and its sources do not (fully) back it."""
        return self.answers_question and self.judgment in NOT_BACKED

    @property
    def unsupported_numbers(self) -> tuple[str, ...]:
        """Unsupported assertions that state a number or a date."""
        return tuple(text for text in self.unsupported if mentions_number_or_date(text))

    @property
    def fully_supported(self) -> bool:
        """Supported by its own citations: judged supported and citing a supplied passage."""
        return self.judgment == judgments.SUPPORTED and bool(self.citations)

    @property
    def is_wrong_citation(self) -> bool:
        return self.judgment == judgments.WRONG_CITATION or self.wrong_citation_passage is not None


# Judgments that leave a claim's statement without the backing of its sources.
NOT_BACKED = frozenset({judgments.PARTIAL, judgments.NOT_SUPPORTED, judgments.CONTRADICTED})

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
    "eighty ninety hundred thousand million billion trillion dozen half quarter percent "
    "first second third fourth fifth once twice"
)
_NUMBER_OR_DATE = re.compile(
    r"\d|\b(?:"
    + "|".join(sorted(set((_MONTHS + " " + _NUMBER_WORDS).split()), key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)


def mentions_number_or_date(text: str) -> bool:
    """A digit, a number word ("fourteen", "half") or a month name: what a release cannot
    let pass unsupported, since a wrong figure or date is the costliest wrong detail.
    ("May" and "second" read as dates and numbers here even where they are not: a span a
    reviewer marked unsupported is short, and a false alarm costs a glance.)"""
    return bool(_NUMBER_OR_DATE.search(text))


@dataclass(frozen=True)
class CitationFacts:
    """One claim's contribution to ALCE citation recall and precision."""

    recall: int | None  # None: not verification-worthy, left out of both metrics
    citations: int  # valid citations plus cited-unknown markers
    precise: int
    irrelevant: tuple[int, ...]  # valid citations ALCE would call irrelevant


def citation_facts(label: ClaimLabel) -> CitationFacts:
    """ALCE's per-sentence facts (Gao et al. 2023, §2.3 and `eval.py`), read off the sheet.

    ALCE asks an NLI model three questions; a human sheet answers them as follows:

    - "The cited passages together fully support the claim" ⇔ judgment is `supported` and the
      claim has at least one valid citation. Recall is 1 then, else 0: partially supported
      counts 0 because ALCE's NLI is binary entailment; wrong_citation, contradicted,
      source_inaccessible, unclear and an empty (not yet judged) label count 0 as well, and so
      does an uncited claim (ALCE: no citations, recall 0).
    - "Citation c supports the claim on its own" ⇔ every evidence sentence lies in passage c.
      The evidence set is taken as minimal, so evidence spread over several passages means no
      single one of them supports alone.
    - "The remaining citations still fully support it" ⇔ the claim is supported and no
      evidence sentence lies in passage c.
    - c is irrelevant ⇔ it does not support alone and the rest still supports. With non-empty
      evidence E this reduces to: c is precise ⇔ c carries an evidence sentence. If E has
      sentences in c and elsewhere, c does not support alone but the rest no longer supports
      without it; if c carries none, the rest supports and c alone cannot.
    - A citation is precise only when its claim scores recall 1 and it is not irrelevant;
      every citation of a claim that does not score recall 1 is imprecise (as in ALCE).

    Edge cases:
    - Supported with no evidence recorded (or only in passages the claim does not cite): the
      sheet cannot show any citation to be irrelevant, so all valid citations count precise,
      like ALCE's single-citation shortcut. `MetricSummary.supported_without_evidence` counts
      these so a lead can go back to them.
    - Cited-unknown markers cite passages nobody could read: they count as citations in the
      precision denominator and are never precise. Recall follows the judgment on the valid
      citations, since adding a passage never removes entailment. (ALCE's script instead
      scores such a sentence recall 0 and leaves its citations out of precision.)
    - Claims marked not verification-worthy are left out entirely (ALCE scores every
      sentence, but a transition or a greeting has nothing to cite).
    """
    if not label.verification_worthy:
        return CitationFacts(recall=None, citations=0, precise=0, irrelevant=())
    total = len(label.citations) + len(label.cited_unknown)
    if not label.fully_supported:
        return CitationFacts(recall=0, citations=total, precise=0, irrelevant=())
    carried = {passage for passage, _, _ in label.evidence if passage in label.citations}
    if not carried:
        return CitationFacts(recall=1, citations=total, precise=len(label.citations), irrelevant=())
    irrelevant = tuple(c for c in label.citations if c not in carried)
    return CitationFacts(recall=1, citations=total, precise=len(carried), irrelevant=irrelevant)


def _supported_without_evidence(label: ClaimLabel) -> bool:
    return (
        label.verification_worthy
        and label.fully_supported
        and not any(passage in label.citations for passage, _, _ in label.evidence)
    )


@dataclass(frozen=True)
class MetricSummary:
    """Metrics of a group of claims: one answer, one system/run, or a whole set.

    `supported` of `verifiable` is "claims fully supported by their own citations: n of m";
    claims whose source was inaccessible are counted apart (`inaccessible`), in neither.
    Recall and precision are None when undefined: no verification-worthy claim, or no
    citation. `ungrounded_numbers` leaves out claims whose number check a lead overrode;
    `numbers_overridden` counts those claims.
    """

    scope: str  # "answer", "system" or "set"
    key: str | int | None
    answers: int
    claims: int
    supported: int
    verifiable: int
    citation_recall: float | None
    citation_precision: float | None
    citations: int
    precise_citations: int
    contradicted: int
    wrong_citations: int
    ungrounded_numbers: int
    cited_unknown: int
    uncited: int
    provisional_claims: int
    supported_without_evidence: int
    numbers_overridden: int = 0
    inaccessible: int = 0
    # Derived here rather than passed in so they can never disagree with the counts, yet
    # still show up in dataclasses.asdict for templates and JSON.
    supported_share: float | None = field(init=False)
    provisional: bool = field(init=False)

    def __post_init__(self) -> None:
        share = self.supported / self.verifiable if self.verifiable else None
        object.__setattr__(self, "supported_share", share)
        object.__setattr__(self, "provisional", self.provisional_claims > 0)

    @property
    def supported_text(self) -> str:
        return f"{self.supported} of {self.verifiable}"


def summarize_claims(
    labels: Iterable[ClaimLabel], *, scope: str = "set", key: str | int | None = None
) -> MetricSummary:
    """Metrics of any group of claims.

    The supported share pools claims: n = verification-worthy claims judged supported with a
    valid citation, m = all verification-worthy claims whose source was accessible, so
    uncited claims count against and unreadable sources are left to be replaced.
    Citation recall and precision follow ALCE's averaging: recall is the mean over an
    answer's claims, precision the share of precise citations among all of an answer's
    citations, and a group's value is the mean over its answers. An answer without
    citations has no precision and is left out of the group's mean (ALCE scores it 0, which
    would charge the missing citations twice: recall already does). Counts run over all
    claims, verification-worthy or not.
    """
    labels = list(labels)
    by_answer: dict[int, list[ClaimLabel]] = {}
    for label in labels:
        by_answer.setdefault(label.answer_id, []).append(label)

    recalls: list[float] = []
    precisions: list[float] = []
    citations = precise = 0
    for answer_labels in by_answer.values():
        facts = [citation_facts(label) for label in answer_labels]
        scored = [f.recall for f in facts if f.recall is not None]
        answer_citations = sum(f.citations for f in facts)
        answer_precise = sum(f.precise for f in facts)
        if scored:
            recalls.append(fmean(scored))
        if answer_citations:
            precisions.append(answer_precise / answer_citations)
        citations += answer_citations
        precise += answer_precise

    verifiable = [label for label in labels if label.verifiable]
    return MetricSummary(
        scope=scope,
        key=key,
        answers=len(by_answer),
        claims=len(labels),
        supported=sum(label.fully_supported for label in verifiable),
        verifiable=len(verifiable),
        citation_recall=fmean(recalls) if recalls else None,
        citation_precision=fmean(precisions) if precisions else None,
        citations=citations,
        precise_citations=precise,
        contradicted=sum(label.judgment == judgments.CONTRADICTED for label in labels),
        wrong_citations=sum(label.is_wrong_citation for label in labels),
        ungrounded_numbers=sum(
            label.ungrounded_numbers for label in labels if not label.numbers_overridden
        ),
        numbers_overridden=sum(label.numbers_overridden for label in labels),
        cited_unknown=sum(len(label.cited_unknown) for label in labels),
        uncited=sum(label.uncited for label in labels),
        provisional_claims=sum(label.provisional for label in labels),
        supported_without_evidence=sum(_supported_without_evidence(label) for label in labels),
        inaccessible=sum(label.inaccessible for label in labels),
    )


@dataclass(frozen=True)
class SetMetrics:
    answers: dict[int, MetricSummary]  # in the order the answers first appear
    systems: dict[str, MetricSummary]  # by system name
    overall: MetricSummary


def summarize(labels: Iterable[ClaimLabel]) -> SetMetrics:
    """Per-answer, per-system and whole-set summaries of one set's claims."""
    labels = list(labels)
    by_answer: dict[int, list[ClaimLabel]] = {}
    by_system: dict[str, list[ClaimLabel]] = {}
    for label in labels:
        by_answer.setdefault(label.answer_id, []).append(label)
        by_system.setdefault(label.system, []).append(label)
    return SetMetrics(
        answers={
            answer_id: summarize_claims(group, scope="answer", key=answer_id)
            for answer_id, group in by_answer.items()
        },
        systems={
            system: summarize_claims(by_system[system], scope="system", key=system)
            for system in sorted(by_system)
        },
        overall=summarize_claims(labels, scope="set"),
    )


@dataclass(frozen=True)
class ReleaseFlags:
    """What one top-level claim adds to its system's release summary: the facts that the
    supported share, the provisional mark and every criterion's pass or fail read, and
    nothing else. Stored per claim (services.claims_changed) so that the set page sums
    them instead of rebuilding every label."""

    worthy: bool
    supported: bool  # verification-worthy and fully supported by its own citations
    inaccessible: bool  # judged source inaccessible: out of the share's denominator
    judged_supported: bool
    provisional: bool
    contradicted: bool
    wrong_citation: bool
    uncited_worthy: bool
    # Verification-worthy, a number not found in the cited passages, not overridden by a lead.
    numbers_failing: bool
    # Answers the question and is not backed by its sources (ClaimLabel.fails_the_question).
    fails_the_question: bool
    # Verification-worthy, with an unsupported assertion that states a number or a date.
    unsupported_number: bool
    # The answer's topics as criteria compare them (casefolded), sorted.
    topics: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ReleaseFlags:
        """From a stored row's columns (a release fact's or a release tally's)."""
        return cls(**{name: row[name] for name in RELEASE_FLAGS}, topics=tuple(row["topics"]))

    def columns(self) -> dict[str, Any]:
        """The stored row's columns: the flags and the topics as a JSON list."""
        return {name: getattr(self, name) for name in RELEASE_FLAGS} | {"topics": list(self.topics)}


# The yes/no fields of ReleaseFlags, as the stored facts and tallies name their columns.
RELEASE_FLAGS: tuple[str, ...] = tuple(f.name for f in fields(ReleaseFlags) if f.name != "topics")


def release_flags(label: ClaimLabel) -> ReleaseFlags:
    worthy = label.verification_worthy
    return ReleaseFlags(
        worthy=worthy,
        supported=worthy and label.fully_supported,
        inaccessible=label.inaccessible,
        judged_supported=label.judgment == judgments.SUPPORTED,
        provisional=label.provisional,
        contradicted=label.judgment == judgments.CONTRADICTED,
        wrong_citation=label.is_wrong_citation,
        uncited_worthy=label.uncited and worthy,
        numbers_failing=worthy and label.ungrounded_numbers > 0 and not label.numbers_overridden,
        fails_the_question=label.fails_the_question,
        unsupported_number=worthy and bool(label.unsupported_numbers),
        topics=tuple(sorted({topic.casefold() for topic in label.topics})),
    )


@dataclass(frozen=True)
class ReleaseCounts:
    """Sums of ReleaseFlags over a group of claims (a system, or the set): enough for the
    supported share ("n of m"), the provisional mark and every criterion's pass or fail
    (criteria.passes), though not for which claims fail: the report has those."""

    claims: int = 0
    verifiable: int = 0
    supported: int = 0
    provisional_claims: int = 0
    wrong_citations: int = 0
    uncited_worthy: int = 0
    numbers_failing: int = 0
    numbers_failing_supported: int = 0
    inaccessible: int = 0
    fail_the_question: int = 0
    unsupported_numbers: int = 0
    # Contradicted claims by their answer's topics: a criterion may look at some topics only.
    contradicted: tuple[tuple[tuple[str, ...], int], ...] = ()

    def __add__(self, other: ReleaseCounts) -> ReleaseCounts:
        contradicted: dict[tuple[str, ...], int] = dict(self.contradicted)
        for topics, n in other.contradicted:
            contradicted[topics] = contradicted.get(topics, 0) + n
        sums = {name: getattr(self, name) + getattr(other, name) for name in _COUNT_FIELDS}
        return ReleaseCounts(
            **sums, contradicted=tuple(sorted((t, n) for t, n in contradicted.items() if n))
        )

    @property
    def provisional(self) -> bool:
        return self.provisional_claims > 0

    @property
    def supported_text(self) -> str:
        return f"{self.supported} of {self.verifiable}"

    def contradicted_in(self, topics: frozenset[str] = frozenset()) -> int:
        """Contradicted claims in answers tagged with any of these topics (all without)."""
        return sum(n for tags, n in self.contradicted if not topics or topics & set(tags))


# ReleaseCounts' plain sums (all but the contradicted claims by topics).
_COUNT_FIELDS: tuple[str, ...] = tuple(
    f.name for f in fields(ReleaseCounts) if f.name != "contradicted"
)


def release_counts(flags: Iterable[ReleaseFlags]) -> ReleaseCounts:
    return release_counts_weighted((f, 1) for f in flags)


def label_counts(labels: Iterable[ClaimLabel]) -> ReleaseCounts:
    """release_counts of these claims' flags: what the stored tallies hold for them."""
    return release_counts(release_flags(label) for label in labels)


def release_counts_weighted(groups: Iterable[tuple[ReleaseFlags, int]]) -> ReleaseCounts:
    """release_counts of `n` claims for each `(flags, n)`: from the database's GROUP BY."""
    sums = dict.fromkeys(_COUNT_FIELDS, 0)
    contradicted: dict[tuple[str, ...], int] = {}
    for f, n in groups:
        sums["claims"] += n
        sums["verifiable"] += n * (f.worthy and not f.inaccessible)
        sums["inaccessible"] += n * f.inaccessible
        sums["fail_the_question"] += n * f.fails_the_question
        sums["unsupported_numbers"] += n * f.unsupported_number
        sums["supported"] += n * f.supported
        sums["provisional_claims"] += n * f.provisional
        sums["wrong_citations"] += n * f.wrong_citation
        sums["uncited_worthy"] += n * f.uncited_worthy
        sums["numbers_failing"] += n * f.numbers_failing
        sums["numbers_failing_supported"] += n * (f.numbers_failing and f.judged_supported)
        if f.contradicted:
            contradicted[f.topics] = contradicted.get(f.topics, 0) + n
    return ReleaseCounts(**sums, contradicted=tuple(sorted(contradicted.items())))


DISTRIBUTION_BUCKETS: tuple[tuple[str, str], ...] = (
    ("supported", "Supported"),
    ("partial", "Partially supported"),
    ("not_supported", "Not supported"),
    ("contradicted", "Contradicted"),
    ("other", "Other"),
)

_BUCKET_OF: dict[str | None, str] = {
    judgments.SUPPORTED: "supported",
    judgments.PARTIAL: "partial",
    judgments.NOT_SUPPORTED: "not_supported",
    judgments.CONTRADICTED: "contradicted",
}


@dataclass(frozen=True)
class JudgmentCounts:
    """One stacked bar: "other" holds wrong citation, inaccessible, unclear and unjudged."""

    supported: int = 0
    partial: int = 0
    not_supported: int = 0
    contradicted: int = 0
    other: int = 0

    @property
    def total(self) -> int:
        return self.supported + self.partial + self.not_supported + self.contradicted + self.other

    def segments(self) -> tuple[tuple[str, str, int, float], ...]:
        """(bucket, label, count, share of the bar), in chart order; shares 0 on an empty bar."""
        total = self.total
        return tuple(
            (bucket, name, getattr(self, bucket), getattr(self, bucket) / total if total else 0.0)
            for bucket, name in DISTRIBUTION_BUCKETS
        )


def judgment_distribution(labels: Iterable[ClaimLabel]) -> dict[str, JudgmentCounts]:
    """Judgments per system, over verification-worthy claims: the same claims as the
    denominator of the supported share, so a bar's length is m."""
    counts: dict[str, dict[str, int]] = {}
    for label in labels:
        system_counts = counts.setdefault(label.system, {})
        if not label.verification_worthy:
            continue
        bucket = _BUCKET_OF.get(label.judgment, "other")
        system_counts[bucket] = system_counts.get(bucket, 0) + 1
    return {system: JudgmentCounts(**counts[system]) for system in sorted(counts)}
