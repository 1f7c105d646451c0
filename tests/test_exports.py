"""Exports (jsonl, audit-sheets, csv, evidence) from the service and the export_labels command,
and the round trip: a jsonl export imported into a fresh database exports the same again, as
does a version 1 file of the same set."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit import services
from audit.formats import labelled, parse_file
from audit.judgments import NOT_SUPPORTED, PARTIAL, SUPPORTED, WRONG_CITATION
from audit.models import (
    Adjudication,
    Answer,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    Rater,
    RaterLabel,
)
from audit.services import AtomicPart, planner
from audit.services.exports import export_stream
from tests.conftest import import_file
from tests.factories import claim_at, default_workspace
from tests.formats.helpers import as_citeaudit_v1, jsonl, native_line

pytestmark = pytest.mark.django_db

_DB_ID = re.compile(r'"db_id": [0-9]+')
T0 = datetime(2025, 3, 4, 9, 30, 15, 123456, tzinfo=UTC)


def _at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes, microseconds=minutes * 7)


def _evidence(claim: Claim, position: int, needle: str) -> dict[str, Any]:
    text = claim.answer.passages.get(position=position).text
    start = text.index(needle)
    return {"passage": position, "start": start, "end": start + len(needle), "text": needle}


# rev_b's unsupported assertions on hm-1-a claim 1 ("Part-time staff receive leave pro
# rata."): a span with a note, and free text that a page or a spreadsheet must not run.
B1_ASSERTIONS = [
    {"text": "receive leave", "start": 16, "end": 29, "note": 'FAQ: "staff" </q><b>x</b>\n=1+1'},
    {"text": "<script>alert(1)</script> =SUM(A1)", "start": None, "end": None, "note": ""},
]


def _sheet(claim: Claim, reviewer: User, minute: int, **fields: Any) -> AuditSheet:
    fields.setdefault("status", AuditSheet.Status.SUBMITTED)
    sheet = AuditSheet.objects.create(
        claim=claim,
        reviewer=reviewer,
        answer_statement=claim.text,
        cited_urls=list(claim.citations.order_by("position").values_list("url", flat=True)),
        **fields,
    )
    submitted = _at(minute + 2) if sheet.status == AuditSheet.Status.SUBMITTED else None
    AuditSheet.objects.filter(pk=sheet.pk).update(
        created_at=_at(minute), updated_at=_at(minute + 1), submitted_at=submitted
    )
    sheet.refresh_from_db()
    return sheet


def _gold(claim: Claim, sheets: list[AuditSheet], minute: int, **fields: Any) -> Adjudication:
    gold = Adjudication.objects.create(claim=claim, **fields)
    gold.sheets.set(sheets)
    Adjudication.objects.filter(pk=gold.pk).update(created_at=_at(minute), updated_at=_at(minute))
    return gold


@pytest.fixture
def reviewed(handmade, reviewer_a, reviewer_b, lead):
    """The handmade set plus a labelled native answer, opened for review and partly judged.

    hm-1-a: claim 0 unanimous, claim 1 adjudicated from rev_b's sheet, claim 2 unresolved
    (a draft and a wrong citation), claim 3 split into two atomic claims, the first with
    edited gold. hm-6-a: two submitted sheets, no gold. Everything else is unreviewed.
    """
    extra = native_line(
        question_id="q-ü",
        question="Wie lange gilt die Garantie?",
        answer="Die Garantie gilt zwei Jahre [1]. Danach nicht\u2028mehr.",
        passages=[{"title": "Garantie", "url": "", "text": "Zwei Jahre ab Kauf."}],
        claims=["Die Garantie gilt zwei Jahre [1].", "Danach nicht\u2028mehr."],
        labels=[
            {"rater": "alice", "claim": 0, "judgment": "supported", "verification_worthy": True},
            {"rater": "bob", "claim": 1, "judgment": "unclear", "note": "=SUM(A1)"},
        ],
        metadata={"run": "2025-03", "ratings": [1, 2.5, None], "nested": {"ä": True}},
    )
    services.answers_import(
        audit_set=handmade,
        parsed=parse_file(jsonl(extra), "extra.jsonl"),
        filename="extra.jsonl",
        sha256="0" * 64,
    )
    Rater.objects.filter(name="bob").update(kind=Rater.Kind.AUTOMATIC)
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)

    c0, c1, c2, c3 = (claim_at("hm-1-a", n) for n in range(4))
    a0 = _sheet(c0, reviewer_a, 0, judgment=SUPPORTED, evidence=[_evidence(c0, 1, "25 days")])
    b0 = _sheet(c0, reviewer_b, 3, judgment=SUPPORTED, active_seconds=41, version=3)
    _gold(c0, [a0, b0], 10, judgment=SUPPORTED, source=Adjudication.Source.UNANIMOUS)

    a1 = _sheet(c1, reviewer_a, 20, judgment=SUPPORTED, evidence=[_evidence(c1, 2, "pro rata")])
    b1 = _sheet(
        c1,
        reviewer_b,
        21,
        judgment=PARTIAL,
        evidence=[_evidence(c1, 1, "Part-time employees")],
        unsupported_assertions=B1_ASSERTIONS,
        notes="Only passage 1 says “employees”.\nSee FAQ.",
    )
    _gold(
        c1,
        [a1, b1],
        30,
        judgment=PARTIAL,
        source=Adjudication.Source.SHEET,
        from_sheet=b1,
        evidence=b1.evidence,
        unsupported_assertions=B1_ASSERTIONS,
        reason=Adjudication.Reason.REVIEWER_ERROR,
        note="rev_a missed the hedge",
        lead=lead,
        version=2,
    )

    _sheet(c2, reviewer_a, 40, status=AuditSheet.Status.DRAFT, notes="half done")
    _sheet(
        c2,
        reviewer_b,
        41,
        judgment=WRONG_CITATION,
        wrong_citation_passage=c2.answer.passages.get(position=1),
        verification_worthy=False,
    )

    parts = [AtomicPart("Leave requests must be approved."), AtomicPart("By a line manager.", (2,))]
    atom0, atom1 = services.claim_split(claim=c3, parts=parts, by=lead)
    Claim.objects.filter(pk=c3.pk).update(split_at=_at(50))
    sa = _sheet(atom0, reviewer_a, 51, judgment=NOT_SUPPORTED)
    _gold(
        atom0,
        [sa],
        55,
        judgment=NOT_SUPPORTED,
        source=Adjudication.Source.EDITED,
        reason=Adjudication.Reason.OTHER,
        lead=lead,
    )
    _sheet(atom1, reviewer_b, 52, judgment=SUPPORTED, evidence=[_evidence(atom1, 2, "approval")])

    q0, q1 = (claim_at("hm-6-a", n) for n in range(2))
    _sheet(q0, reviewer_a, 60, judgment=SUPPORTED, evidence=[_evidence(q0, 1, "four weeks")])
    _sheet(q1, reviewer_b, 61, judgment=NOT_SUPPORTED)
    ClaimCheck.objects.update(computed_at=_at(90))
    return handmade


def _export(audit_set: AuditSet, fmt: str, **kwargs: Any) -> str:
    return "".join(export_stream(audit_set=audit_set, fmt=fmt, **kwargs))


def _without_db_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_db_ids(v) for k, v in value.items() if k != "db_id"}
    if isinstance(value, list):
        return [_without_db_ids(v) for v in value]
    return value


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.split("\n") if line]


def _claim_lines(text: str) -> list[dict[str, Any]]:
    """Each claim record joined with its answer record's question, answer and passages."""
    joined, answer = [], {}
    for record in _lines(text):
        if record["record"] == "answer":
            answer = {key: record[key] for key in ("question", "answer", "passages")}
        else:
            joined.append(answer | record)
    return joined


