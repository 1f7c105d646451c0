"""Importing answer sets: parsed records become questions, answers, passages, claims with
their citations and machine checks, and rater labels, all or nothing.

A citeaudit export is written back as it was by `restore`; the matcher's checks are built
by `checks`. Views and management commands call these; the parsing and matching themselves
live in the pure modules (`formats`, `claims`, `matching`).
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from audit.formats import AnswerRecord, FormatError, ParsedFile
from audit.formats.citeaudit import FORMAT as CITEAUDIT
from audit.formats.detect import StreamedAnswers
from audit.import_plan import (
    AnswerRows,
    answer_content_hash,
    answer_rows,
    matcher_pool,
    plan_answers,
    plan_answers_in_worker,
    read_lines_in_worker,
)
from audit.models import Answer, AuditSet, Claim, ImportBatch, Rater
from audit.runs import RunChanges, changes_of, retired_of, run_key, run_refusal
from audit.services import bulk
from audit.services.answer_writer import answers_write
from audit.services.derived import NewClaims, claims_changed, decisions_watched
from audit.services.locks import set_imports_lock
from audit.services.planner import planner_statistics_refresh
from audit.services.restore import people, restore_chunk
from audit.stored_checks import PassageCache

# Answers are written in chunks so memory stays flat on large files.
CHUNK = 500

# What an import counts as it goes, for its summary.
_COUNTED = ("answers", "skipped", "claims", "uncited", "unknown", "lost", "sheets", "gold")


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
    # A push of a named run: its system and run, and what it changed (RunChanges.as_dict).
    system: str = ""
    run: str = ""
    changes: dict | None = None


def answers_import(
    *,
    audit_set: AuditSet,
    parsed: ParsedFile,
    filename: str,
    sha256: str,
    user: AbstractBaseUser | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int = 0,
    system: str = "",
    run: str = "",
) -> ImportSummary:
    """Import every answer of a parsed file into the set, all or nothing.

    Answers already in the set (same content hash) are skipped. Raises FormatError (and
    writes nothing) when a label points at a claim the answer does not have.
    `parsed.records` may be a stream (audit.formats.parse_path): its answers are read,
    matched and written a chunk at a time, and a parse error part-way rolls back what was
    written before it.

    With `workers` > 0, claims are located or split and matched in that many forked
    processes while this one writes (for the command line; a web worker keeps it at 0,
    since forking a threaded server is unsafe).

    A citeaudit export is restored as it was: claims keep their text, offsets and order,
    and their machine checks, assignments, sheets, rater labels and gold come back with
    their timestamps. Reviewers and leads are matched by username; missing ones are created
    inactive, without a password or group, and the reviewers join the set.

    `system` names the system of every answer of the file. With `run` too, the file is that
    run of the system, whole: answers are matched by answer id with the run's current ones;
    an unchanged one is kept as it is, a changed one is written anew and the old one marked
    replaced (its claims and reviews kept, counted nowhere), a new one added, and one the
    file leaves out retired. What changed is recorded on the import batch.
    """
    refusal = run_refusal(system, run)
    if refusal is not None:
        raise FormatError(filename, "", *refusal)
    if system:
        parsed = dataclasses.replace(
            parsed,
            records=_named(parsed.records, system=run_key(system, run), run=run, filename=filename),
        )
    with transaction.atomic():
        # Before anything of the set is read: an import pushed at the same moment finishes
        # first, and this one then finds its questions (and its answers, if the same).
        set_imports_lock(audit_set_id=audit_set.pk)
        # New claims move the release tallies (NewClaims, not claims_changed, writes them).
        with decisions_watched(audit_set_id=audit_set.pk):
            # Nothing is kept per answer or question of the set, or of a streamed file: each
            # chunk looks up its own (docs/imports-parallel.md).
            streamed = isinstance(parsed.records, StreamedAnswers)
            within: set[str] | None = None if streamed else set()
            raters: dict[str, Rater] = {}
            totals = dict.fromkeys(_COUNTED, 0)

            users: dict[str, int] = {}
            if parsed.format == CITEAUDIT:
                # A restore creates the people the file names before its first write.
                fresh = [
                    pair
                    for chunk in _fresh(
                        _chunks(_digested(parsed.records), CHUNK),
                        audit_set_id=audit_set.pk,
                        totals=totals,
                        within=within,
                    )
                    for pair in chunk
                ]
                users = people(audit_set, [record for record, _ in fresh])

            batch = ImportBatch.objects.create(
                audit_set=audit_set,
                filename=filename[:300],
                format=parsed.format,
                sha256=sha256,
                system=system if run else "",
                run=run,
                created_by=user if user and user.is_authenticated else None,
            )
            replacing = None
            if run:
                if parsed.format == CITEAUDIT:
                    raise FormatError(
                        filename, "", "run", "a citeaudit export is restored as it was: no run"
                    )
                replacing = _RunReplace(
                    audit_set_id=audit_set.pk,
                    key=run_key(system, run),
                    run=run,
                    filename=filename,
                    totals=totals,
                )

            if parsed.format == CITEAUDIT:
                for chunk in _chunks(fresh, CHUNK):
                    restore_chunk(
                        chunk,
                        audit_set=audit_set,
                        batch=batch,
                        filename=filename,
                        raters=raters,
                        users=users,
                        totals=totals,
                    )
                    if progress:
                        progress(len(chunk))
            else:
                if run:
                    fresh_chunks = replacing.fresh(_chunks(_digested(parsed.records), CHUNK))
                    planned_chunks = _planned(fresh_chunks, workers)
                elif workers > 0 and streamed:
                    planned_chunks = _read_in_workers(parsed.records, audit_set.pk, totals, workers)
                else:
                    fresh_chunks = _fresh(
                        _chunks(_digested(parsed.records), CHUNK),
                        audit_set_id=audit_set.pk,
                        totals=totals,
                        within=within,
                    )
                    planned_chunks = _planned(fresh_chunks, workers)
                derived = NewClaims(audit_set_id=audit_set.pk)
                with bulk.foreign_keys_checked_per_statement():
                    for chunk in planned_chunks:
                        _labels_check(chunk, filename=filename)
                        answers_write(
                            answers=chunk,
                            audit_set_id=audit_set.pk,
                            batch=batch,
                            raters=raters,
                            totals=totals,
                            derived=derived,
                            run=run,
                        )
                        if progress:
                            progress(len(chunk))

            batch.answers_created = totals["answers"]
            batch.answers_skipped = totals["skipped"]
            batch.claims_created = totals["claims"]
            if replacing is not None:
                # The new claims' derived rows first, then the replaced ones' taken out.
                derived.finish()
                batch.changes = replacing.finish(batch=batch).as_dict()
            batch.save(
                update_fields=["answers_created", "answers_skipped", "claims_created", "changes"]
            )
            if replacing is not None:
                # Kept even when nothing changed: the run was pushed, and is the latest.
                batch_id = batch.pk
                planner_statistics_refresh(rows=totals["claims"])
            elif totals["answers"] == 0:
                # Nothing new: leave no empty import behind.
                batch.delete()
                batch_id = None
            else:
                batch_id = batch.pk
                if parsed.format == CITEAUDIT:
                    # New claims with their assignments, sheets, gold and splits.
                    claims_changed(
                        audit_set_id=audit_set.pk,
                        claim_ids=Claim.objects.filter(answer__import_batch=batch).values_list(
                            "pk", flat=True
                        ),
                        reviewer_ids=users.values(),
                    )
                else:
                    # New claims only: their derived rows were written with them.
                    derived.finish()
                planner_statistics_refresh(rows=totals["claims"])

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
        system=system if run else "",
        run=run,
        changes=batch.changes if run else None,
    )


def _named(
    records: Iterable[AnswerRecord], *, system: str, run: str, filename: str
) -> Iterator[AnswerRecord]:
    """The records as answers of `system` (a run's key); a run's answers need their ids."""
    for record in records:
        if run and not record.answer_id:
            raise FormatError(
                filename, record.location, "answer_id", "a run's answers are matched by answer_id"
            )
        yield dataclasses.replace(record, system=system)


class _RunReplace:
    """A push of a named run against the run's current answers: which of the file's answers
    to write (new or changed), and, once all are written, the replaced and retired ones
    marked and their claims taken out of every count."""

    def __init__(
        self, *, audit_set_id: int, key: str, run: str, filename: str, totals: dict[str, int]
    ) -> None:
        self.audit_set_id = audit_set_id
        self.filename = filename
        self.totals = totals
        current = Answer.objects.filter(
            audit_set_id=audit_set_id, system=key, run=run, replaced_at__isnull=True
        ).values_list("external_id", "pk", "content_hash")
        # One run's ids and hashes, not its texts.
        self.held = {external_id: (pk, digest) for external_id, pk, digest in current}
        self.pushed: set[str] = set()
        self.changes = RunChanges()

    def fresh[T](self, chunks: Iterable[list[tuple[T, str]]]) -> Iterator[list[tuple[T, str]]]:
        hashes = {external_id: digest for external_id, (_, digest) in self.held.items()}
        for chunk in chunks:
            for record, _ in chunk:
                answer_id = record.answer_id
                if answer_id in self.pushed:
                    raise FormatError(
                        self.filename,
                        record.location,
                        "answer_id",
                        f"answer_id {answer_id!r} repeats an earlier answer of the run",
                    )
                self.pushed.add(answer_id)
            write = set(
                changes_of(
                    held=hashes,
                    pushed=[(record.answer_id, digest) for record, digest in chunk],
                    changes=self.changes,
                )
            )
            fresh = [(record, digest) for record, digest in chunk if record.answer_id in write]
            self.totals["skipped"] += len(chunk) - len(fresh)
            if fresh:
                yield fresh

    def finish(self, *, batch: ImportBatch) -> RunChanges:
        self.changes.retired = retired_of(held=self.held, pushed=self.pushed)
        now = timezone.now()
        new = dict(
            Answer.objects.filter(
                import_batch=batch, external_id__in=self.changes.changed
            ).values_list("external_id", "pk")
        )
        # A changed answer points at its replacement; a retired one at none.
        replaced = [
            Answer(pk=self.held[key][0], replaced_at=now, replaced_by_id=new.get(key))
            for key in [*self.changes.changed, *self.changes.retired]
        ]
        Answer.objects.bulk_update(replaced, ["replaced_at", "replaced_by"], batch_size=500)
        old = [answer.pk for answer in replaced]
        claim_ids = list(Claim.objects.filter(answer_id__in=old).values_list("pk", flat=True))
        if claim_ids:
            # Their release facts and tallies go (services.release); their sheets stay.
            claims_changed(audit_set_id=self.audit_set_id, claim_ids=claim_ids)
        return self.changes


def _digested(records: Iterable[AnswerRecord]) -> Iterator[tuple[AnswerRecord, str]]:
    """Each record with its content hash."""
    for record in records:
        # An exported answer keeps the identity it had, so importing an export into the
        # set it came from adds nothing.
        digest = record.labelled.content_hash if record.labelled else answer_content_hash(record)
        yield record, digest


def _fresh[T](
    chunks: Iterable[list[tuple[T, str]]],
    *,
    audit_set_id: int,
    totals: dict[str, int],
    within: set[str] | None,
) -> Iterator[list[tuple[T, str]]]:
    """Each chunk of (answer, content hash) less the answers the set holds, looked up a
    chunk at a time so that nothing is kept per answer of the set; none left, no chunk.

    `within` holds the hashes of the file's chunks before (a file parsed whole, held whole
    anyway). A streamed native file passes None: its checks across lines refuse a line
    that repeats another's answer_id, or its question_id and system when it has none, and
    the content hash covers all three, so no two of its answers share one.
    """
    for chunk in chunks:
        held = set(
            Answer.objects.filter(
                audit_set_id=audit_set_id, content_hash__in=[digest for _, digest in chunk]
            ).values_list("content_hash", flat=True)
        )
        fresh = []
        for item, digest in chunk:
            if digest in held or (within is not None and digest in within):
                totals["skipped"] += 1
                continue
            held.add(digest)
            if within is not None:
                within.add(digest)
            fresh.append((item, digest))
        if fresh:
            yield fresh


def _chunks[T](items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def _planned(
    chunks: Iterator[list[tuple[AnswerRecord, str]]], workers: int
) -> Iterator[list[tuple[AnswerRows, str]]]:
    """Each chunk's answers as rows (claims located or split, and matched) with their
    content hash, in order; computed ahead in worker processes when there are any, at most
    two chunks per worker in flight, so a streamed file is never held whole."""
    if workers <= 0:
        cache = PassageCache()
        for chunk in chunks:
            records = [record for record, _ in chunk]
            plans = plan_answers(records, cache)
            yield [
                (answer_rows(record, plan), digest)
                for (record, digest), plan in zip(chunk, plans, strict=True)
            ]
        return
    # fork: the workers need no Django set-up and never touch the database connection
    # they inherit; they get plain records and return plain values.
    with matcher_pool(workers) as pool:
        pending: collections.deque = collections.deque()
        for chunk in chunks:
            records = [record for record, _ in chunk]
            digests = [digest for _, digest in chunk]
            pending.append((digests, pool.apply_async(plan_answers_in_worker, (records,))))
            if len(pending) >= 2 * workers:
                digests, result = pending.popleft()
                yield list(zip(pool.result(result), digests, strict=True))
        while pending:
            digests, result = pending.popleft()
            yield list(zip(pool.result(result), digests, strict=True))


def _read_in_workers(
    stream: StreamedAnswers, audit_set_id: int, totals: dict[str, int], workers: int
) -> Iterator[list[tuple[AnswerRows, str]]]:
    """What _planned yields for a streamed native file, with the lines parsed, hashed and
    planned in worker processes too, so this process only checks them in order and writes.

    Each batch of CHUNK lines is a chunk, less the answers the set holds, as
    _fresh(_chunks(...)) makes of the stream; and each line's answer is taken (checked
    against the lines before it) in file order, so the first error raised, and the chunks
    written before it, are the same as without workers. The workers plan every answer,
    those the set holds too: what the set holds is looked up a chunk at a time, here, and
    never handed to them whole. At most two batches of lines per worker are in flight: the
    file is never held whole.
    """
    with matcher_pool(workers) as pool:
        pending: collections.deque = collections.deque()
        lines = _chunks(stream.numbered_lines(), CHUNK)
        while True:
            while len(pending) < 2 * workers and (batch := next(lines, None)):
                pending.append(pool.apply_async(read_lines_in_worker, (batch, stream.filename)))
            if not pending:
                break
            done, error = pool.result(pending.popleft())
            for number, _, rows in done:
                stream.take_line(rows, rows.given_claims, number)
            if error is not None:
                raise error
            yield from _fresh(
                [[(rows, digest) for _, digest, rows in done]],
                audit_set_id=audit_set_id,
                totals=totals,
                within=None,
            )
    stream.finish()


def _labels_check(chunk: list[tuple[AnswerRows, str]], *, filename: str) -> None:
    """Refuse the file when a label points past its answer's claims, before the chunk writes
    anything (the transaction takes back the chunks before it)."""
    for rows, _ in chunk:
        for i, label in enumerate(rows.labels):
            if not 0 <= label.claim_index < len(rows.claims):
                raise FormatError(
                    filename,
                    rows.location,
                    f"labels[{i}].claim",
                    f"claim {label.claim_index} does not exist "
                    f"(the answer has {len(rows.claims)} claims, numbered from 0)",
                )
