"""Suggestions pushed by a model outside the app, through the API or an uploaded file:
checked against the set's claims and passages, stored all or nothing, per source."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import batched
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models.functions import Length

from audit.formats.reading import check_size
from audit.formats.records import FormatError
from audit.formats.suggestions import SuggestionRecord, parse_records, parse_suggestions
from audit.models import (
    Answer,
    AuditSet,
    AuditSheet,
    Claim,
    Job,
    Passage,
    Suggestion,
    SuggestionSource,
)
from audit.roles import leads
from audit.services.jobs import job_suggestions_create
from audit.services.suggestion_settings import source_gone
from audit.suggestions import SOURCE, SourceKey

# Suggestions written per query, and between two progress reports of a job.
_BATCH = 1000
MAX_NAME = 100  # SuggestionSource.name and .version
_CLAIM_NAME = re.compile(
    r"^(?P<answer>.*) claim (?P<first>[0-9]{1,9})(?:\.(?P<second>[0-9]{1,9}))?$"
)
BODY = "request body"


@dataclass(frozen=True)
class SuggestionPushSummary:
    source: str  # the source's key, "source:<id>"
    name: str
    version: str
    created: int
    replaced: int  # the source's earlier suggestion on the same claim, overwritten


def _check_lead(user, audit_set: AuditSet) -> None:
    if not leads(user, audit_set):
        raise PermissionDenied("Only a lead of the set can push suggestions.")


def _check_source_name(name: str, version: str, filename: str) -> tuple[str, str]:
    for field, value in (("name", name), ("version", version)):
        if not isinstance(value, str) or not value.strip():
            raise FormatError(filename, "", field, "required: name the source and its version")
        if len(value.strip()) > MAX_NAME or "\x00" in value:
            raise FormatError(filename, "", field, f"at most {MAX_NAME} characters of text")
    return name.strip(), version.strip()


def suggestions_push(
    *,
    audit_set: AuditSet,
    user,
    name: str,
    version: str,
    records: Any,
    description: str = "",
    as_job: bool | None = None,
) -> SuggestionPushSummary | Job:
    """A model's suggestions as an API body's list of records (the file format's objects):
    more than WEB_DIRECT_MAX_SUGGESTIONS of them, or any with `as_job`, go to a job (the
    job), the rest are stored now (a summary). FormatError names the record
    (`suggestions[i]`) and field of the first refused one; nothing is stored then. Only a
    lead of the set may push."""
    _check_lead(user, audit_set)
    name, version = _check_source_name(name, version, BODY)
    parsed = parse_records(records, BODY)
    if as_job or (as_job is None and len(parsed) > settings.WEB_DIRECT_MAX_SUGGESTIONS):
        body = json.dumps([r.as_json() for r in parsed], ensure_ascii=False).encode()
        return job_suggestions_create(
            audit_set=audit_set,
            user=user,
            name=name,
            version=version,
            description=description,
            body=body,
        )
    return suggestions_store(
        audit_set=audit_set,
        user=user,
        name=name,
        version=version,
        description=description,
        records=parsed,
        filename=BODY,
    )


def suggestions_upload(
    *, audit_set: AuditSet, user, name: str, version: str, upload, description: str = ""
) -> SuggestionPushSummary | Job:
    """A model's suggestions as an uploaded JSONL file, for the upload page and the API: a
    file over WEB_DIRECT_MAX_VERDICT_BYTES goes to a job, a smaller one is stored now.
    FormatError names file, line and field; nothing is stored then."""
    _check_lead(user, audit_set)
    filename = upload.name or "suggestions.jsonl"
    name, version = _check_source_name(name, version, filename)
    check_size(upload.size, filename, settings.IMPORT_MAX_WHOLE_BYTES)
    if upload.size > settings.WEB_DIRECT_MAX_VERDICT_BYTES:
        return job_suggestions_create(
            audit_set=audit_set,
            user=user,
            name=name,
            version=version,
            description=description,
            upload=upload,
        )
    records = parse_suggestions(
        upload.read(settings.IMPORT_MAX_WHOLE_BYTES + 1),
        filename,
        max_bytes=settings.IMPORT_MAX_WHOLE_BYTES,
    )
    return suggestions_store(
        audit_set=audit_set,
        user=user,
        name=name,
        version=version,
        description=description,
        records=records,
        filename=filename,
    )


def suggestions_store(
    *,
    audit_set: AuditSet,
    user,
    name: str,
    version: str,
    description: str,
    records: Sequence[SuggestionRecord],
    filename: str,
    progress: Callable[[int], None] | None = None,
) -> SuggestionPushSummary:
    """Check parsed records against the set and store them, all or nothing: the source
    (name, version) is made or found, and its suggestions for the pushed claims replace
    any it had, so pushing the same records again changes nothing. A claim outside the
    set, a passage its answer lacks, or an offset past the text raises FormatError naming
    the record and field. `progress`, when given, hears the count after each batch."""
    rows = _checked(audit_set, records, filename)
    with transaction.atomic():
        source, created = _source_locked(audit_set, user, name, version, description)
        if not created and description and description != source.description:
            source.description = description
            source.save(update_fields=["description", "updated_at"])
        claim_ids = [row.claim_id for row in rows]
        replaced = 0
        for ids in batched(claim_ids, _BATCH):
            replaced += Suggestion.objects.filter(source=source, claim_id__in=ids).delete()[0]
        for batch in batched(rows, _BATCH):
            for row in batch:
                row.source = source
            Suggestion.objects.bulk_create(batch)
            if progress:
                progress(len(batch))
    return SuggestionPushSummary(
        source=str(SourceKey(SOURCE, source.pk)),
        name=name,
        version=version,
        created=len(rows) - replaced,
        replaced=replaced,
    )


def _source_locked(
    audit_set: AuditSet, user, name: str, version: str, description: str
) -> tuple[SuggestionSource, bool]:
    """The source (name, version), made if new, under its row lock: two pushes of one
    source at once take turns here, so neither's rows meet the other's on the
    one-suggestion-per-claim constraint, and a delete at the same moment goes wholly
    before or after. Found, then deleted before its lock was had: made again."""
    for _ in range(2):
        source, created = SuggestionSource.objects.get_or_create(
            audit_set=audit_set,
            name=name,
            version=version,
            defaults={"description": description, "created_by": user},
        )
        locked = SuggestionSource.objects.select_for_update().filter(pk=source.pk).first()
        if locked is not None:
            return locked, created
    raise SuggestionSource.DoesNotExist("The source was deleted twice while being pushed to.")


class SourceInUse(Exception):
    """A source reviewers were shown is kept: the record of what they saw, and its figures."""


def source_delete(*, source: SuggestionSource, user) -> None:
    """Remove a pushed source and every suggestion it made: one pushed by mistake, before
    reviewers saw it. Only a lead of the set (PermissionDenied).

    Refused (SourceInUse) once any sheet of the set was shown its suggestions: which
    suggestions a reviewer had in front of them, and how often they were kept, are part of
    the labels' record. A set that pre-highlights with it goes back to the matcher, and
    that change is recorded like any other. Gone already (another lead's delete):
    SuggestionSource.DoesNotExist."""
    _check_lead(user, source.audit_set)
    key = str(SourceKey(SOURCE, source.pk))
    with transaction.atomic():
        # Under the set's row lock, as a settings change is: a lead choosing this source
        # at the same moment is applied before (and the set goes back to the matcher) or
        # after (and finds no such source).
        current = AuditSet.objects.select_for_update().get(pk=source.audit_set_id)
        # Then the source's: a push to it at the same moment stores all its rows before
        # (and they go with it) or after (and make it again).
        if SuggestionSource.objects.select_for_update().filter(pk=source.pk).first() is None:
            raise SuggestionSource.DoesNotExist("This source of suggestions was deleted.")
        shown = AuditSheet.objects.filter(
            claim__answer__audit_set=current, suggestion_source_shown=key
        )
        count = shown.count()
        if count:
            raise SourceInUse(
                f"Reviewers were shown {source.name} {source.version} on {count} "
                f"sheet{'s' if count != 1 else ''}: it is kept, so the record of what they "
                "saw and the figures measured on it stay. To stop showing it, choose another "
                "source in the set's suggestion settings."
            )
        source_gone(current=current, user=user, key=key)
        source.delete()


def _checked(
    audit_set: AuditSet, records: Sequence[SuggestionRecord], filename: str
) -> list[Suggestion]:
    """Suggestion rows (without their source) for records, each checked against its claim."""
    claims = _resolve(audit_set, records, filename)
    answer_ids = {claim.answer_id for claim in claims.values()}
    passage_length: dict[tuple[int, int], int] = {}
    positions: dict[int, list[int]] = defaultdict(list)
    for answer_id, position, length in _passage_lengths(answer_ids):
        passage_length[answer_id, position] = length
        positions[answer_id].append(position)
    rows = []
    for record in records:
        claim = claims[record.location]

        def error(field: str, message: str, record: SuggestionRecord = record) -> FormatError:
            return FormatError(filename, record.location, field, message)

        def passage(position: int, field: str, claim: Claim = claim) -> int:
            length = passage_length.get((claim.answer_id, position))
            if length is None:
                have = sorted(positions[claim.answer_id])
                listed = ", ".join(map(str, have)) if have else "none"
                raise error(
                    field, f"the claim's answer has no passage {position} (it has {listed})"
                )
            return length

        evidence = []
        for i, span in enumerate(record.evidence):
            length = passage(span.passage, f"evidence[{i}].passage")
            if span.end > length:
                raise error(
                    f"evidence[{i}].end",
                    f"end {span.end} is past passage {span.passage}'s text ({length} characters)",
                )
            evidence.append(
                {"passage": span.passage, "start": span.start, "end": span.end, "score": span.score}
            )
        unsupported = []
        for i, span in enumerate(record.unsupported):
            if span.end > len(claim.text):
                raise error(
                    f"unsupported[{i}].end",
                    f"end {span.end} is past the claim's text ({len(claim.text)} characters)",
                )
            unsupported.append(
                {
                    "start": span.start,
                    "end": span.end,
                    "text": claim.text[span.start : span.end],
                    "score": span.score,
                }
            )
        if record.wrong_citation_passage is not None:
            passage(record.wrong_citation_passage, "wrong_citation.passage")
        rows.append(
            Suggestion(
                claim_id=claim.pk,
                judgment=record.judgment,
                judgment_score=record.judgment_score,
                evidence=evidence,
                unsupported=unsupported,
                wrong_citation_passage=record.wrong_citation_passage,
                wrong_citation_score=record.wrong_citation_score,
            )
        )
    return rows


def _passage_lengths(answer_ids: set[int]):
    for ids in batched(sorted(answer_ids), _BATCH):
        yield from (
            Passage.objects.filter(answer_id__in=ids)
            .annotate(length=Length("text"))
            .values_list("answer_id", "position", "length")
        )


def _resolve(
    audit_set: AuditSet, records: Sequence[SuggestionRecord], filename: str
) -> dict[str, Claim]:
    """Record location → the set's claim it names (by id or by name); the first record
    naming none raises. A claim named twice, once by id and once by name, is refused."""
    fields = ("pk", "answer_id", "text", "order", "parent_order", "parent_id")
    by_id: dict[int, Claim] = {}
    wanted_ids = sorted({r.claim for r in records if isinstance(r.claim, int)})
    for ids in batched(wanted_ids, _BATCH):
        for claim in Claim.objects.filter(pk__in=ids, answer__audit_set=audit_set).only(*fields):
            by_id[claim.pk] = claim
    named: dict[str, tuple[str, int, int | None]] = {}
    for r in records:
        if isinstance(r.claim, str):
            match = _CLAIM_NAME.match(r.claim.strip())
            if match is None:
                raise FormatError(
                    filename,
                    r.location,
                    "claim",
                    "expected a claim id or a name such as 'refund-a1 claim 2' or "
                    "'refund-a1 claim 2.1'",
                )
            first, second = int(match["first"]), match["second"]
            named[r.location] = (match["answer"], first, int(second) if second else None)
    by_name: dict[tuple[int, int, int | None], Claim] = {}
    answers: dict[str, list[int]] = defaultdict(list)
    if named:
        external = sorted({answer for answer, _, _ in named.values()})
        for chunk in batched(external, _BATCH):
            # A replaced answer's id now names its replacement.
            for external_id, pk in Answer.objects.filter(
                audit_set=audit_set, external_id__in=chunk, replaced_at__isnull=True
            ).values_list("external_id", "pk"):
                answers[external_id].append(pk)
        answer_pks = sorted({pk for pks in answers.values() for pk in pks})
        for chunk in batched(answer_pks, _BATCH):
            for claim in Claim.objects.filter(answer_id__in=chunk).only(*fields):
                if claim.parent_id is None:
                    by_name[claim.answer_id, claim.order + 1, None] = claim
                elif claim.parent_order is not None:
                    by_name[claim.answer_id, claim.parent_order + 1, claim.order + 1] = claim
    resolved: dict[str, Claim] = {}
    seen: dict[int, str] = {}
    for r in records:

        def error(message: str, r: SuggestionRecord = r) -> FormatError:
            return FormatError(filename, r.location, "claim", message)

        if isinstance(r.claim, int):
            claim = by_id.get(r.claim)
            if claim is None:
                raise error(f"no claim {r.claim} in set {audit_set.name!r}")
        else:
            answer, first, second = named[r.location]
            found = answers.get(answer, [])
            if not found:
                raise error(f"no answer {answer!r} in set {audit_set.name!r}")
            if len(found) > 1:
                raise error(
                    f"{len(found)} answers in the set have id {answer!r}; name the claim by id"
                )
            claim = by_name.get((found[0], first, second))
            if claim is None:
                raise error(f"answer {answer!r} has no {r.claim.strip()[len(answer) + 1 :]}")
        if claim.pk in seen:
            raise error(f"a second suggestion for claim {claim.pk} ({seen[claim.pk]})")
        seen[claim.pk] = r.location
        resolved[r.location] = claim
    return resolved