def _csv(text: str) -> list[dict[str, str]]:
    assert text.startswith("\ufeff")
    return list(csv.DictReader(io.StringIO(text[1:])))


# -------------------------------------------------------------------------- round trip


def test_jsonl_round_trip_through_a_fresh_database_is_lossless(reviewed, tmp_path):
    first = _export(reviewed, "jsonl")
    path = tmp_path / "calibration.jsonl"
    path.write_text(first, encoding="utf-8")
    old_answer_ids = set(Answer.objects.values_list("pk", flat=True))
    # A fresh database: the set, the people and the raters are gone.
    reviewed.delete()
    User.objects.filter(username__in=["rev_a", "rev_b", "lead"]).delete()
    Rater.objects.all().delete()

    out = io.StringIO()
    call_command("import_answers", str(path), "--set", "Calibration", stdout=out)
    second = _export(AuditSet.objects.get(name="Calibration"), "jsonl")

    assert "(citeaudit)" in out.getvalue()
    before, after = _lines(first), _lines(second)
    assert len(after) == len(before) == Answer.objects.count() + Claim.objects.count()
    for line_before, line_after in zip(before, after, strict=True):
        assert _without_db_ids(line_after) == _without_db_ids(line_before)
    assert old_answer_ids.isdisjoint(a["answer"]["db_id"] for a in after if "answer" in a)
    # Byte for byte too, once the keys are blanked.
    assert _DB_ID.sub('"db_id": 0', second) == _DB_ID.sub('"db_id": 0', first)


