"""Exports of a set's labelled data (jsonl, audit-sheets, csv, evidence), streamed: answers are
read a chunk at a time, turned into formats.labelled records and written by the pure writers.

Memory stays flat however large the set: only one chunk of answers is held at a time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from itertools import batched
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, QuerySet

from audit import judgments, selectors
from audit.formats import export_csv, export_evidence, export_jsonl, export_sheets, labelled
from audit.formats.catalogue import EXPORT_FORMATS, Needs
from audit.models import (
    Adjudication,
    Answer,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    JudgeVerdict,
    Passage,
    RaterLabel,
    Suggestion,
)
from audit.selectors import suggestions as suggestion_selectors
from audit.suggestions import JUDGE_RUN, SOURCE, SourceKey

# Answers per round of queries: large enough that the queries are few, small enough that a
# chunk with long passages stays a few megabytes.
CHUNK = 200
# Ids per IN (...) list; SQLite allows 32,766 parameters in one query.
IN_BATCH = 5000
# Pieces are joined up to this size before they are written or sent.
BUFFER_CHARS = 64 * 1024

_CLAIM_FIELDS = (
    "pk",
    "answer_id",
    "parent_id",
    "order",
    "text",
    "start",
    "end",
    "location",
    "cited_unknown",
    "is_uncited",
    "answers_question",
    "split_by__username",
    "split_at",
)
_CHECK_FIELDS = (
    "claim_id",
    "matcher_version",
    "label",
    "best_score",
    "highlights",
    "numbers",
    "wrong_citation",
    "computed_at",
)
_LABEL_FIELDS = ("judgment", "raw_label", "verification_worthy", "note")
# The judgment's columns; its wrong-citation passage is read as an id and named by position.
_JUDGED_FIELDS = tuple(name for name in judgments.FIELDS if name != "wrong_citation_passage")
_SHEET_FIELDS = (
    "status",
    "answer_statement",
    "cited_urls",
    *_JUDGED_FIELDS,
    "notes",
    "active_seconds",
    "version",
    "created_at",
    "updated_at",
    "submitted_at",
)
_GOLD_FIELDS = (
    "source",
    *_JUDGED_FIELDS,
    "reason",
    "note",
    "version",
    "created_at",
    "updated_at",
)


def export_answer_count(*, audit_set: AuditSet) -> int:
    """How many answers an export of the set goes through, for a progress bar."""
    return Answer.objects.filter(audit_set=audit_set).count()


def export_stream(
    *,
    audit_set: AuditSet,
    fmt: str,
    progress: Callable[[int], None] | None = None,
    chunk_size: int = CHUNK,
    viewer: AbstractBaseUser | None = None,
) -> Iterator[str]:
    """The export of a set in one of EXPORT_FORMATS, as text pieces of about BUFFER_CHARS.

    progress, when given, is called with the number of answers after each chunk. Raises
    KeyError for an unknown format. With a viewer, a claim they still review carries only
    their own sheet and no gold (see selectors.blind_claims); without one (the command
    line), everything.
    """
    spec = EXPORT_FORMATS[fmt]
    answers = labelled_answers(
        audit_set=audit_set,
        needs=spec.needs,
        progress=progress,
        chunk_size=chunk_size,
        viewer=viewer,
    )
    if fmt == "jsonl":
        pieces: Iterable[str] = (
            line for answer in answers for line in export_jsonl.answer_lines(answer)
        )
    elif fmt == "audit-sheets":
        pieces = export_sheets.audit_sheets(answers)
    elif fmt == "csv":
        pieces = export_csv.claims_csv(answers, sheet_slots=_sheet_slots(audit_set))
    else:
        pieces = export_evidence.evidence_csv(answers)
    yield from _buffered(pieces)


def _buffered(pieces: Iterable[str]) -> Iterator[str]:
    buffer: list[str] = []
    size = 0
    for piece in pieces:
        buffer.append(piece)
        size += len(piece)
        if size >= BUFFER_CHARS:
            yield "".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer)


def _sheet_slots(audit_set: AuditSet) -> int:
    """Sheet columns for the claims table: two, or the most sheets any claim has."""
    most = (
        AuditSheet.objects.filter(claim__answer__audit_set=audit_set)
        .values("claim")
        .annotate(n=Count("pk"))
        .order_by("-n")
        .values_list("n", flat=True)
        .first()
    )
    return max(2, most or 0)


def labelled_answers(
    *,
    audit_set: AuditSet,
    needs: Needs = EXPORT_FORMATS["jsonl"].needs,
    progress: Callable[[int], None] | None = None,
    chunk_size: int = CHUNK,
    viewer: AbstractBaseUser | None = None,
) -> Iterator[labelled.Answer]:
    """Every answer of the set with its passages, claims and review, in answer order.

    Reads the answers through one iterator and everything else a chunk of answers at a
    time, one query per table; lists of people are sorted by username in Python so the
    order does not depend on the database's collation.
    """
    fields = ["pk", "external_id", "system", "is_partial", "metadata", "content_hash"]
    fields += ["question_id", "question__external_id", "question__text"]
    if needs.texts:
        fields.append("text")
    rows = (
        Answer.objects.filter(audit_set=audit_set)
        .order_by("pk")
        .values(*fields)
        .iterator(chunk_size=chunk_size)
    )
    blind = selectors.blind_claim_ids(user=viewer, audit_set=audit_set) if viewer else set()
    # Judge runs' and pushed models' suggestions: the matcher's are the claim's check.
    sources = (
        {
            info.key: info
            for info in suggestion_selectors.sources(audit_set)
            if info.kind in (JUDGE_RUN, SOURCE)
        }
        if needs.extras
        else {}
    )
    for chunk in batched(rows, chunk_size):
        yield from _answers(list(chunk), needs, blind=blind, viewer=viewer, sources=sources)
        if progress:
            progress(len(chunk))


def _answers(
    rows: list[dict[str, Any]],
    needs: Needs,
    *,
    blind: set[int] = frozenset(),
    viewer: AbstractBaseUser | None = None,
    sources: dict[SourceKey, suggestion_selectors.SourceInfo] | None = None,
) -> list[labelled.Answer]:
    ids = [row["pk"] for row in rows]
    # Unordered: claims are put in reading order below, and Claim's default ordering by
    # answer joins the whole answer table into every chunk's query.
    claim_rows = list(Claim.objects.filter(answer_id__in=ids).order_by().values(*_CLAIM_FIELDS))
    claim_ids = [c["pk"] for c in claim_rows]

    passage_fields = ["pk", "answer_id", "position", "title", "url", "is_cited"]
    passages: dict[int, list[labelled.Passage]] = defaultdict(list)
    positions: dict[int, int] = {}
    for p in (
        Passage.objects.filter(answer_id__in=ids)
        .order_by("answer_id", "position")
        .values(*passage_fields, *(["text"] if needs.texts else []))
    ):
        positions[p["pk"]] = p["position"]
        passages[p["answer_id"]].append(
            labelled.Passage(
                position=p["position"],
                title=p["title"],
                url=p["url"],
                text=p.get("text", ""),
                is_cited=p["is_cited"],
                db_id=p["pk"],
            )
        )

    citations: dict[int, list[int]] = defaultdict(list)
    for link in _of_claims(Claim.citations.through.objects, claim_ids, "claim_id", "passage_id"):
        citations[link["claim_id"]].append(positions[link["passage_id"]])

    checks: dict[int, labelled.MachineCheck] = {}
    if needs.checks:
        for c in _of_claims(ClaimCheck.objects, claim_ids, *_CHECK_FIELDS):
            checks[c["claim_id"]] = labelled.MachineCheck(
                **{key: c[key] for key in _CHECK_FIELDS if key != "claim_id"}
            )

    assigned: dict[int, list[str]] = defaultdict(list)
    labels: dict[int, list[labelled.RaterLabel]] = defaultdict(list)
    if needs.extras:
        for a in _of_claims(Assignment.objects, claim_ids, "claim_id", "reviewer__username"):
            assigned[a["claim_id"]].append(a["reviewer__username"])
        for r in _of_claims(
            RaterLabel.objects, claim_ids, "claim_id", "rater__name", "rater__kind", *_LABEL_FIELDS
        ):
            labels[r["claim_id"]].append(
                labelled.RaterLabel(
                    rater=r["rater__name"],
                    kind=r["rater__kind"],
                    **{key: r[key] for key in _LABEL_FIELDS},
                )
            )

    suggested = _suggestions(claim_ids, sources or {})

    sheets: dict[int, list[labelled.Sheet]] = defaultdict(list)
    reviewer_of: dict[int, str] = {}
    sheet_rows = AuditSheet.objects.all()
    if not needs.drafts:
        sheet_rows = sheet_rows.filter(status=AuditSheet.Status.SUBMITTED)
    for s in _of_claims(
        sheet_rows,
        claim_ids,
        "pk",
        "claim_id",
        "reviewer_id",
        "reviewer__username",
        "wrong_citation_passage_id",
        *_SHEET_FIELDS,
    ):
        reviewer_of[s["pk"]] = s["reviewer__username"]
        if s["claim_id"] in blind and s["reviewer_id"] != viewer.pk:
            continue
        sheets[s["claim_id"]].append(
            labelled.Sheet(
                reviewer=s["reviewer__username"],
                wrong_citation_passage=positions.get(s["wrong_citation_passage_id"]),
                db_id=s["pk"],
                **{key: s[key] for key in _SHEET_FIELDS},
            )
        )

    gold_rows = list(
        _of_claims(
            Adjudication.objects,
            claim_ids,
            "pk",
            "claim_id",
            "wrong_citation_passage_id",
            "from_sheet_id",
            "lead__username",
            *_GOLD_FIELDS,
        )
    )
    # Gold's sheets, from_sheet included, by id, named from the sheets already read:
    # joining them in makes PostgreSQL hash the whole sheet table for every chunk when it
    # has no statistics for the gold tables (right after a bulk load).
    links = list(
        _batched_in(
            Adjudication.sheets.through.objects,
            "adjudication_id",
            [g["pk"] for g in gold_rows],
            ("adjudication_id", "auditsheet_id"),
        )
    )
    named = {link["auditsheet_id"] for link in links}
    named |= {g["from_sheet_id"] for g in gold_rows if g["from_sheet_id"] is not None}
    unread = list(named - reviewer_of.keys())
    for s in _batched_in(AuditSheet.objects, "pk", unread, ("pk", "reviewer__username")):
        reviewer_of[s["pk"]] = s["reviewer__username"]
    gold_sheets: dict[int, list[str]] = defaultdict(list)
    for link in links:
        gold_sheets[link["adjudication_id"]].append(reviewer_of[link["auditsheet_id"]])
    golds = {
        g["claim_id"]: labelled.Gold(
            wrong_citation_passage=positions.get(g["wrong_citation_passage_id"]),
            from_sheet=reviewer_of.get(g["from_sheet_id"]),
            sheets=tuple(sorted(gold_sheets[g["pk"]])),
            lead=g["lead__username"],
            db_id=g["pk"],
            **{key: g[key] for key in _GOLD_FIELDS},
        )
        for g in gold_rows
        if g["claim_id"] not in blind
    }

    claims: dict[int, list[labelled.Claim]] = defaultdict(list)
    orders = {c["pk"]: c["order"] for c in claim_rows}
    for c in claim_rows:
        pk = c["pk"]
        claims[c["answer_id"]].append(
            labelled.Claim(
                order=c["order"],
                parent_order=orders[c["parent_id"]] if c["parent_id"] else None,
                text=c["text"],
                start=c["start"],
                end=c["end"],
                location=c["location"],
                citations=tuple(sorted(citations[pk])),
                cited_unknown=tuple(c["cited_unknown"]),
                is_uncited=c["is_uncited"],
                answers_question=c["answers_question"],
                split_by=c["split_by__username"],
                split_at=c["split_at"],
                assigned=tuple(sorted(assigned[pk])),
                check=checks.get(pk),
                sheets=tuple(sorted(sheets[pk], key=lambda s: s.reviewer)),
                rater_labels=tuple(sorted(labels[pk], key=lambda r: r.rater)),
                gold=golds.get(pk),
                db_id=pk,
                suggestions=tuple(suggested[pk]),
            )
        )

    return [
        labelled.Answer(
            question_id=row["question__external_id"],
            question=row["question__text"],
            answer_id=row["external_id"],
            system=row["system"],
            text=row.get("text", ""),
            is_partial=row["is_partial"],
            content_hash=row["content_hash"],
            metadata=row["metadata"],
            passages=tuple(passages[row["pk"]]),
            claims=tuple(sorted(claims[row["pk"]], key=lambda c: c.key)),
            db_id=row["pk"],
            question_db_id=row["question_id"],
        )
        for row in rows
    ]


def _suggestions(
    claim_ids: list[int], sources: dict[SourceKey, suggestion_selectors.SourceInfo]
) -> dict[int, list[labelled.SourceSuggestion]]:
    """claim id → what each judge run and pushed source suggested, in the sources' order;
    two queries a chunk whatever the number of sources."""
    found: dict[int, list[labelled.SourceSuggestion]] = defaultdict(list)
    if not sources or not claim_ids:
        return found
    order = {key: i for i, key in enumerate(sources)}
    rows: list[tuple[SourceKey, Any]] = []
    runs = [key.pk for key in sources if key.kind == JUDGE_RUN]
    pushed = [key.pk for key in sources if key.kind == SOURCE]
    for start in range(0, len(claim_ids), IN_BATCH):
        ids = claim_ids[start : start + IN_BATCH]
        if runs:
            verdicts = JudgeVerdict.objects.filter(run_id__in=runs, claim_id__in=ids).exclude(
                judgment=""
            )
            for v in verdicts.only(
                "run_id", "claim_id", "judgment", "evidence", "unsupported_spans",
                "wrong_citation_passage",
            ):  # fmt: skip
                rows.append((SourceKey(JUDGE_RUN, v.run_id), suggestion_selectors.from_verdict(v)))
        if pushed:
            for row in Suggestion.objects.filter(source_id__in=pushed, claim_id__in=ids):
                rows.append((SourceKey(SOURCE, row.source_id), suggestion_selectors.from_row(row)))
    rows.sort(key=lambda pair: order[pair[0]])
    for key, suggestion in rows:
        info = sources[key]
        found[suggestion.claim_id].append(
            labelled.SourceSuggestion(str(key), info.name, info.version, suggestion)
        )
    return found


def _of_claims(queryset: QuerySet, claim_ids: list[int], *fields: str) -> Iterator[dict]:
    return _batched_in(queryset, "claim_id", claim_ids, fields)


def _batched_in(
    queryset: QuerySet, column: str, ids: list[int], fields: Iterable[str]
) -> Iterator[dict]:
    """Rows whose column is among ids, asked by the key itself rather than through a join:
    PostgreSQL then reads the foreign key's index instead of hashing whole tables."""
    for start in range(0, len(ids), IN_BATCH):
        yield from queryset.filter(**{f"{column}__in": ids[start : start + IN_BATCH]}).values(
            *fields
        )
