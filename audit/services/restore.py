"""Restoring a citeaudit export into a set: answers, claims (atomic ones under their
parents), machine checks, assignments, sheets with their history, rater labels and gold
come back as they were, with their timestamps, without splitting or matching again."""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model

from audit import judgments
from audit.formats import AnswerRecord, LabelRecord, labelled
from audit.import_plan import AnswerRows, RestoredClaim
from audit.models import Adjudication, Assignment, AuditSet, AuditSheet, ImportBatch, Rater
from audit.services.answer_writer import answers_write

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
    raters: dict[str, Rater],
    users: dict[str, int],
    totals: dict[str, int],
) -> None:
    """Write exported answers back as they were, without splitting or matching again: what
    an import writes too by answers_write, then assignments, sheets and gold with their
    history."""
    exported = [record.labelled for record, _ in chunk]
    written = answers_write(
        answers=[
            (_exported_rows(record, users), record.labelled.content_hash) for record, _ in chunk
        ],
        audit_set_id=audit_set.pk,
        batch=batch,
        raters=raters,
        totals=totals,
    )

    assignments = []
    sheets: dict[tuple[int, str], AuditSheet] = {}
    golds: list[tuple[Adjudication, labelled.Gold]] = []
    for answer, claim_ids, passage_ids in zip(
        exported, written.claim_ids, written.passage_ids, strict=True
    ):
        for c, claim_id in zip(answer.claims, claim_ids, strict=True):
            assignments += [Assignment(claim_id=claim_id, reviewer_id=users[n]) for n in c.assigned]
            for sheet in c.sheets:
                sheets[claim_id, sheet.reviewer] = _restored_sheet(
                    claim_id, sheet, users, passage_ids
                )
            if c.gold is not None:
                golds.append((_restored_gold(claim_id, c.gold, users, passage_ids), c.gold))
    Assignment.objects.bulk_create(assignments)
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
    totals["sheets"] += len(sheets)
    totals["gold"] += len(golds)


def _exported_rows(record: AnswerRecord, users: dict[str, int]) -> AnswerRows:
    """An exported answer in the rows answers_write takes (import_plan.AnswerRows)."""
    answer = record.labelled
    claims, restored, labels = [], [], []
    for index, c in enumerate(answer.claims):
        claims.append(
            (
                c.order,
                c.text,
                c.start,
                c.end,
                c.location,
                json.dumps(list(c.cited_unknown)),
                c.is_uncited,
                c.citations,
                c.cited_unknown,
                *_check_values(c.check),
            )
        )
        restored.append(
            RestoredClaim(
                parent_order=c.parent_order,
                answers_question=c.answers_question,
                split_by_id=users[c.split_by] if c.split_by else None,
                split_at=c.split_at,
                check_computed_at=c.check.computed_at if c.check else None,
            )
        )
        labels += [
            LabelRecord(
                rater=label.rater,
                claim_index=index,
                judgment=label.judgment,
                raw_label=label.raw_label,
                verification_worthy=label.verification_worthy,
                note=label.note,
                kind=label.kind,
            )
            for label in c.rater_labels
        ]
    return AnswerRows(
        location=record.location,
        question_id=answer.question_id,
        question=answer.question,
        answer_id=answer.answer_id,
        system=answer.system,
        labels=tuple(labels),
        given_claims=len(claims),
        answer=answer.text,
        metadata=json.dumps(answer.metadata),
        has_topics="topics" in answer.metadata,
        is_partial=answer.is_partial,
        passages=tuple((p.title, p.url, p.text, p.is_cited) for p in answer.passages),
        claims=tuple(claims),
        restored=tuple(restored),
    )


def _check_values(check: labelled.MachineCheck | None) -> tuple:
    """A machine check's values in import_plan.ClaimRow, from matcher_version on."""
    if check is None:
        return (None, None, None, None, None, None, 0)
    return (
        check.matcher_version,
        check.label,
        check.best_score,
        json.dumps(check.highlights),
        json.dumps(check.numbers),
        None if check.wrong_citation is None else json.dumps(check.wrong_citation),
        # selectors.release.ungrounded_numbers of the stored numbers.
        sum(1 for n in check.numbers if not n.get("grounded")),
    )


def _judged_fields(record: labelled.Judged, passage_ids: list[int]) -> dict:
    """A restored sheet's or gold record's judgment fields, its passage found by position
    among its answer's passage ids."""
    fields = {name: getattr(record, name) for name in judgments.FIELDS}
    wrong = fields.pop("wrong_citation_passage")
    fields["wrong_citation_passage_id"] = passage_ids[wrong - 1] if wrong else None
    return fields


def _restored_sheet(
    claim_id: int, sheet: labelled.Sheet, users: dict[str, int], passage_ids: list[int]
) -> AuditSheet:
    return AuditSheet(
        claim_id=claim_id,
        reviewer_id=users[sheet.reviewer],
        answer_statement=sheet.answer_statement,
        cited_urls=sheet.cited_urls,
        **_judged_fields(sheet, passage_ids),
        notes=sheet.notes,
        status=sheet.status,
        active_seconds=sheet.active_seconds,
        version=sheet.version,
        created_at=sheet.created_at,
        updated_at=sheet.updated_at,
        submitted_at=sheet.submitted_at,
    )


def _restored_gold(
    claim_id: int, gold: labelled.Gold, users: dict[str, int], passage_ids: list[int]
) -> Adjudication:
    return Adjudication(
        claim_id=claim_id,
        **_judged_fields(gold, passage_ids),
        source=gold.source,
        reason=gold.reason,
        note=gold.note,
        lead_id=users[gold.lead] if gold.lead else None,
        version=gold.version,
        created_at=gold.created_at,
        updated_at=gold.updated_at,
    )


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