def test_version_1_export_imports_into_a_fresh_database_as_it_was(reviewed, tmp_path):
    first = _export(reviewed, "jsonl")
    path = tmp_path / "calibration-v1.jsonl"
    path.write_bytes(as_citeaudit_v1(first.encode()))
    reviewed.delete()
    User.objects.filter(username__in=["rev_a", "rev_b", "lead"]).delete()
    Rater.objects.all().delete()

    call_command("import_answers", str(path), "--set", "Calibration", stdout=io.StringIO())
    second = _export(AuditSet.objects.get(name="Calibration"), "jsonl")

    assert _DB_ID.sub('"db_id": 0', second) == _DB_ID.sub('"db_id": 0', first)


def test_hostile_text_survives_export_import_export(audit_set, tmp_path):
    hostile = '<b onmouseover="x()">NaN</b> "]}\n{"citeaudit": 2} \u2028\u2029\x85 ü 👩🏽‍🔬 \u202e'
    longest = "é" * 200
    services.answers_import(
        audit_set=audit_set,
        parsed=parse_file(
            jsonl(
                native_line(
                    question_id=longest,
                    question=hostile,
                    system=longest,
                    answer=f"{hostile} [1]. NaN and Infinity [2].",
                    passages=[
                        {"title": hostile, "url": "javascript:alert(1)", "text": hostile},
                        {"title": "", "url": "", "text": "NaN and Infinity."},
                    ],
                    metadata={hostile: [hostile, "NaN", 1e308, -0.0]},
                )
            ),
            "hostile.jsonl",
        ),
        filename="hostile.jsonl",
        sha256="0" * 64,
    )
    first = _export(audit_set, "jsonl")
    path = tmp_path / "hostile-export.jsonl"
    path.write_text(first, encoding="utf-8")
    audit_set.delete()

    call_command("import_answers", str(path), "--set", "Again", stdout=io.StringIO())
    second = _export(AuditSet.objects.get(name="Again"), "jsonl")

    assert _DB_ID.sub('"db_id": 0', second) == _DB_ID.sub('"db_id": 0', first)
    assert _lines(second)[0]["question"]["text"] == hostile
    assert first.count("\n") == 1 + Claim.objects.count()


