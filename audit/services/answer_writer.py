"""Writing new answers into a set with what comes with them (questions, passages, claims,
citation links, machine checks, rater labels): one writer for an import and a restore.

Rows go in with ids reserved up front and plain bulk inserts (audit/services/bulk.py), from
the plain values of import_plan.AnswerRows, so no model instance is built for them.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db.models import Model
from django.utils import timezone

from audit.import_plan import AnswerRows, RestoredClaim
from audit.models import (
    Answer,
    Claim,
    ClaimCheck,
    ImportBatch,
    Passage,
    Question,
    Rater,
    RaterLabel,
)
from audit.selectors.release import answer_topics
from audit.services import bulk
from audit.services.derived import NewClaim, NewClaims

_ANSWER_COLUMNS = (
    "id",
    "audit_set_id",
    "question_id",
    "import_batch_id",
    "external_id",
    "system",
    "run",
    "text",
    "content_hash",
    "is_partial",
    "metadata",
    "created_at",
)
_PASSAGE_COLUMNS = ("id", "answer_id", "position", "title", "url", "text", "is_cited")
_CLAIM_COLUMNS = (
    "id",
    "answer_id",
    "order",
    "text",
    "start",
    "end",
    "location",
    "cited_unknown",
    "is_uncited",
)
# What a restored claim adds (import_plan.RestoredClaim).
_RESTORED_CLAIM_COLUMNS = (
    "parent_id",
    "parent_order",
    "answers_question",
    "split_by_id",
    "split_at",
)
_CHECK_COLUMNS = (
    "id",
    "claim_id",
    "matcher_version",
    "label",
    "best_score",
    "highlights",
    "numbers",
    "wrong_citation",
    "computed_at",
)


@dataclass(frozen=True)
class WrittenAnswers:
    """The ids of what answers_write wrote, each list in the order it was given."""

    answer_ids: list[int]
    # Per answer: its claims' ids, one per ClaimRow; its passages' ids by position - 1.
    claim_ids: list[list[int]]
    passage_ids: list[list[int]]


def answers_write(
    *,
    answers: Sequence[tuple[AnswerRows, str]],
    audit_set_id: int,
    batch: ImportBatch,
    raters: dict[str, Rater],
    totals: dict[str, int],
    derived: NewClaims | None = None,
    run: str = "",
) -> WrittenAnswers:
    """Write new answers of the set, each with its content hash: their new questions,
    the answers, passages, claims (atomic ones under their parents, for a restore), citation
    links, machine checks and rater labels; then, given `derived`, the claims' derived rows.

    Rows are written parents first (bulk.foreign_keys_checked_per_statement). `raters`
    holds the raters found so far, by name; `totals` counts answers, claims, uncited ones,
    unknown citations and claims not located. A label must point at one of its answer's
    claims. `run` labels every answer (a push of a named run).
    """
    questions = _questions_write(answers, audit_set_id=audit_set_id)
    now = timezone.now()
    answer_ids = bulk.reserve_ids(Answer, len(answers))
    bulk.insert_rows(
        Answer,
        _ANSWER_COLUMNS,
        _answer_rows(answers, answer_ids, questions, audit_set_id, batch.pk, now, run),
    )
    passage_ids = _passages_write(answers, answer_ids)
    claim_ids = _claim_ids(answers)
    new_claims = _claims_write(
        answers, answer_ids, claim_ids, passage_ids, now, totals, derived is not None
    )
    _labels_write(answers, claim_ids, batch, raters)
    if derived is not None:
        derived.add(new_claims)
    totals["answers"] += len(answers)
    return WrittenAnswers(answer_ids=answer_ids, claim_ids=claim_ids, passage_ids=passage_ids)


def _held_questions(*, audit_set_id: int, external_ids: Iterable[str]) -> dict[str, int]:
    """The pks of those of the set's questions that exist, by external id."""
    return dict(
        Question.objects.filter(
            audit_set_id=audit_set_id, external_id__in=list(external_ids)
        ).values_list("external_id", "pk")
    )


