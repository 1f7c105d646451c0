"""Everything stored that is derived from a set's claims, refreshed by one entry point.

Derived rows are: each claim's severity and unanimous gold (its place in the adjudication
queue), its stored review status, reviewers' tallies, agreement facts, release facts (what
the set page's release summary sums) and each answer's flags read off its claims' checks.
Every write path (review, reopen, split, replacement, restore, rematch, adjudication,
settings, admin edits) calls `claims_changed` once, at its end, inside its own transaction;
nothing else writes these rows. The order is
fixed because each step reads what the one before wrote: comparing may write gold, which
the status and the release facts read; tallies move by the change in facts. Rows are
written in the lock order of audit/services/locks.py: claims and their parents, then
derived rows.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, F
from django.db.models.functions import Now

from audit import selectors
from audit.answer_flags import CitationChecks, no_citation_verifies
from audit.metrics import ReleaseFlags, release_flags
from audit.models import (
    Answer,
    Assignment,
    Claim,
    ReleaseFact,
    ReviewerTally,
    SheetFact,
    Webhook,
)
from audit.selectors.release import claim_label
from audit.services import disagreements
from audit.services.answer_flags import answer_flags_refresh
from audit.services.disagreements import CompareSummary
from audit.services.facts import agreement_facts_refresh
from audit.services.locks import claims_lock
from audit.services.release import (
    Key,
    new_fact_row,
    new_facts_insert,
    release_facts_refresh,
    release_tallies_move,
)
from audit.services.tallies import reviewer_tallies_refresh
from audit.services.webhooks import webhooks_fire, webhooks_listen

# Keeps `pk IN (...)` lists far below every database's parameter limit.
CHUNK = 2000


def claims_changed(
    *,
    claim_ids: Iterable[int] = (),
    audit_set_id: int | None = None,
    reviewer_ids: Iterable[int] = (),
) -> CompareSummary:
    """Recompute everything derived from these claims of the set.

    `reviewer_ids` names reviewers whose assignments in the set may have changed (opening,
    replacement, split, restore, admin edits): their tallies are counted again. Any other
    reviewer's tally moves by how many counted sheets of these claims they gained or lost,
    read from the agreement facts before and after their refresh: a sheet submitted or
    reopened costs two small reads instead of counting the reviewer's whole queue. With no
    claims nothing is recomputed: criteria are applied when the set page reads the facts.
    Without `audit_set_id`, the set is the claims' own (they all belong to one set).
    """
    ids = sorted(set(claim_ids))
    if audit_set_id is None:
        audit_set_id = Claim.objects.values_list("answer__audit_set_id", flat=True).get(pk=ids[0])
    recount = set(reviewer_ids)
    with transaction.atomic(), decisions_watched(audit_set_id=audit_set_id, claim_ids=ids):
        # Usually held already; an atomic claim's parent must be, for its release fact.
        claims_lock(claim_ids=ids)
        # Every change to a claim, its sheets or its gold passes here: the API's
        # updated_since reads this stamp.
        Claim.objects.filter(pk__in=ids).update(updated_at=Now())
        # Severity and unanimous gold, then the stored statuses of all these claims.
        summary = disagreements.claims_compare(claim_ids=ids) if ids else CompareSummary(0, 0, 0)
        before = _counted_sheets(ids)
        agreement_facts_refresh(claim_ids=ids)
        moved = _counted_sheets(ids)
        moved.subtract(before)
        for reviewer_id, by in sorted(moved.items()):
            if by and reviewer_id not in recount:
                found = ReviewerTally.objects.filter(
                    audit_set_id=audit_set_id, reviewer_id=reviewer_id
                ).update(submitted=F("submitted") + by)
                if not found:
                    recount.add(reviewer_id)  # no tally yet: count it once
        if recount:
            reviewer_tallies_refresh(audit_set_id=audit_set_id, reviewer_ids=recount)
        release_facts_refresh(audit_set_id=audit_set_id, claim_ids=ids)
        # Imports, rematches, splits and restores change claims or checks; it reads no
        # other derived row, so it may come last.
        answer_flags_refresh(claim_ids=ids)
    return summary


# Per set compared by an open decisions_watched block, the claims changed inside it so far.
_watched: ContextVar[dict[int, list[int]] | None] = ContextVar("decisions_watched", default=None)


@contextmanager
def decisions_watched(*, audit_set_id: int, claim_ids: Iterable[int] = ()) -> Iterator[None]:
    """Send decision.changed for each system of the set whose release decision (pass, fail,
    provisional) differs after the block from before it: once per change, whatever the block
    did (a criteria edit, a sheet, gold, a reopen, an import, a delete). A block inside
    another of the same set, as claims_changed inside a criteria edit or an import, only
    adds its claims to the outer one, so a job that changes claims a part at a time sends
    its net change once, not each part's. Read only where a webhook listens: a few tally
    rows before and after. The block runs in one transaction with its two reads."""
    open_blocks = _watched.get() or {}
    if audit_set_id in open_blocks:
        open_blocks[audit_set_id].extend(claim_ids)
        yield
        return
    if not webhooks_listen(audit_set_id=audit_set_id, event=Webhook.Event.DECISION_CHANGED):
        yield
        return
    changed = list(claim_ids)
    token = _watched.set({**open_blocks, audit_set_id: changed})
    try:
        with transaction.atomic():
            before = selectors.release_outcomes(audit_set_id=audit_set_id)
            yield
            after = selectors.release_outcomes(audit_set_id=audit_set_id)
    finally:
        _watched.reset(token)
    claims = sorted(set(changed))
    for system in sorted(before.keys() | after.keys()):
        if before.get(system) != after.get(system):
            webhooks_fire(
                audit_set_id=audit_set_id,
                event=Webhook.Event.DECISION_CHANGED,
                data={
                    "system": system,
                    "before": before.get(system),
                    "after": after.get(system),
                    # The claims whose change moved it (none for criteria or an import); a long
                    # list is cut, not sent whole.
                    "claims": claims[:100],
                },
            )


def claims_changed_in_parts(
    *,
    audit_set_id: int,
    claim_ids: Iterable[int],
    progress: Callable[[int], None],
) -> CompareSummary:
    """claims_changed over many claims, a part at a time, calling progress with the claims
    of each part done: what a job does, inside its one transaction, so it can report and be
    cancelled. An answer's claims stay in one part, since an atomic claim's parent is
    derived from all its parts."""
    with decisions_watched(audit_set_id=audit_set_id):
        return _claims_changed_in_parts(audit_set_id, sorted(set(claim_ids)), progress)


def _claims_changed_in_parts(
    audit_set_id: int, ids: list[int], progress: Callable[[int], None]
) -> CompareSummary:
    by_answer: dict[int, list[int]] = defaultdict(list)
    for start in range(0, len(ids), CHUNK):
        for pk, answer_id in Claim.objects.filter(pk__in=ids[start : start + CHUNK]).values_list(
            "pk", "answer_id"
        ):
            by_answer[answer_id].append(pk)
    totals = [0, 0, 0]
    batch: list[int] = []
    for answer_id in sorted(by_answer):
        batch += by_answer[answer_id]
        if len(batch) >= CHUNK:
            _add(totals, claims_changed(audit_set_id=audit_set_id, claim_ids=batch))
            progress(len(batch))
            batch = []
    if batch:
        _add(totals, claims_changed(audit_set_id=audit_set_id, claim_ids=batch))
        progress(len(batch))
    return CompareSummary(*totals)


def _add(totals: list[int], summary: CompareSummary) -> None:
    totals[0] += summary.compared
    totals[1] += summary.unanimous
    totals[2] += summary.queued


def _counted_sheets(ids: list[int]) -> Counter[int]:
    """Per reviewer, how many of these claims count a submitted sheet of theirs (SheetFact:
    submitted, judged, and the reviewer assigned), which is what their tally counts."""
    counted: Counter[int] = Counter()
    for start in range(0, len(ids), CHUNK):
        counted.update(
            dict(
                SheetFact.objects.filter(claim_id__in=ids[start : start + CHUNK])
                .order_by()
                .values("reviewer_id")
                .annotate(n=Count("pk"))
                .values_list("reviewer_id", "n")
            )
        )
    return counted


def set_changed(*, audit_set_id: int) -> CompareSummary:
    """claims_changed over every claim of the set: after a change of its settings, an admin
    edit of the set, or a bulk writer that bypassed the services."""
    return claims_changed(
        audit_set_id=audit_set_id,
        claim_ids={
            *Claim.objects.filter(answer__audit_set_id=audit_set_id).values_list("pk", flat=True),
            # Claims deleted with their question or answer: their release facts must go.
            *ReleaseFact.objects.filter(audit_set_id=audit_set_id).values_list(
                "claim_id", flat=True
            ),
        },
        reviewer_ids={
            *ReviewerTally.objects.filter(audit_set_id=audit_set_id).values_list(
                "reviewer_id", flat=True
            ),
            *Assignment.objects.filter(claim__answer__audit_set_id=audit_set_id)
            .order_by()
            .values_list("reviewer_id", flat=True)
            .distinct(),
        },
    )


@dataclass(frozen=True)
class NewClaim:
    """A top-level claim an import has just written, with the values its derived rows read:
    the claim's own columns, its check's and its answer's, as the import wrote them."""

    claim_id: int
    answer_id: int
    system: str  # Answer.system
    citations: tuple[int, ...]  # the cited passages' positions
    cited_unknown: tuple[int, ...]  # Claim.cited_unknown
    uncited: bool  # Claim.is_uncited
    check_label: str  # ClaimCheck.label
    wrong_citation: bool  # ClaimCheck.wrong_citation is set
    ungrounded: int  # selectors.release.ungrounded_numbers of ClaimCheck.numbers
    topics: frozenset[str]  # selectors.release.answer_topics of Answer.metadata