def test_a_restore_leaves_planner_statistics_for_every_table_an_export_reads(
    reviewed, tmp_path, monkeypatch
):
    # PostgreSQL without statistics for the gold and citation tables read them whole for
    # every chunk of an export right after the restore.
    monkeypatch.setattr(planner, "AFTER_ROWS", 1)
    path = tmp_path / "calibration.jsonl"
    path.write_text(_export(reviewed, "jsonl"), encoding="utf-8")
    reviewed.delete()

    call_command("import_answers", str(path), "--set", "Restored", stdout=io.StringIO())

    tables = {model._meta.db_table for model in planner.TABLES}
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT relname FROM pg_class WHERE reltuples >= 0")
        else:
            cursor.execute("SELECT tbl FROM sqlite_stat1")
        analysed = {name for (name,) in cursor.fetchall()}
    assert {"audit_adjudication", "audit_adjudication_sheets", "audit_claim_citations"} <= tables
    assert tables - analysed == set()


def test_round_trip_recreates_people_inactive_and_without_groups(reviewed, tmp_path):
    path = tmp_path / "calibration.jsonl"
    path.write_text(_export(reviewed, "jsonl"), encoding="utf-8")
    reviewed.delete()
    User.objects.filter(username__in=["rev_a", "rev_b", "lead"]).delete()

    call_command("import_answers", str(path), "--set", "Restored", stdout=io.StringIO())

    people = User.objects.filter(username__in=["rev_a", "rev_b", "lead"]).order_by("username")
    assert [(u.username, u.is_active, u.has_usable_password()) for u in people] == [
        ("lead", False, False),
        ("rev_a", False, False),
        ("rev_b", False, False),
    ]
    assert list(User.objects.filter(groups__isnull=False, username__in=["rev_a", "lead"])) == []
    restored = AuditSet.objects.get(name="Restored")
    assert sorted(restored.reviewers.values_list("username", flat=True)) == ["rev_a", "rev_b"]
    assert AuditSheet.history.filter(history_change_reason="imported from calibration.jsonl")


def test_round_trip_reuses_existing_people_and_raters(reviewed, tmp_path, reviewer_a):
    path = tmp_path / "calibration.jsonl"
    path.write_text(_export(reviewed, "jsonl"), encoding="utf-8")

    call_command("import_answers", str(path), "--set", "Copy", stdout=io.StringIO())

    copy = AuditSet.objects.get(name="Copy")
    assert AuditSheet.objects.filter(claim__answer__audit_set=copy, reviewer=reviewer_a).count()
    assert Rater.objects.filter(name="alice").count() == 1
    assert _without_db_ids(_lines(_export(copy, "jsonl"))) == _without_db_ids(
        _lines(_export(reviewed, "jsonl"))
    )


def test_importing_an_export_into_its_own_set_adds_nothing(reviewed, tmp_path):
    path = tmp_path / "calibration.jsonl"
    path.write_text(_export(reviewed, "jsonl"), encoding="utf-8")
    sheets = AuditSheet.objects.count()

    out = io.StringIO()
    call_command("import_answers", str(path), "--set", "Calibration", stdout=out)

    assert "0 answers (8 already present)" in out.getvalue()
    assert AuditSheet.objects.count() == sheets


def test_broken_export_names_line_and_field_and_writes_nothing(reviewed, tmp_path):
    lines = _export(reviewed, "jsonl").splitlines(keepends=True)
    broken = json.loads(lines[2])
    broken["sheets"][0]["created_at"] = "2025-03-04 09:30"
    lines[2] = json.dumps(broken) + "\n"
    path = tmp_path / "broken.jsonl"
    path.write_text("".join(lines), encoding="utf-8")

    with pytest.raises(CommandError) as error:
        call_command("import_answers", str(path), "--set", "Other", stdout=io.StringIO())

    assert str(error.value) == (
        'broken.jsonl: line 3: sheets[0].created_at: timestamp "2025-03-04 09:30" needs a '
        "UTC offset (nothing was imported)"
    )
    assert not AuditSet.objects.filter(name="Other").exists()


