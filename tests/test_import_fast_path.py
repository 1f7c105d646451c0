"""The import's fast path (ids reserved, rows written by executemany or COPY, matching in
worker processes, native JSON Lines streamed) stores exactly what the model layer stored,
and a streamed file is refused with the same error as a file read whole."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit import import_plan
from audit.claims import plan_claims
from audit.formats import FormatError, parse_file, parse_path
from audit.models import (
    Answer,
    AuditSet,
    Claim,
    ClaimCheck,
    ImportBatch,
    Passage,
    Question,
    RaterLabel,
)
from audit.services import answer_content_hash, answers_import, claim_checks_recompute
from audit.services.checks import answer_claim_checks
from tests.conftest import CHECK_FIELDS, FIXTURES, import_file, stored_import_rows
from tests.factories import default_workspace
from tests.test_import_fuzz import HOSTILE, IMPORTS, SAMPLES, _lines, _native

pytestmark = pytest.mark.django_db


def _model_layer_import(audit_set: AuditSet, path) -> None:
    """What the import wrote before the fast path, through model instances and
    bulk_create, kept here as the reference the fast path must equal."""
    parsed = parse_file(path.read_bytes(), path.name)
    batch = ImportBatch.objects.create(audit_set=audit_set, filename=path.name, format="x")
    questions: dict[str, Question] = {}
    for record in parsed.records:
        question = questions.get(record.question_id)
        if question is None:
            question = questions[record.question_id] = Question.objects.create(
                audit_set=audit_set, external_id=record.question_id, text=record.question
            )
        plan = plan_claims(record)
        answer = Answer.objects.create(
            audit_set=audit_set,
            question=question,
            import_batch=batch,
            external_id=record.answer_id,
            system=record.system,
            text=record.answer,
            content_hash=answer_content_hash(record),
            is_partial=any(p.cited_unknown for p in plan),
            metadata=record.metadata,
        )
        cited = {n for p in plan for n in p.citations}
        passages = Passage.objects.bulk_create(
            Passage(
                answer=answer,
                position=position,
                title=source.title,
                url=source.url,
                text=source.text,
                is_cited=position in cited,
            )
            for position, source in enumerate(record.passages, start=1)
        )
        claims = Claim.objects.bulk_create(
            Claim(
                answer=answer,
                order=p.order,
                text=p.text,
                start=p.start,
                end=p.end,
                location=p.location,
                cited_unknown=list(p.cited_unknown),
                is_uncited=p.uncited,
            )
            for p in plan
        )
        for claim, planned in zip(claims, plan, strict=True):
            claim.citations.set([passages[n - 1] for n in planned.citations])
        ClaimCheck.objects.bulk_create(
            answer_claim_checks(
                passages,
                [
                    (claim, planned.citations, bool(planned.cited_unknown))
                    for claim, planned in zip(claims, plan, strict=True)
                ],
            )
        )


def _raw_json(audit_set: AuditSet) -> list[tuple]:
    """The JSON columns as the database holds them (text on SQLite)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.cited_unknown, k.highlights, k.numbers, k.wrong_citation, a.metadata "
            "FROM audit_claim c JOIN audit_claimcheck k ON k.claim_id = c.id "
            "JOIN audit_answer a ON a.id = c.answer_id WHERE a.audit_set_id = %s "
            'ORDER BY a.id, c."order"',
            [audit_set.pk],
        )
        return cursor.fetchall()


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_fast_path_stores_what_the_model_layerstored_import_rows(path):
    fast = AuditSet.objects.create(workspace=default_workspace(), name="fast")
    reference = AuditSet.objects.create(workspace=default_workspace(), name="reference")

    import_file(fast, path)
    _model_layer_import(reference, path)

    assert stored_import_rows(fast) == stored_import_rows(reference)
    assert _raw_json(fast) == _raw_json(reference)


def test_stored_checks_equal_a_rematch_of_the_same_claims(handmade):
    before = {
        c.claim_id: [getattr(c, f) for f in CHECK_FIELDS]
        for c in ClaimCheck.objects.filter(claim__answer__audit_set=handmade)
    }

    claim_checks_recompute(audit_set=handmade)

    after = {
        c.claim_id: [getattr(c, f) for f in CHECK_FIELDS]
        for c in ClaimCheck.objects.filter(claim__answer__audit_set=handmade)
    }
    assert after == before
    assert len(before) == Claim.objects.filter(answer__audit_set=handmade).count()


def test_command_with_matching_workers_stores_what_it_stores_without(tmp_path):
    path = FIXTURES / "expertqa" / "expertqa_slice15.jsonl"

    for name, workers in (("one", "0"), ("two", "2")):
        call_command(
            "import_answers", str(path), "--set", name, "--workers", workers, stdout=io.StringIO()
        )

    one, two = AuditSet.objects.get(name="one"), AuditSet.objects.get(name="two")
    assert stored_import_rows(one) == stored_import_rows(two)
    assert len(stored_import_rows(one)) > 15


