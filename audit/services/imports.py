"""Importing answer sets: parsed records become questions, answers, passages, claims with
their citations and machine checks, and rater labels, all or nothing.

A citeaudit export is written back as it was by `restore`; the matcher's checks are built
by `checks`. Views and management commands call these; the parsing and matching themselves
live in the pure modules (`formats`, `claims`, `matching`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from audit.claims import PlannedClaim, plan_claims
from audit.formats import AnswerRecord, FormatError, ParsedFile
from audit.formats.citeaudit import FORMAT as CITEAUDIT
from audit.formats.records import Budget
from audit.models import (
    Answer,
    AuditSet,
    Claim,
    ClaimCheck,
    ImportBatch,
    Passage,
    Question,
    Rater,
    RaterLabel,
)
from audit.services.checks import answer_claim_checks
from audit.services.derived import claims_changed
from audit.services.restore import people, restore_chunk

# Answers are written in chunks so memory stays flat on large files.
CHUNK = 500


@dataclass(frozen=True)
class ImportSummary:
    format: str
    answers: int
    skipped: int
    claims: int
    uncited: int
    cited_unknown: int
    not_located: int
    batch_id: int | None
    # Restored from a citeaudit export; other formats bring no sheets or gold.
    sheets: int = 0
    gold: int = 0


def answer_content_hash(record: AnswerRecord) -> str:
    """Identity of an answer within a set: re-importing the same file creates nothing new."""
    payload = json.dumps(
        [
            record.question_id,
            record.question,
            record.system,
            record.answer_id,
            record.answer,
            [[p.title, p.url, p.text] for p in record.passages],
            list(record.claims) if record.claims is not None else None,
        ],
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def answers_import(
    *,
    audit_set: AuditSet,
    parsed: ParsedFile,
    filename: str,
    sha256: str,
    user: AbstractBaseUser | None = None,
    progress: Callable[[int], None] | None = None,
    budget: Budget | None = None,
) -> ImportSummary:
    """Import every answer of a parsed file into the set, all or nothing.

    Answers already in the set (same content hash) are skipped. Raises FormatError (and
    writes nothing) when a label points at a claim the answer does not have, or when the
    claims the answers split into take the budget the parser started over its bound.

    A citeaudit export is restored as it was: claims keep their text, offsets and order,
    and their machine checks, assignments, sheets, rater labels and gold come back with
    their timestamps. Reviewers and leads are matched by username; missing ones are created
    inactive, without a password or group, and the reviewers join the set.
    """
    with transaction.atomic():
        seen = set(
            Answer.objects.filter(audit_set=audit_set).values_list("content_hash", flat=True)
        )
        questions = {q.external_id: q for q in Question.objects.filter(audit_set=audit_set)}
        raters: dict[str, Rater] = {}
        counted = ("answers", "skipped", "claims", "uncited", "unknown", "lost", "sheets", "gold")
        totals = dict.fromkeys(counted, 0)

        fresh: list[tuple[AnswerRecord, str]] = []
        for record in parsed.records:
            # An exported answer keeps the identity it had, so importing an export into the
            # set it came from adds nothing.
            digest = (
                record.labelled.content_hash if record.labelled else answer_content_hash(record)
            )
            if digest in seen:
                totals["skipped"] += 1
                continue
            seen.add(digest)
            fresh.append((record, digest))
        if budget is not None and budget.max_claims is not None:
            # Split here too, once more, so an over-long file is refused before any write.
            for record, _ in fresh:
                if record.claims is None:
                    budget.add_claims(len(plan_claims(record)), record.location)

        batch = ImportBatch.objects.create(
            audit_set=audit_set,
            filename=filename[:300],
            format=parsed.format,
            sha256=sha256,
            created_by=user if user and user.is_authenticated else None,
        )

        users = people(audit_set, [record for record, _ in fresh])
        for chunk_start in range(0, len(fresh), CHUNK):
            chunk = fresh[chunk_start : chunk_start + CHUNK]
            if parsed.format == CITEAUDIT:
                restore_chunk(
                    chunk,
                    audit_set=audit_set,
                    batch=batch,
                    filename=filename,
                    questions=questions,
                    raters=raters,
                    users=users,
                    totals=totals,
                )
            else:
                _import_chunk(
                    chunk,
                    audit_set=audit_set,
                    batch=batch,
                    filename=filename,
                    questions=questions,
                    raters=raters,
                    totals=totals,
                )
            if progress:
                progress(len(chunk))

        batch.answers_created = totals["answers"]
        batch.answers_skipped = totals["skipped"]
        batch.claims_created = totals["claims"]
        batch.save(update_fields=["answers_created", "answers_skipped", "claims_created"])
        if totals["answers"] == 0:
            # Nothing new: leave no empty import behind.
            batch.delete()
            batch_id = None
        else:
            batch_id = batch.pk
            # New claims, and for a restore their assignments, sheets, gold and splits.
            claims_changed(
                audit_set_id=audit_set.pk,
                claim_ids=Claim.objects.filter(answer__import_batch=batch).values_list(
                    "pk", flat=True
                ),
                reviewer_ids=users.values(),
            )

    return ImportSummary(
        format=parsed.format,
        answers=totals["answers"],
        skipped=totals["skipped"],
        claims=totals["claims"],
        uncited=totals["uncited"],
        cited_unknown=totals["unknown"],
        not_located=totals["lost"],
        batch_id=batch_id,
        sheets=totals["sheets"],
        gold=totals["gold"],
    )


def _import_chunk(
    chunk: list[tuple[AnswerRecord, str]],
    *,
    audit_set: AuditSet,
    batch: ImportBatch,
    filename: str,
    questions: dict[str, Question],
    raters: dict[str, Rater],
    totals: dict[str, int],
) -> None:
    new_questions = []
    for record, _ in chunk:
        if record.question_id not in questions:
            question = Question(
                audit_set=audit_set, external_id=record.question_id, text=record.question
            )
            questions[record.question_id] = question
            new_questions.append(question)
    Question.objects.bulk_create(new_questions)

    plans = [plan_claims(record) for record, _ in chunk]
    answers = [
        Answer(
            audit_set=audit_set,
            question=questions[record.question_id],
            import_batch=batch,
            # No cutting to the column's length: the parsers refuse longer values, and two
            # ids cut to one prefix would merge two answers.
            external_id=record.answer_id,
            system=record.system,
            text=record.answer,
            content_hash=digest,
            is_partial=any(p.cited_unknown for p in plan),
            metadata=record.metadata,
        )
        for (record, digest), plan in zip(chunk, plans, strict=True)
    ]
    Answer.objects.bulk_create(answers)

    passages: list[Passage] = []
    for (record, _), answer, plan in zip(chunk, answers, plans, strict=True):
        cited = {n for p in plan for n in p.citations}
        for position, source in enumerate(record.passages, start=1):
            passages.append(
                Passage(
                    answer=answer,
                    position=position,
                    title=source.title,
                    url=source.url,
                    text=source.text,
                    is_cited=position in cited,
                )
            )
    Passage.objects.bulk_create(passages)
    passages_by_answer: dict[int, list[Passage]] = {}
    for passage in passages:
        passages_by_answer.setdefault(passage.answer_id, []).append(passage)

    claim_objects: list[Claim] = []
    claim_plans: list[PlannedClaim] = []
    for answer, plan in zip(answers, plans, strict=True):
        for planned in plan:
            claim_objects.append(
                Claim(
                    answer=answer,
                    order=planned.order,
                    text=planned.text,
                    start=planned.start,
                    end=planned.end,
                    location=planned.location,
                    cited_unknown=list(planned.cited_unknown),
                    is_uncited=planned.uncited,
                )
            )
            claim_plans.append(planned)
            totals["claims"] += 1
            totals["uncited"] += planned.uncited
            totals["unknown"] += len(planned.cited_unknown)
            totals["lost"] += planned.location == Claim.Location.NOT_LOCATED
    Claim.objects.bulk_create(claim_objects)

    through = Claim.citations.through
    links = []
    for claim, planned in zip(claim_objects, claim_plans, strict=True):
        answer_passages = passages_by_answer.get(claim.answer_id, [])
        for number in planned.citations:
            links.append(through(claim_id=claim.pk, passage_id=answer_passages[number - 1].pk))
    through.objects.bulk_create(links)

    claims_by_answer: dict[int, list[tuple[Claim, PlannedClaim]]] = {}
    for claim, planned in zip(claim_objects, claim_plans, strict=True):
        claims_by_answer.setdefault(claim.answer_id, []).append((claim, planned))

    checks = []
    for answer in answers:
        pairs = claims_by_answer.get(answer.pk, [])
        checks.extend(
            answer_claim_checks(
                passages_by_answer.get(answer.pk, []),
                [(c, p.citations, bool(p.cited_unknown)) for c, p in pairs],
            )
        )
    ClaimCheck.objects.bulk_create(checks)

    labels = []
    for (record, _), answer in zip(chunk, answers, strict=True):
        answer_claims = [c for c, _ in claims_by_answer.get(answer.pk, [])]
        for i, label in enumerate(record.labels):
            if not 0 <= label.claim_index < len(answer_claims):
                raise FormatError(
                    filename,
                    record.location,
                    f"labels[{i}].claim",
                    f"claim {label.claim_index} does not exist "
                    f"(the answer has {len(answer_claims)} claims, numbered from 0)",
                )
            rater = raters.get(label.rater)
            if rater is None:
                rater, _ = Rater.objects.get_or_create(name=label.rater)
                raters[label.rater] = rater
            labels.append(
                RaterLabel(
                    rater=rater,
                    claim=answer_claims[label.claim_index],
                    judgment=label.judgment or "",
                    raw_label=label.raw_label,
                    verification_worthy=label.verification_worthy,
                    note=label.note,
                    import_batch=batch,
                )
            )
    RaterLabel.objects.bulk_create(labels)
    totals["answers"] += len(answers)