def test_model_choices_agree_with_the_export_schema():
    assert tuple(Claim.Location.values) == labelled.LOCATIONS
    assert tuple(ClaimCheck.Label.values) == labelled.CHECK_LABELS
    assert tuple(AuditSheet.Status.values) == labelled.SHEET_STATUSES
    assert tuple(Adjudication.Source.values) == labelled.GOLD_SOURCES
    assert tuple(Adjudication.Reason.values) == labelled.GOLD_REASONS
    assert tuple(Rater.Kind.values) == labelled.RATER_KINDS


# ------------------------------------------------------------------------------- jsonl


def test_jsonl_has_an_answer_record_then_a_record_per_claim_in_reading_order(reviewed):
    records = _lines(_export(reviewed, "jsonl"))
    lines = _claim_lines(_export(reviewed, "jsonl"))

    hm1 = [
        (x["claim"]["order"], x["claim"]["parent_order"])
        for x in lines
        if x["answer"]["id"] == "hm-1-a"
    ]
    assert hm1 == [(0, None), (1, None), (2, None), (3, None), (0, 3), (1, 3)]
    assert [x["gold_source"] for x in lines[:6]] == [
        "unanimous",
        "adjudicated",
        "unresolved",
        "unresolved",
        "adjudicated",
        "unresolved",
    ]
    hash_1 = records[0]["answer"]["content_hash"]
    assert [(r["record"], r.get("answer_hash")) for r in records[:8]] == [
        ("answer", None),
        *[("claim", hash_1)] * 6,
        ("answer", None),
    ]
    assert [r["citeaudit"] for r in records] == [2] * len(records)
    assert sum(r["record"] == "answer" for r in records) == Answer.objects.count()
    assert [len(r.get("passages", ())) for r in records[:2]] == [2, 0]


def test_jsonl_line_holds_the_claim_its_sheets_and_gold(reviewed, lead):
    c1 = claim_at("hm-1-a", 1)
    line = _claim_lines(_export(reviewed, "jsonl"))[1]

    assert line["question"] == {
        "db_id": c1.answer.question_id,
        "id": "hm-1",
        "text": "How much annual leave do full-time employees get?",
    }
    assert line["claim"] == {
        "db_id": c1.pk,
        "order": 1,
        "parent_order": None,
        "text": "Part-time staff receive leave pro rata.",
        "start": c1.start,
        "end": c1.end,
        "location": "split",
        "citations": [1, 2],
        "cited_unknown": [],
        "is_uncited": False,
        "answers_question": False,
        "split_by": None,
        "split_at": None,
    }
    assert line["assigned"] == ["rev_a", "rev_b"]
    assert line["machine_check"]["computed_at"] == "2025-03-04T11:00:15.124086+00:00"
    assert [s["reviewer"] for s in line["sheets"]] == ["rev_a", "rev_b"]
    assert line["sheets"][1] | {"db_id": None, "evidence": None} == {
        "db_id": None,
        "reviewer": "rev_b",
        "status": "submitted",
        "answer_statement": "Part-time staff receive leave pro rata.",
        "cited_urls": [
            "https://intranet.example.com/policies/leave",
            "https://intranet.example.com/hr/faq",
        ],
        "judgment": "partially_supported",
        "wrong_citation_passage": None,
        "evidence": None,
        "unsupported_assertions": B1_ASSERTIONS,
        "verification_worthy": True,
        "answers_question": False,
        "notes": "Only passage 1 says “employees”.\nSee FAQ.",
        "active_seconds": 0,
        "version": 1,
        "created_at": "2025-03-04T09:51:15.123603+00:00",
        "updated_at": "2025-03-04T09:52:15.123610+00:00",
        "submitted_at": "2025-03-04T09:53:15.123617+00:00",
    }
    gold = line["gold"]
    assert (gold["source"], gold["from_sheet"], gold["sheets"], gold["lead"]) == (
        "sheet",
        "rev_b",
        ["rev_a", "rev_b"],
        "lead",
    )
    assert (gold["reason"], gold["version"], gold["created_at"]) == (
        "reviewer_error",
        2,
        "2025-03-04T10:00:15.123666+00:00",
    )