class NewClaims:
    """claims_changed for claims an import creates, written as the import writes them:
    `add` each chunk of new claims, `finish` once, inside the import's transaction.

    Claims that did not exist have no assignment, sheet, gold, parent or atomic part, so
    claims_changed would compare none of them, leave their severity empty and their status
    at its default (unassigned), write no agreement fact and move no reviewer's tally.
    What it would write is their release facts, the release tallies and their answers'
    flags: here computed from the values the import holds, with the functions its steps
    use (selectors.release.claim_label, metrics.release_flags,
    answer_flags.no_citation_verifies), instead of reading the claims back.
    tests/test_derived_new_claims.py holds every derived row equal to a set_changed rebuild.
    Only for claims whose answers are new too (every claim of an answer is in one `add`).
    """

    def __init__(self, *, audit_set_id: int) -> None:
        self.audit_set_id = audit_set_id
        self.moved: Counter[Key] = Counter()
        self._flags: dict[tuple, ReleaseFlags] = {}

    def add(self, claims: Sequence[NewClaim]) -> None:
        facts = []
        checks: dict[int, list[CitationChecks]] = defaultdict(list)
        known = self._flags
        for claim in claims:
            # release_flags reads none of the label's ids: claims with the same values
            # share their flags, and an import's claims have few combinations.
            key = (
                claim.citations,
                claim.cited_unknown,
                claim.ungrounded,
                claim.topics,
                claim.uncited,
            )
            flags = known.get(key)
            if flags is None:
                label = claim_label(
                    claim_id=claim.claim_id,
                    answer_id=claim.answer_id,
                    system=claim.system,
                    citations=sorted(claim.citations),
                    cited_unknown=claim.cited_unknown,
                    ungrounded=claim.ungrounded,
                    topics=claim.topics,
                    uncited=claim.uncited,
                    answers_question=False,
                )
                flags = known[key] = release_flags(label)
            self.moved[(claim.system, flags)] += 1
            facts.append(new_fact_row(self.audit_set_id, claim.claim_id, claim.system, flags))
            checks[claim.answer_id].append(
                CitationChecks(
                    cited=not claim.uncited,
                    cited_unknown=bool(claim.cited_unknown),
                    label=claim.check_label,
                    wrong_citation=claim.wrong_citation,
                )
            )
        new_facts_insert(facts)
        # A new answer's flag is its column's default, false, until set here.
        flagged = sorted(pk for pk, found in checks.items() if no_citation_verifies(found))
        for start in range(0, len(flagged), CHUNK):
            Answer.objects.filter(pk__in=flagged[start : start + CHUNK]).update(
                no_citation_verifies=True
            )

    def finish(self) -> None:
        release_tallies_move(self.audit_set_id, self.moved)