def test_streamed_file_broken_past_the_first_chunk_writes_nothing(tmp_path):
    good = [
        _native(question_id=f"q{i}", answer=f"The rate is {i} percent [1].") for i in range(1201)
    ]
    path = tmp_path / "late.jsonl"
    path.write_bytes(_lines(*good) + b'{"question_id": "q9", "question": 5}\n')
    models = (Question, Answer, Passage, Claim, ClaimCheck, RaterLabel, ImportBatch)
    before = [m.objects.count() for m in models]

    with pytest.raises(CommandError) as raised:
        call_command("import_answers", str(path), "--set", "late", stdout=io.StringIO())

    assert str(raised.value) == (
        "late.jsonl: line 1202: question: expected a string, got number (nothing was imported)"
    )
    assert [m.objects.count() for m in models] == before


def _outcome(parse) -> object:
    try:
        parsed = parse()
        return (parsed.format, list(parsed.records))
    except FormatError as err:
        return str(err)


def _both(tmp_path, name: str, data: bytes) -> tuple[object, object]:
    path = tmp_path / name
    path.write_bytes(data)
    whole = _outcome(lambda: parse_file(data, name))
    streamed = _outcome(lambda: parse_path(path, name)[0])
    return whole, streamed


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_streamed_parse_refuses_hostile_files_as_the_whole_file_parse_does(tmp_path, case):
    whole, streamed = _both(tmp_path, f"{case}.jsonl", IMPORTS.get(case) or HOSTILE[case])

    assert streamed == whole


def test_streamed_parse_reports_the_first_nul_before_an_earlier_bad_line(tmp_path):
    nul = _lines(_native(answer="a NUL [1]")).replace(b"NUL", b"\x00")
    data = _lines(_native()) + b"{not json\n" + nul

    whole, streamed = _both(tmp_path, "nul.jsonl", data)

    assert streamed == whole
    assert whole.startswith("nul.jsonl: line 3: NUL byte at byte")


def test_parse_path_gives_the_file_hash_and_count_of_records(tmp_path):
    data = b"\xef\xbb\xbf" + _lines(_native(question_id="a"), _native(question_id="b")) + b"\n \n"
    path = tmp_path / "two.jsonl"
    path.write_bytes(data)

    parsed, check = parse_path(path, "two.jsonl")

    assert not isinstance(parsed.records, tuple)
    assert [r.question_id for r in parsed.records] == ["a", "b"]
    assert check.lines == 2
    assert check.sha256 == __import__("hashlib").sha256(data).hexdigest()


@settings(
    max_examples=60,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    sample=st.sampled_from(SAMPLES),
    cut=st.floats(0, 1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=4),
)
def test_streamed_parse_of_mutated_files_equals_the_whole_file_parse(tmp_path, sample, cut, flips):
    data = bytearray(sample.read_bytes())
    for where, value in flips:
        data[int(where * (len(data) - 1))] = value
    data = bytes(data[: max(1, int(cut * len(data)))])

    whole, streamed = _both(tmp_path, sample.name, data)

    assert streamed == whole


def test_json_columns_are_what_json_dumps_writes(handmade):
    claims = Claim.objects.filter(answer__audit_set=handmade).order_by("answer_id", "order")
    checks = {c.claim_id: c for c in ClaimCheck.objects.filter(claim__in=claims)}
    expected = [
        (
            claim.cited_unknown,
            checks[claim.pk].highlights,
            checks[claim.pk].numbers,
            checks[claim.pk].wrong_citation,
            claim.answer.metadata,
        )
        for claim in claims.select_related("answer")
    ]

    raw = _raw_json(handmade)

    if connection.vendor == "sqlite":
        assert raw == [tuple(None if v is None else json.dumps(v) for v in row) for row in expected]
    else:
        assert [tuple(json.loads(v) if isinstance(v, str) else v for v in r) for r in raw] == (
            expected
        )


def test_streamed_command_import_of_the_same_file_again_creates_nothing(tmp_path):
    path = tmp_path / "again.jsonl"
    path.write_bytes(_lines(*(_native(question_id=f"q{i}") for i in range(3))))
    call_command("import_answers", str(path), "--set", "again", stdout=io.StringIO())
    counts = [m.objects.count() for m in (Question, Answer, Passage, Claim, ClaimCheck)]
    batches = ImportBatch.objects.count()
    out = io.StringIO()

    call_command("import_answers", str(path), "--set", "again", stdout=out)

    assert [m.objects.count() for m in (Question, Answer, Passage, Claim, ClaimCheck)] == counts
    assert ImportBatch.objects.count() == batches
    assert "again.jsonl (native) into “again”: 0 answers (3 already present)" in out.getvalue()