def test_jsonl_keeps_rater_labels_metadata_and_escapes_line_separators(reviewed):
    text = _export(reviewed, "jsonl")
    lines = [x for x in _claim_lines(text) if x["question"]["id"] == "q-ü"]

    assert "\u2028" not in text
    assert "\\u2028" in text
    assert [x["rater_labels"] for x in lines] == [
        [
            {
                "rater": "alice",
                "kind": "human",
                "judgment": "supported",
                "raw_label": "supported",
                "verification_worthy": True,
                "note": "",
            }
        ],
        [
            {
                "rater": "bob",
                "kind": "automatic",
                "judgment": "unclear",
                "raw_label": "unclear",
                "verification_worthy": None,
                "note": "=SUM(A1)",
            }
        ],
    ]
    assert lines[0]["answer"]["metadata"] == {
        "run": "2025-03",
        "ratings": [1, 2.5, None],
        "nested": {"ä": True},
    }
    assert lines[1]["answer"]["text"] == "Die Garantie gilt zwei Jahre [1]. Danach nicht\u2028mehr."


def test_jsonl_atomic_claims_follow_their_parent(reviewed, lead):
    lines = [x for x in _claim_lines(_export(reviewed, "jsonl")) if x["answer"]["id"] == "hm-1-a"]
    parent, atom0, atom1 = lines[3], lines[4], lines[5]

    assert (parent["claim"]["split_by"], parent["claim"]["split_at"]) == (
        "lead",
        "2025-03-04T10:20:15.123806+00:00",
    )
    assert parent["assigned"] == []
    assert (atom0["claim"]["location"], atom0["claim"]["citations"]) == ("atomic", [])
    assert atom1["claim"]["citations"] == [2]
    assert atom0["gold"]["source"] == "edited"


def test_export_reads_a_chunk_of_answers_per_round_of_queries(reviewed):
    def queries(chunk_size: int) -> int:
        with CaptureQueriesContext(connection) as ctx:
            _export(reviewed, "jsonl", chunk_size=chunk_size)
        return len(ctx.captured_queries)

    # One query for the answers and two for the set's sources of suggestions (judge runs,
    # pushed models; none here), then per chunk at most one per table: claims, passages,
    # citations, checks, assignments, rater labels, sheets, gold and gold's sheets.
    per_chunk = 9
    assert queries(8) == 3 + per_chunk
    with CaptureQueriesContext(connection) as ctx:
        _export(reviewed, "jsonl", chunk_size=4)
    # A chunk's queries read their own table by key: a join to the answers or the sheets
    # read the whole of that table again for every chunk.
    joined = [q["sql"] for q in ctx.captured_queries[3:] if " JOIN " in q["sql"]]
    assert [
        sql for sql in joined if '"audit_answer"' in sql or 'JOIN "audit_auditsheet"' in sql
    ] == []
    assert 3 + 2 * per_chunk - 2 <= queries(4) <= 3 + 2 * per_chunk
    assert queries(1) <= 3 + 8 * per_chunk


# --------------------------------------------------------------------------- audit-sheets


