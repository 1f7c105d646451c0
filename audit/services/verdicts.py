"""Importing an automatic judge's verdicts on a set's claims, as the labels of a rater of
kind "automatic", so the dashboard can hold the judge against adjudicated gold."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import batched

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction

from audit.formats.reading import check_size
from audit.formats.records import Budget, FormatError
from audit.formats.verdicts import Verdict, parse_verdicts
from audit.models import Answer, AuditSet, Claim, ImportBatch, Job, Rater, RaterLabel
from audit.roles import leads
from audit.services.jobs import job_verdicts_create

# Verdicts written per query, and between two progress reports of a job.
_BATCH = 1000


@dataclass(frozen=True)
class VerdictImportSummary:
    judges: tuple[str, ...]
    created: int
    replaced: int  # a judge's earlier verdict on the same claim, overwritten


def fold_whitespace(text: str) -> str:
    return " ".join(text.split())


def verdicts_push(
    *, audit_set: AuditSet, upload, user, as_job: bool = False, advice: str = ""
) -> VerdictImportSummary | Job:
    """Machine verdicts from an uploaded file, for the upload page and the API alike: a
    small file is stored at once (a summary), a big one, or any one asked `as_job`, goes to
    a job with no bound on its verdicts (the job). FormatError names the file, line and
    field of a refused one (TooBig first for a file over the upload limit); nothing is
    stored then. Only a lead of the set may push."""
    if not leads(user, audit_set):
        raise PermissionDenied("Only a lead of the set can import machine verdicts.")
    name = upload.name or "verdicts"
    check_size(upload.size, name, settings.IMPORT_MAX_WHOLE_BYTES)
    if as_job or upload.size > settings.WEB_DIRECT_MAX_VERDICT_BYTES:
        return job_verdicts_create(upload=upload, audit_set=audit_set, user=user)
    return verdicts_import(
        audit_set=audit_set,
        data=upload.read(settings.IMPORT_MAX_WHOLE_BYTES + 1),
        filename=name,
        max_bytes=settings.IMPORT_MAX_WHOLE_BYTES,
        # One request stores a bounded number; a job or the command has no bound.
        budget=Budget(
            name, max_answers=settings.WEB_IMPORT_MAX_VERDICTS, unit="verdicts", advice=advice
        ),
    )


def verdicts_import(
    *,
    audit_set: AuditSet,
    data: bytes,
    filename: str,
    max_bytes: int,
    budget: Budget | None = None,
) -> VerdictImportSummary:
    """Parse a verdict file and store every verdict, or nothing.

    A claim is named by its answer's id and either its 0-based index among the answer's
    top-level claims or its text (exact after folding whitespace). An unknown answer or
    claim, or a judge whose name is taken by imported human labels, raises FormatError
    naming the file, line and field.
    """
    verdicts = parse_verdicts(data, filename, max_bytes=max_bytes, budget=budget)
    return verdicts_store(
        audit_set=audit_set,
        verdicts=verdicts,
        filename=filename,
        sha256=hashlib.sha256(data).hexdigest(),
    )


def verdicts_store(
    *,
    audit_set: AuditSet,
    verdicts: tuple[Verdict, ...],
    filename: str,
    sha256: str,
    progress: Callable[[int], None] | None = None,
) -> VerdictImportSummary:
    """Store parsed verdicts, all or nothing (see verdicts_import); progress, when given, is
    called with the number of verdicts after each batch written."""
    claim_of = _resolve(audit_set, verdicts, filename)
    with transaction.atomic():
        raters: dict[str, Rater] = {}
        for verdict in verdicts:
            if verdict.judge in raters:
                continue
            rater, _ = Rater.objects.get_or_create(
                name=verdict.judge, defaults={"kind": Rater.Kind.AUTOMATIC}
            )
            if rater.kind != Rater.Kind.AUTOMATIC:
                raise FormatError(
                    filename,
                    verdict.location,
                    "judge",
                    f"{verdict.judge!r} names imported human labels, not an automatic judge",
                )
            raters[verdict.judge] = rater
        batch = ImportBatch.objects.create(
            audit_set=audit_set,
            filename=filename[:300],
            format="verdicts",
            sha256=sha256,
        )
        existing = set(
            RaterLabel.objects.filter(
                rater__in=raters.values(), claim_id__in=set(claim_of.values())
            ).values_list("rater_id", "claim_id")
        )
        labels = [
            RaterLabel(
                rater=raters[v.judge],
                claim_id=claim_of[v.location],
                judgment=v.judgment,
                raw_label=v.judgment,
                evidence=list(v.evidence),
                rationale=v.rationale,
                import_batch=batch,
            )
            for v in verdicts
        ]
        replaced = sum((label.rater.pk, label.claim_id) in existing for label in labels)
        for batch_labels in batched(labels, _BATCH):
            RaterLabel.objects.bulk_create(
                batch_labels,
                update_conflicts=True,
                unique_fields=["rater", "claim"],
                update_fields=["judgment", "raw_label", "evidence", "rationale", "import_batch"],
            )
            if progress:
                progress(len(batch_labels))
    return VerdictImportSummary(
        judges=tuple(raters), created=len(labels) - replaced, replaced=replaced
    )


def _resolve(audit_set: AuditSet, verdicts: tuple[Verdict, ...], filename: str) -> dict[str, int]:
    """Verdict location → claim pk; the first verdict naming nothing known raises."""
    wanted = {v.answer_id for v in verdicts}
    answers: dict[str, list[int]] = defaultdict(list)
    # A replaced answer's id now names its replacement.
    for external_id, pk in Answer.objects.filter(
        audit_set=audit_set, external_id__in=wanted, replaced_at__isnull=True
    ).values_list("external_id", "pk"):
        answers[external_id].append(pk)
    by_index: dict[tuple[int, int], int] = {}
    by_text: dict[tuple[int, str], list[int]] = defaultdict(list)
    counts: dict[int, int] = defaultdict(int)
    answer_ids = [pk for pks in answers.values() for pk in pks]
    for pk, answer_id, order, parent_id, text in Claim.objects.filter(
        answer_id__in=answer_ids
    ).values_list("pk", "answer_id", "order", "parent_id", "text"):
        if parent_id is None:
            by_index[answer_id, order] = pk
            counts[answer_id] += 1
        by_text[answer_id, fold_whitespace(text)].append(pk)

    resolved: dict[str, int] = {}
    seen: dict[tuple[str, int], str] = {}
    for v in verdicts:

        def error(field: str, message: str, v: Verdict = v) -> FormatError:
            return FormatError(filename, v.location, field, message)

        found = answers.get(v.answer_id, [])
        if not found:
            raise error("answer_id", f"no answer {v.answer_id!r} in set {audit_set.name!r}")
        if len(found) > 1:
            raise error("answer_id", f"{len(found)} answers in the set have id {v.answer_id!r}")
        answer_id = found[0]
        if v.claim_index is not None:
            claim = by_index.get((answer_id, v.claim_index))
            if claim is None:
                n = counts[answer_id]
                raise error(
                    "claim_index",
                    f"answer {v.answer_id!r} has {n} claim{'s' if n != 1 else ''}, "
                    f"numbered from 0; there is no claim {v.claim_index}",
                )
            named = by_text[answer_id, fold_whitespace(v.claim_text)]
            if v.claim_text.strip() and claim not in named:
                raise error(
                    "claim_text", f"does not match claim {v.claim_index} of {v.answer_id!r}"
                )
        else:
            matches = by_text.get((answer_id, fold_whitespace(v.claim_text)), [])
            if not matches:
                raise error("claim_text", f"no claim of answer {v.answer_id!r} has this text")
            if len(matches) > 1:
                raise error(
                    "claim_text",
                    f"{len(matches)} claims of answer {v.answer_id!r} have this text; "
                    "name the claim by claim_index",
                )
            claim = matches[0]
        if (v.judge, claim) in seen:
            raise error(
                "", f"a second verdict by {v.judge!r} for the same claim ({seen[v.judge, claim]})"
            )
        seen[v.judge, claim] = v.location
        resolved[v.location] = claim
    return resolved
