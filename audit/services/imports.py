"""Importing answer sets and storing the matcher's checks.

Views and management commands call these; the parsing and matching themselves live in the
pure modules (`formats`, `claims`, `matching`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from audit import claims as claim_parsing
from audit import matching
from audit.formats import AnswerRecord, FormatError, ParsedFile
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


@dataclass
class _PlannedClaim:
    order: int
    text: str
    start: int
    end: int
    location: str
    citations: tuple[int, ...]
    cited_unknown: tuple[int, ...]
    uncited: bool


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


def plan_claims(record: AnswerRecord) -> list[_PlannedClaim]:
    """Turn an answer into claims: given claims are located in the answer, else it is split."""
    n_passages = len(record.passages)
    planned: list[_PlannedClaim] = []
    if record.claims is None:
        for order, parsed in enumerate(claim_parsing.split_claims(record.answer)):
            planned.append(
                _plan(
                    order,
                    parsed.text,
                    parsed.start,
                    parsed.end,
                    "split",
                    parsed.citations,
                    n_passages,
                )
            )
        return planned

    hint = 0
    for order, given in enumerate(record.claims):
        numbers = tuple(
            dict.fromkeys(n for m in claim_parsing.find_markers(given) for n in m.numbers)
        )
        text = claim_parsing.strip_markers(given)
        found = claim_parsing.locate_claim(given, record.answer, start_hint=hint)
        if found is None:
            start = end = min(hint, len(record.answer))
            location = Claim.Location.NOT_LOCATED
        else:
            start, end = found.start, found.end
            location = Claim.Location.EXACT if found.exact else Claim.Location.FUZZY
            hint = end
        planned.append(
            _plan(order, text or given.strip(), start, end, location, numbers, n_passages)
        )
    return planned


def _plan(
    order: int,
    text: str,
    start: int,
    end: int,
    location: str,
    numbers: Sequence[int],
    n_passages: int,
) -> _PlannedClaim:
    return _PlannedClaim(
        order=order,
        text=text,
        start=start,
        end=end,
        location=location,
        citations=tuple(n for n in numbers if 1 <= n <= n_passages),
        cited_unknown=tuple(n for n in numbers if n > n_passages),
        uncited=not numbers,
    )


def answers_import(
    *,
    audit_set: AuditSet,
    parsed: ParsedFile,
    filename: str,
    sha256: str,
    user: AbstractBaseUser | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportSummary:
    """Import every answer of a parsed file into the set, all or nothing.

    Answers already in the set (same content hash) are skipped. Raises FormatError (and
    writes nothing) when a label points at a claim the answer does not have.
    """
    with transaction.atomic():
        batch = ImportBatch.objects.create(
            audit_set=audit_set,
            filename=filename[:300],
            format=parsed.format,
            sha256=sha256,
            created_by=user if user and user.is_authenticated else None,
        )
        seen = set(
            Answer.objects.filter(audit_set=audit_set).values_list("content_hash", flat=True)
        )
        questions = {q.external_id: q for q in Question.objects.filter(audit_set=audit_set)}
        raters: dict[str, Rater] = {}
        totals = {"answers": 0, "skipped": 0, "claims": 0, "uncited": 0, "unknown": 0, "lost": 0}

        fresh: list[tuple[AnswerRecord, str]] = []
        for record in parsed.records:
            digest = answer_content_hash(record)
            if digest in seen:
                totals["skipped"] += 1
                continue
            seen.add(digest)
            fresh.append((record, digest))

        for chunk_start in range(0, len(fresh), CHUNK):
            chunk = fresh[chunk_start : chunk_start + CHUNK]
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

    return ImportSummary(
        format=parsed.format,
        answers=totals["answers"],
        skipped=totals["skipped"],
        claims=totals["claims"],
        uncited=totals["uncited"],
        cited_unknown=totals["unknown"],
        not_located=totals["lost"],
        batch_id=batch_id,
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
                audit_set=audit_set, external_id=record.question_id[:200], text=record.question
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
            external_id=record.answer_id[:200],
            system=record.system[:200],
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
    claim_plans: list[_PlannedClaim] = []
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

    claims_by_answer: dict[int, list[tuple[Claim, _PlannedClaim]]] = {}
    for claim, planned in zip(claim_objects, claim_plans, strict=True):
        claims_by_answer.setdefault(claim.answer_id, []).append((claim, planned))

    checks = []
    for answer in answers:
        pairs = claims_by_answer.get(answer.pk, [])
        checks.extend(
            _checks_for_answer(
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
                rater, _ = Rater.objects.get_or_create(name=label.rater[:200])
                raters[label.rater] = rater
            labels.append(
                RaterLabel(
                    rater=rater,
                    claim=answer_claims[label.claim_index],
                    judgment=label.judgment or "",
                    raw_label=label.raw_label[:100],
                    verification_worthy=label.verification_worthy,
                    note=label.note,
                    import_batch=batch,
                )
            )
    RaterLabel.objects.bulk_create(labels)
    totals["answers"] += len(answers)


def _checks_for_answer(
    passages: list[Passage], claims: Iterable[tuple[Claim, Sequence[int], bool]]
) -> list[ClaimCheck]:
    """Run the matcher over an answer's claims, preparing each passage once."""
    prepared = [matching.prepare_passage(p.text) for p in passages]
    checks = []
    for claim, citations, has_unknown in claims:
        cited_positions = list(citations)
        uncited_positions = [p.position for p in passages if p.position not in citations]
        result = matching.check_claim(
            claim.text,
            [prepared[n - 1] for n in cited_positions],
            [prepared[n - 1] for n in uncited_positions],
            has_unknown_citation=has_unknown,
        )
        checks.append(
            ClaimCheck(
                claim=claim,
                matcher_version=matching.MATCHER_VERSION,
                label=result.label,
                best_score=result.best_score,
                highlights=[_highlight_json(h, cited_positions) for h in result.highlights],
                numbers=[{"token": t, "grounded": g} for t, g in result.numbers],
                wrong_citation=(
                    _highlight_json(result.wrong_citation, uncited_positions)
                    if result.wrong_citation
                    else None
                ),
            )
        )
    return checks


def _highlight_json(highlight: matching.Highlight, positions: Sequence[int]) -> dict:
    return {
        "passage": positions[highlight.passage],
        "start": highlight.start,
        "end": highlight.end,
        "score": round(highlight.score, 4),
    }


def claim_checks_recompute(
    *, audit_set: AuditSet, progress: Callable[[int], None] | None = None
) -> int:
    """Recompute the matcher's checks for every claim of a set; safe to run again."""
    answers = Answer.objects.filter(audit_set=audit_set).order_by("pk")
    count = 0
    for answer in answers.iterator(chunk_size=200):
        passages = list(answer.passages.order_by("position"))
        claims = list(answer.claims.prefetch_related("citations").order_by("order", "pk"))
        rows = [
            (c, tuple(p.position for p in c.citations.all()), bool(c.cited_unknown)) for c in claims
        ]
        with transaction.atomic():
            ClaimCheck.objects.filter(claim__answer=answer).delete()
            ClaimCheck.objects.bulk_create(_checks_for_answer(passages, rows))
        count += len(claims)
        if progress:
            progress(1)
    return count