def test_audit_sheets_holds_submitted_sheets_and_gold(reviewed, lead):
    items = json.loads(_export(reviewed, "audit-sheets"))
    c0 = claim_at("hm-1-a", 0)

    assert [(i["kind"], i["reviewer"], i["support_judgment"]) for i in items[:7]] == [
        ("sheet", "rev_a", "supported"),
        ("sheet", "rev_b", "supported"),
        ("gold", None, "supported"),
        ("sheet", "rev_a", "supported"),
        ("sheet", "rev_b", "partially_supported"),
        ("gold", "lead", "partially_supported"),
        ("sheet", "rev_b", "wrong_citation"),
    ]
    assert len(items) == AuditSheet.objects.filter(status="submitted").count() + 3
    sheet = AuditSheet.objects.get(claim=c0, reviewer__username="rev_a")
    assert items[0] == {
        "kind": "sheet",
        "id": sheet.pk,
        "claim_id": c0.pk,
        "answer_id": "hm-1-a",
        "question_id": "hm-1",
        "reviewer": "rev_a",
        "answer_statement": "Full-time employees receive 25 days of paid annual leave per year.",
        "cited_url": ["https://intranet.example.com/policies/leave"],
        "support_judgment": "supported",
        "evidence_sentences": [_evidence(c0, 1, "25 days")],
        "unsupported_assertions": [],
        "created_at": "2025-03-04T09:30:15.123456+00:00",
        "updated_at": "2025-03-04T09:31:15.123463+00:00",
        "submitted_at": "2025-03-04T09:32:15.123470+00:00",
    }
    assert items[5] | {"id": None} == {
        "kind": "gold",
        "id": None,
        "claim_id": claim_at("hm-1-a", 1).pk,
        "answer_id": "hm-1-a",
        "question_id": "hm-1",
        "reviewer": "lead",
        "answer_statement": "Part-time staff receive leave pro rata.",
        "cited_url": [
            "https://intranet.example.com/policies/leave",
            "https://intranet.example.com/hr/faq",
        ],
        "support_judgment": "partially_supported",
        "evidence_sentences": items[4]["evidence_sentences"],
        "unsupported_assertions": B1_ASSERTIONS,
        "created_at": "2025-03-04T10:00:15.123666+00:00",
        "updated_at": "2025-03-04T10:00:15.123666+00:00",
        "submitted_at": None,
    }


def test_audit_sheets_of_an_unreviewed_set_is_an_empty_array(handmade):
    assert _export(handmade, "audit-sheets") == "[]\n"


# -------------------------------------------------------------------------------- csv


def test_csv_has_a_row_per_claim_with_both_sheets_side_by_side(reviewed):
    rows = _csv(_export(reviewed, "csv"))
    c2 = claim_at("hm-1-a", 2)

    assert len(rows) == Claim.objects.count()
    row = next(r for r in rows if r["claim_id"] == str(c2.pk))
    assert {k: v for k, v in row.items() if k.startswith(("sheet_", "gold_"))} == {
        "sheet_1_reviewer": "rev_a",
        "sheet_1_status": "draft",
        "sheet_1_judgment": "",
        "sheet_1_evidence": "",
        "sheet_1_unsupported": "",
        "sheet_2_reviewer": "rev_b",
        "sheet_2_status": "submitted",
        "sheet_2_judgment": "wrong_citation",
        "sheet_2_evidence": "",
        "sheet_2_unsupported": "",
        "gold_judgment": "",
        "gold_evidence": "",
        "gold_unsupported": "",
        "gold_source": "unresolved",
        "gold_verification_worthy": "",
        "gold_lead": "",
        "gold_unsupported_count": "",
        "sheet_count": "2",
    }
    assert (row["citations"], row["citation_count"], row["submitted_count"]) == ("2", "1", "1")
    assert row["machine_label"] == ClaimCheck.objects.get(claim=c2).label


def test_csv_holds_the_span_texts_of_sheets_and_gold(reviewed):
    rows = _csv(_export(reviewed, "csv"))
    row = next(r for r in rows if r["claim_id"] == str(claim_at("hm-1-a", 1).pk))

    assert row["sheet_2_evidence"] == "[1] Part-time employees"
    assert row["sheet_2_unsupported"] == (
        'receive leave (FAQ: "staff" </q><b>x</b>\n=1+1) | <script>alert(1)</script> =SUM(A1)'
    )
    assert row["gold_unsupported"] == row["sheet_2_unsupported"]
    assert row["gold_unsupported_count"] == "2"


def test_csv_defuses_cells_a_spreadsheet_would_run(reviewed):
    Claim.objects.filter(pk=claim_at("hm-1-a", 0).pk).update(text='=HYPERLINK("x")')

    rows = _csv(_export(reviewed, "csv"))

    assert rows[0]["claim"] == '\'=HYPERLINK("x")'


# --------------------------------------------------------------------------- evidence