def _questions_write(
    answers: Sequence[tuple[AnswerRows, str]], *, audit_set_id: int
) -> dict[str, int]:
    """The pks of the answers' questions by external id, those the set lacks written.

    Looked up a chunk at a time: an earlier chunk's new ones are rows by now, and an import
    pushed into the same set at the same moment finds this one's (docs/imports-parallel.md).
    """
    asked: dict[str, str] = {}
    for rows, _ in answers:
        asked.setdefault(rows.question_id, rows.question)
    questions = _held_questions(audit_set_id=audit_set_id, external_ids=asked)
    new_questions = {key: text for key, text in asked.items() if key not in questions}
    ids = bulk.reserve_ids(Question, len(new_questions))
    bulk.insert_rows(
        Question,
        ("id", "audit_set_id", "external_id", "text"),
        [
            (pk, audit_set_id, external_id, text)
            for pk, (external_id, text) in zip(ids, new_questions.items(), strict=True)
        ],
    )
    questions.update(zip(new_questions, ids, strict=True))
    return questions


def _answer_rows(
    answers: Sequence[tuple[AnswerRows, str]],
    answer_ids: list[int],
    questions: dict[str, int],
    audit_set_id: int,
    batch_id: int,
    now: object,
    run: str,
) -> list[tuple]:
    created_at = bulk.db_value(Answer, "created_at", now)
    return [
        (
            answer_id,
            audit_set_id,
            questions[rows.question_id],
            batch_id,
            # No cutting to the column's length: the parsers refuse longer values, and two
            # ids cut to one prefix would merge two answers.
            rows.answer_id,
            rows.system,
            run,
            rows.answer,
            digest,
            rows.is_partial,
            rows.metadata,
            created_at,
        )
        for answer_id, (rows, digest) in zip(answer_ids, answers, strict=True)
    ]


def _passages_write(
    answers: Sequence[tuple[AnswerRows, str]], answer_ids: list[int]
) -> list[list[int]]:
    """Write the answers' passages; each answer's passage ids by position - 1."""
    ids = iter(bulk.reserve_ids(Passage, sum(len(rows.passages) for rows, _ in answers)))
    passage_ids, passage_rows = [], []
    for answer_id, (rows, _) in zip(answer_ids, answers, strict=True):
        own = list(itertools.islice(ids, len(rows.passages)))
        passage_ids.append(own)
        passage_rows.extend(
            (passage_id, answer_id, position, title, url, text, is_cited)
            for position, (passage_id, (title, url, text, is_cited)) in enumerate(
                zip(own, rows.passages, strict=True), start=1
            )
        )
    bulk.insert_rows(Passage, _PASSAGE_COLUMNS, passage_rows)
    return passage_ids


def _claim_ids(answers: Sequence[tuple[AnswerRows, str]]) -> list[list[int]]:
    """New ids for each answer's claims, one per ClaimRow: every top-level claim of the
    chunk before any atomic one (a restore's), so a parent's id is below its parts'."""
    counts = [len(rows.claims) for rows, _ in answers]
    ids = iter(bulk.reserve_ids(Claim, sum(counts)))
    if not any(kept.parent_order is not None for rows, _ in answers for kept in rows.restored):
        return [list(itertools.islice(ids, count)) for count in counts]
    claim_ids = [[0] * count for count in counts]
    for atomic in (False, True):
        for (rows, _), own in zip(answers, claim_ids, strict=True):
            for i, kept in enumerate(rows.restored):
                if (kept.parent_order is not None) == atomic:
                    own[i] = next(ids)
    return claim_ids


def _claims_write(
    answers: Sequence[tuple[AnswerRows, str]],
    answer_ids: list[int],
    claim_ids: list[list[int]],
    passage_ids: list[list[int]],
    now: object,
    totals: dict[str, int],
    derive: bool,
) -> list[NewClaim]:
    """Write the answers' claims, their citation links and machine checks; the NewClaims of
    the claims when `derive`."""
    restoring = any(rows.restored for rows, _ in answers)
    computed_at = bulk.db_value(ClaimCheck, "computed_at", now)
    claim_rows, link_rows, check_rows, new_claims = [], [], [], []
    not_located = Claim.Location.NOT_LOCATED
    for answer_id, (rows, _), own, own_passages in zip(
        answer_ids, answers, claim_ids, passage_ids, strict=True
    ):
        system = rows.system
        topics = _topics(rows.metadata) if derive and rows.has_topics else frozenset()
        # import_plan.ClaimRow, field by field.
        for claim_id, (
            order,
            text,
            start,
            end,
            location,
            cited_unknown_json,
            uncited,
            citations,
            cited_unknown,
            matcher_version,
            label,
            best_score,
            highlights,
            numbers,
            wrong_citation,
            ungrounded,
        ) in zip(own, rows.claims, strict=True):
            if derive:
                new_claims.append(
                    NewClaim(
                        claim_id=claim_id,
                        answer_id=answer_id,
                        system=system,
                        citations=citations,
                        cited_unknown=cited_unknown,
                        uncited=uncited,
                        check_label=label,
                        wrong_citation=wrong_citation is not None,
                        ungrounded=ungrounded,
                        topics=topics,
                    )
                )
            claim_rows.append(
                (
                    claim_id,
                    answer_id,
                    order,
                    text,
                    start,
                    end,
                    location,
                    cited_unknown_json,
                    uncited,
                )
            )
            link_rows.extend((claim_id, own_passages[n - 1]) for n in citations)
            if matcher_version is not None:
                check_rows.append(
                    (
                        claim_id,
                        matcher_version,
                        label,
                        best_score,
                        highlights,
                        numbers,
                        wrong_citation,
                        computed_at,
                    )
                )
            totals["uncited"] += uncited
            totals["unknown"] += len(cited_unknown)
            totals["lost"] += location == not_located
        totals["claims"] += len(own)
    columns = _CLAIM_COLUMNS
    if restoring:
        columns += _RESTORED_CLAIM_COLUMNS
        claim_rows, check_rows = _restored(answers, claim_ids, claim_rows, check_rows)
    bulk.insert_rows(Claim, columns, claim_rows)
    _insert_with_ids(Claim.citations.through, ("id", "claim_id", "passage_id"), link_rows)
    _insert_with_ids(ClaimCheck, _CHECK_COLUMNS, check_rows)
    return new_claims