def _import_outcome(tmp_path, name: str, data: bytes, workers: int) -> object:
    """What answers_import makes of a file on disk: its error, or its summary and rows."""
    path = tmp_path / name
    path.write_bytes(data)
    audit_set = AuditSet.objects.create(
        workspace=default_workspace(), name=f"{name} {workers} {AuditSet.objects.count()}"
    )
    try:
        parsed, check = parse_path(path, name)
        summary = answers_import(
            audit_set=audit_set,
            parsed=parsed,
            filename=name,
            sha256=check.sha256,
            workers=workers,
        )
    except FormatError as err:
        assert not Answer.objects.filter(audit_set=audit_set).exists()
        return str(err)
    return replace(summary, batch_id=None), stored_import_rows(audit_set)


def _with_and_without_workers(tmp_path, name: str, data: bytes) -> tuple[object, object]:
    return (
        _import_outcome(tmp_path, name, data, workers=0),
        _import_outcome(tmp_path, name, data, workers=2),
    )


def _many(n: int, **overrides) -> list[dict]:
    return [_native(question_id=f"q{i}", answer_id=f"a{i}", **overrides) for i in range(n)]


LATE = {
    # Errors that only the checks across lines find, in a later batch of lines than the
    # line they refer to.
    "duplicate id in a later batch": _lines(*_many(700), _native(question_id="x", answer_id="a3")),
    "question changed in a later batch": _lines(
        *_many(600), _native(question_id="q5", question="Another?", answer_id="z")
    ),
    "bad line after a bad label in its chunk": _lines(
        *_many(10),
        _native(answer_id="l", labels=[{"rater": "r", "claim": 5, "judgment": "supported"}]),
        *_many(3, question="Other"),
    ),
    "label past the split claims, second chunk": _lines(
        *_many(520),
        _native(
            answer_id="lab",
            question_id="qlab",
            labels=[{"rater": "r", "claim": 3, "judgment": "supported"}],
        ),
    )
    + b"{broken\n",
    "label past the split claims, then more lines": _lines(
        *_many(520),
        _native(
            answer_id="lab",
            question_id="qlab",
            labels=[{"rater": "r", "claim": 3, "judgment": "supported"}],
        ),
        _native(question_id="o1", answer_id="o1"),
        _native(question_id="o2", answer_id="o2"),
    ),
    "blank lines and a BOM": b"\xef\xbb\xbf"
    + _lines(*_many(3))
    + b"\n  \r\n"
    + _lines(_native(question_id="r", answer_id="r")),
    "good, past a batch": _lines(*_many(1203)),
}


@pytest.mark.parametrize("case", sorted({**HOSTILE, **IMPORTS, **LATE}))
def test_lines_read_in_workers_import_as_they_do_without(tmp_path, case):
    data = LATE.get(case) or IMPORTS.get(case) or HOSTILE[case]

    without, with_workers = _with_and_without_workers(tmp_path, f"{case}.jsonl", data)

    assert with_workers == without
    if case in LATE:
        refused = case not in ("blank lines and a BOM", "good, past a batch")
        assert isinstance(without, str) == refused


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.name)
def test_files_matched_in_workers_import_as_they_do_without(tmp_path, sample):
    # Whole-file formats (ALCE, RAGAS, ExpertQA) send parsed records to the workers and
    # get rows back; a native file sends its lines.
    without, with_workers = _with_and_without_workers(tmp_path, sample.name, sample.read_bytes())

    assert not isinstance(without, str)
    assert with_workers == without


def test_lines_read_in_workers_skip_what_the_set_holds(tmp_path):
    first, _ = _with_and_without_workers(tmp_path, "a.jsonl", _lines(*_many(3)))
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="again")
    path = tmp_path / "b.jsonl"
    path.write_bytes(_lines(*_many(5)))
    for workers in (2, 2):
        parsed, check = parse_path(path, "b.jsonl")
        summary = answers_import(
            audit_set=audit_set, parsed=parsed, filename="b.jsonl", sha256="x", workers=workers
        )

    assert (summary.answers, summary.skipped) == (0, 5)
    assert Answer.objects.filter(audit_set=audit_set).count() == 5


@settings(
    max_examples=25,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    cut=st.floats(0, 1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=4),
)
def test_mutated_files_import_with_workers_as_without(tmp_path, cut, flips):
    data = bytearray(SAMPLES[0].read_bytes())
    for where, value in flips:
        data[int(where * (len(data) - 1))] = value
    data = bytes(data[: max(1, int(cut * len(data)))])

    without, with_workers = _with_and_without_workers(tmp_path, "mutated.jsonl", data)

    assert with_workers == without


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities included: json.dumps writes them
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(value=_JSON_VALUES)
@settings(max_examples=300)
def test_kept_json_encoders_write_what_json_dumps_writes(value):
    # Stored JSON columns and every answer's content hash depend on these bytes: an
    # import of the same file must find the answers it stored before.
    assert import_plan._json(value) == json.dumps(value)
    assert import_plan._json_unicode(value) == json.dumps(value, ensure_ascii=False)


def test_kept_json_encoder_refuses_what_json_dumps_refuses():
    with pytest.raises(TypeError, match="not JSON serializable"):
        import_plan._json({"when": object()})
