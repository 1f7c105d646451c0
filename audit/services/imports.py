"""Importing answer sets and storing the matcher's checks.

Views and management commands call these; the parsing and matching themselves live in the
pure modules (`formats`, `claims`, `matching`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from audit import claims as claim_parsing
from audit import matching
from audit.formats import AnswerRecord, FormatError, ParsedFile, labelled
from audit.formats.citeaudit import FORMAT as CITEAUDIT
from audit.formats.records import Budget
from audit.models import (
    Adjudication,
    Answer,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    ImportBatch,
    Passage,
    Question,
    Rater,
    RaterLabel,
)
from audit.services.derived import claims_changed
from audit.services.locks import claims_lock

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

        users = _people(audit_set, [record for record, _ in fresh])
        for chunk_start in range(0, len(fresh), CHUNK):
            chunk = fresh[chunk_start : chunk_start + CHUNK]
            if parsed.format == CITEAUDIT:
                _restore_chunk(
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


def _people(audit_set: AuditSet, records: list[AnswerRecord]) -> dict[str, int]:
    """The user ids of everyone an export names, creating the missing ones inactive."""
    reviewers: set[str] = set()
    others: set[str] = set()
    for record in records:
        for claim in record.labelled.claims if record.labelled else ():
            reviewers.update(claim.assigned)
            reviewers.update(sheet.reviewer for sheet in claim.sheets)
            others.update(name for name in (claim.split_by, claim.gold and claim.gold.lead) if name)
    names = reviewers | others
    if not names:
        return {}
    user_model = get_user_model()
    field = user_model.USERNAME_FIELD
    ids = dict(user_model.objects.filter(**{f"{field}__in": names}).values_list(field, "pk"))
    missing = []
    for name in sorted(names - ids.keys()):
        user = user_model(**{field: name}, is_active=False)
        user.set_unusable_password()
        missing.append(user)
    user_model.objects.bulk_create(missing)
    ids |= dict(
        user_model.objects.filter(
            **{f"{field}__in": [u.get_username() for u in missing]}
        ).values_list(field, "pk")
    )
    audit_set.reviewers.add(*(ids[name] for name in reviewers))
    return ids


def _restore_chunk(
    chunk: list[tuple[AnswerRecord, str]],
    *,
    audit_set: AuditSet,
    batch: ImportBatch,
    filename: str,
    questions: dict[str, Question],
    raters: dict[str, Rater],
    users: dict[str, int],
    totals: dict[str, int],
) -> None:
    """Write exported answers back as they were, without splitting or matching again."""
    exported = [record.labelled for record, _ in chunk]
    new_questions = []
    for answer in exported:
        if answer.question_id not in questions:
            question = Question(
                audit_set=audit_set, external_id=answer.question_id, text=answer.question
            )
            questions[answer.question_id] = question
            new_questions.append(question)
    Question.objects.bulk_create(new_questions)

    answers = [
        Answer(
            audit_set=audit_set,
            question=questions[answer.question_id],
            import_batch=batch,
            external_id=answer.answer_id,
            system=answer.system,
            text=answer.text,
            content_hash=answer.content_hash,
            is_partial=answer.is_partial,
            metadata=answer.metadata,
        )
        for answer in exported
    ]
    Answer.objects.bulk_create(answers)

    passages: dict[tuple[int, int], Passage] = {}
    for answer, row in zip(exported, answers, strict=True):
        for p in answer.passages:
            passages[row.pk, p.position] = Passage(
                answer=row,
                position=p.position,
                title=p.title,
                url=p.url,
                text=p.text,
                is_cited=p.is_cited,
            )
    Passage.objects.bulk_create(passages.values())

    # Top-level claims first: atomic claims point at them.
    claims: dict[tuple[int, int | None, int], Claim] = {}
    for atomic in (False, True):
        level = []
        for answer, row in zip(exported, answers, strict=True):
            for c in answer.claims:
                if (c.parent_order is not None) != atomic:
                    continue
                claim = Claim(
                    answer=row,
                    parent=claims[row.pk, None, c.parent_order] if atomic else None,
                    parent_order=c.parent_order,
                    order=c.order,
                    text=c.text,
                    start=c.start,
                    end=c.end,
                    location=c.location,
                    cited_unknown=list(c.cited_unknown),
                    is_uncited=c.is_uncited,
                    split_by_id=users[c.split_by] if c.split_by else None,
                    split_at=c.split_at,
                )
                claims[row.pk, c.parent_order, c.order] = claim
                level.append(claim)
        Claim.objects.bulk_create(level)

    through = Claim.citations.through
    links, checks, assignments, labels = [], [], [], []
    sheets: dict[tuple[int, str], AuditSheet] = {}
    golds: list[tuple[Adjudication, labelled.Gold]] = []
    for answer, row in zip(exported, answers, strict=True):
        for c in answer.claims:
            claim = claims[row.pk, c.parent_order, c.order]
            links += [through(claim=claim, passage=passages[row.pk, n]) for n in c.citations]
            if c.check is not None:
                checks.append(_restored_check(claim, c.check))
            assignments += [Assignment(claim=claim, reviewer_id=users[n]) for n in c.assigned]
            for sheet in c.sheets:
                sheets[claim.pk, sheet.reviewer] = _restored_sheet(claim, sheet, users, passages)
            if c.gold is not None:
                golds.append((_restored_gold(claim, c.gold, users, passages), c.gold))
            for label in c.rater_labels:
                labels.append(
                    RaterLabel(
                        rater=_rater(raters, label.rater, label.kind),
                        claim=claim,
                        judgment=label.judgment,
                        raw_label=label.raw_label,
                        verification_worthy=label.verification_worthy,
                        note=label.note,
                        import_batch=batch,
                    )
                )
            totals["claims"] += 1
            totals["uncited"] += c.is_uncited
            totals["unknown"] += len(c.cited_unknown)
            totals["lost"] += c.location == Claim.Location.NOT_LOCATED
    through.objects.bulk_create(links)
    Assignment.objects.bulk_create(assignments)
    RaterLabel.objects.bulk_create(labels)
    _create_keeping_times(ClaimCheck, checks, {"computed_at"})
    _create_keeping_times(AuditSheet, list(sheets.values()), {"created_at", "updated_at"})
    for adjudication, gold in golds:
        if gold.from_sheet is not None:
            adjudication.from_sheet = sheets[adjudication.claim_id, gold.from_sheet]
    _create_keeping_times(Adjudication, [a for a, _ in golds], {"created_at", "updated_at"})
    Adjudication.sheets.through.objects.bulk_create(
        Adjudication.sheets.through(adjudication=a, auditsheet=sheets[a.claim_id, name])
        for a, gold in golds
        for name in gold.sheets
    )
    reason = f"imported from {filename}"[:100]
    AuditSheet.history.bulk_history_create(list(sheets.values()), default_change_reason=reason)
    Adjudication.history.bulk_history_create([a for a, _ in golds], default_change_reason=reason)
    totals["answers"] += len(answers)
    totals["sheets"] += len(sheets)
    totals["gold"] += len(golds)


def _restored_check(claim: Claim, check: labelled.MachineCheck) -> ClaimCheck:
    return ClaimCheck(
        claim=claim,
        matcher_version=check.matcher_version,
        label=check.label,
        best_score=check.best_score,
        highlights=check.highlights,
        numbers=check.numbers,
        wrong_citation=check.wrong_citation,
        computed_at=check.computed_at,
    )


def _restored_sheet(
    claim: Claim,
    sheet: labelled.Sheet,
    users: dict[str, int],
    passages: dict[tuple[int, int], Passage],
) -> AuditSheet:
    wrong = sheet.wrong_citation_passage
    return AuditSheet(
        claim=claim,
        reviewer_id=users[sheet.reviewer],
        answer_statement=sheet.answer_statement,
        cited_urls=sheet.cited_urls,
        judgment=sheet.judgment,
        wrong_citation_passage=passages[claim.answer_id, wrong] if wrong else None,
        evidence=sheet.evidence,
        unsupported_assertions=sheet.unsupported_assertions,
        verification_worthy=sheet.verification_worthy,
        notes=sheet.notes,
        status=sheet.status,
        active_seconds=sheet.active_seconds,
        version=sheet.version,
        created_at=sheet.created_at,
        updated_at=sheet.updated_at,
        submitted_at=sheet.submitted_at,
    )


def _restored_gold(
    claim: Claim,
    gold: labelled.Gold,
    users: dict[str, int],
    passages: dict[tuple[int, int], Passage],
) -> Adjudication:
    wrong = gold.wrong_citation_passage
    return Adjudication(
        claim=claim,
        judgment=gold.judgment,
        wrong_citation_passage=passages[claim.answer_id, wrong] if wrong else None,
        evidence=gold.evidence,
        unsupported_assertions=gold.unsupported_assertions,
        verification_worthy=gold.verification_worthy,
        source=gold.source,
        reason=gold.reason,
        note=gold.note,
        lead_id=users[gold.lead] if gold.lead else None,
        version=gold.version,
        created_at=gold.created_at,
        updated_at=gold.updated_at,
    )


def _rater(raters: dict[str, Rater], name: str, kind: str) -> Rater:
    rater = raters.get(name)
    if rater is None:
        rater, _ = Rater.objects.get_or_create(name=name, defaults={"kind": kind})
        raters[name] = rater
    return rater


def _create_keeping_times(model: type, objects: list, fields: set[str]) -> None:
    """bulk_create, then put back the timestamps that auto_now(_add) overwrote on the way."""
    if not objects:
        return
    kept = [{name: getattr(obj, name) for name in fields} for obj in objects]
    model.objects.bulk_create(objects)
    for obj, times in zip(objects, kept, strict=True):
        for name, value in times.items():
            # An export without the time keeps the import's.
            if value is not None:
                setattr(obj, name, value)
    model.objects.bulk_update(objects, sorted(fields), batch_size=CHUNK)


def answer_claim_checks(
    passages: list[Passage], claims: Iterable[tuple[Claim, Sequence[int], bool]]
) -> list[ClaimCheck]:
    """Unsaved ClaimChecks for an answer's claims, each passage prepared once.

    Shared by import, rematch and claim splitting, so every path stores the same checks.
    """
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
            claims_lock(claim_ids=[c.pk for c in claims])
            ClaimCheck.objects.filter(claim__answer=answer).delete()
            ClaimCheck.objects.bulk_create(answer_claim_checks(passages, rows))
            # The highlights shown changed: so did what reviewers kept of them.
            claims_changed(audit_set_id=audit_set.pk, claim_ids=[c.pk for c in claims])
        count += len(claims)
        if progress:
            progress(1)
    return count