def _insert_with_ids(model: type[Model], columns: Sequence[str], rows: list[tuple]) -> None:
    """Insert rows of every column but the first, the id, reserved here."""
    ids = bulk.reserve_ids(model, len(rows))
    bulk.insert_rows(model, columns, [(pk, *row) for pk, row in zip(ids, rows, strict=True)])


# A claim of an answer that carries no RestoredClaim: as an import writes it.
_NOT_RESTORED = RestoredClaim(None, False, None, None, None)


def _restored(
    answers: Sequence[tuple[AnswerRows, str]],
    claim_ids: list[list[int]],
    claim_rows: list[tuple],
    check_rows: list[tuple],
) -> tuple[list[tuple], list[tuple]]:
    """The claim and check rows with what restored claims keep: parent and split columns
    added, checks' own times put back; claims in id order, parents first. Added after the
    claims' loop, so an import does not pay for them."""
    kept: dict[int, tuple[int | None, RestoredClaim]] = {}
    for (rows, _), own in zip(answers, claim_ids, strict=True):
        restored = rows.restored or (_NOT_RESTORED,) * len(own)
        tops = {
            claim[0]: claim_id
            for claim_id, claim, claim_kept in zip(own, rows.claims, restored, strict=True)
            if claim_kept.parent_order is None
        }
        for claim_id, claim_kept in zip(own, restored, strict=True):
            parent = claim_kept.parent_order
            kept[claim_id] = (None if parent is None else tops[parent], claim_kept)
    claim_rows = sorted(
        (
            *row,
            parent_id,
            claim_kept.parent_order,
            claim_kept.answers_question,
            claim_kept.split_by_id,
            bulk.db_value(Claim, "split_at", claim_kept.split_at),
        )
        for row in claim_rows
        for parent_id, claim_kept in (kept[row[0]],)
    )
    check_rows = [
        row
        if (computed_at := kept[row[0]][1].check_computed_at) is None
        else (*row[:-1], bulk.db_value(ClaimCheck, "computed_at", computed_at))
        for row in check_rows
    ]
    return claim_rows, check_rows


def _labels_write(
    answers: Sequence[tuple[AnswerRows, str]],
    claim_ids: list[list[int]],
    batch: ImportBatch,
    raters: dict[str, Rater],
) -> None:
    labels = []
    for (rows, _), own in zip(answers, claim_ids, strict=True):
        for label in rows.labels:
            rater = raters.get(label.rater)
            if rater is None:
                defaults = {"kind": label.kind} if label.kind else {}
                rater, _ = Rater.objects.get_or_create(name=label.rater, defaults=defaults)
                raters[label.rater] = rater
            labels.append(
                RaterLabel(
                    rater=rater,
                    claim_id=own[label.claim_index],
                    judgment=label.judgment or "",
                    raw_label=label.raw_label,
                    verification_worthy=label.verification_worthy,
                    note=label.note,
                    import_batch=batch,
                )
            )
    RaterLabel.objects.bulk_create(labels)


def _topics(metadata: str) -> frozenset[str]:
    """The topics of stored metadata (answer_topics of the JSON as read back: a format may
    have built the metadata with tuples)."""
    return answer_topics(json.loads(metadata))