def test_evidence_table_checks_reviewer_gold_and_answer_quotes(reviewed):
    rows = _csv(_export(reviewed, "evidence"))
    c0 = claim_at("hm-1-a", 0)
    passage = c0.answer.passages.get(position=1)

    mine = [r for r in rows if r["claim_id"] == str(c0.pk)]
    assert mine == [
        {
            "question_id": "hm-1",
            "answer_id": "hm-1-a",
            "answer_db_id": str(c0.answer_id),
            "claim_id": str(c0.pk),
            "claim_order": "0",
            "parent_order": "",
            "source": "rev_a",
            "kind": "verbatim",
            "passage": "1",
            "passage_id": str(passage.pk),
            "verified": "true",
            "match": "1.0",
            "span": "25 days",
        }
    ]
    quotes = [r for r in rows if r["kind"] == "answer"]
    assert [(r["answer_id"], r["verified"]) for r in quotes] == [
        ("hm-6-a", "true"),
        ("hm-6-a", "false"),
    ]


# ----------------------------------------------------------------------------- command


def test_export_labels_writes_the_file(reviewed, tmp_path):
    out = tmp_path / "sheets.json"
    stdout = io.StringIO()

    call_command(
        "export_labels",
        "--set",
        "Calibration",
        "--format",
        "audit-sheets",
        "--out",
        str(out),
        stdout=stdout,
    )

    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(
        _export(reviewed, "audit-sheets")
    )
    assert stdout.getvalue() == f"Wrote the audit-sheets export of “Calibration” to {out}.\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sheets.json"]


def test_export_labels_writes_to_stdout_without_out(reviewed):
    stdout = io.StringIO()

    call_command("export_labels", "--set", "Calibration", "--format", "csv", stdout=stdout)

    assert stdout.getvalue() == _export(reviewed, "csv")


def test_export_labels_refuses_an_unknown_set(db):
    with pytest.raises(CommandError) as error:
        call_command("export_labels", "--set", "Nope", "--format", "jsonl")

    assert str(error.value) == "no audit set named “Nope”"


def test_export_labels_reports_an_unwritable_path(reviewed, tmp_path):
    with pytest.raises(CommandError) as error:
        call_command(
            "export_labels",
            "--set",
            "Calibration",
            "--format",
            "jsonl",
            "--out",
            str(tmp_path / "missing" / "x.jsonl"),
        )

    assert str(error.value).endswith("x.jsonl: No such file or directory")


def test_every_export_of_an_empty_set(db):
    empty = AuditSet.objects.create(workspace=default_workspace(), name="Empty")

    assert _export(empty, "jsonl") == ""
    assert _export(empty, "audit-sheets") == "[]\n"
    assert len(_csv(_export(empty, "csv"))) == 0
    assert len(_csv(_export(empty, "evidence"))) == 0


def test_import_file_helper_still_imports_handmade(audit_set):
    # The citeaudit branch leaves the other formats' import path as it was.
    summary = import_file(audit_set, Path(__file__).parent.parent / "fixtures/demo/handmade.jsonl")

    assert (summary.format, summary.sheets, summary.gold) == ("native", 0, 0)
    assert RaterLabel.objects.count() == 0
    assert Assignment.objects.count() == 0


def test_a_marker_numbered_0_survives_the_round_trip(audit_set, tmp_path):
    data = jsonl(native_line(answer="The warranty lasts two years [0]. It is free [1]."))
    services.answers_import(
        audit_set=audit_set, parsed=parse_file(data, "a.jsonl"), filename="a.jsonl", sha256="x"
    )
    first = _export(audit_set, "jsonl")
    audit_set.delete()

    services.answers_import(
        audit_set=AuditSet.objects.create(workspace=default_workspace(), name="Again"),
        parsed=parse_file(first.encode(), "again.jsonl"),
        filename="again.jsonl",
        sha256="y",
    )

    assert list(Claim.objects.order_by("order").values_list("cited_unknown", flat=True)) == [
        [0],
        [],
    ]
