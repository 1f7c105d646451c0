"""Restoring a citeaudit export into a set: answers, claims (atomic ones under their
parents), machine checks, assignments, sheets with their history, rater labels and gold
come back as they were, with their timestamps, without splitting or matching again."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from audit import judgments
from audit.formats import AnswerRecord, labelled
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

# Rows per UPDATE when timestamps are put back (the import's answer chunk size).
UPDATE_BATCH = 500


def people(audit_set: AuditSet, records: list[AnswerRecord]) -> dict[str, int]:
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


def restore_chunk(
    chunk: list[tuple[AnswerRecord, str]],
    *,
    audit_set: AuditSet,
    batch: ImportBatch,
    filename: str,
    questions: dict[str, int],
    raters: dict[str, Rater],
    users: dict[str, int],
    totals: dict[str, int],
) -> None:
    """Write exported answers back as they were, without splitting or matching again."""
    exported = [record.labelled for record, _ in chunk]
    new_questions: dict[str, Question] = {}
    for answer in exported:
        if answer.question_id not in questions and answer.question_id not in new_questions:
            new_questions[answer.question_id] = Question(
                audit_set=audit_set, external_id=answer.question_id, text=answer.question
            )
    Question.objects.bulk_create(new_questions.values())
    questions.update((key, question.pk) for key, question in new_questions.items())

    answers = [
        Answer(
            audit_set=audit_set,
            question_id=questions[answer.question_id],
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
                    answers_question=c.answers_question,
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


def _judged_fields(
    claim: Claim, record: labelled.Judged, passages: dict[tuple[int, int], Passage]
) -> dict:
    """A restored sheet's or gold record's judgment fields, its passage found by position."""
    fields = {name: getattr(record, name) for name in judgments.FIELDS}
    wrong = record.wrong_citation_passage
    fields["wrong_citation_passage"] = passages[claim.answer_id, wrong] if wrong else None
    return fields


def _restored_sheet(
    claim: Claim,
    sheet: labelled.Sheet,
    users: dict[str, int],
    passages: dict[tuple[int, int], Passage],
) -> AuditSheet:
    return AuditSheet(
        claim=claim,
        reviewer_id=users[sheet.reviewer],
        answer_statement=sheet.answer_statement,
        cited_urls=sheet.cited_urls,
        **_judged_fields(claim, sheet, passages),
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
    return Adjudication(
        claim=claim,
        **_judged_fields(claim, gold, passages),
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
    model.objects.bulk_update(objects, sorted(fields), batch_size=UPDATE_BATCH)
