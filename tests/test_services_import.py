import json
import subprocess
import sys

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction
from django.urls import reverse

from audit.formats import FormatError, parse_file
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
from audit.services import answers_import, bulk, planner
from tests.conftest import FIXTURES, ROOT, import_file, run_queued_jobs
from tests.formats.helpers import jsonl, native_line

pytestmark = pytest.mark.django_db


def _claims(answer_id: str) -> list[Claim]:
    return list(
        Claim.objects.filter(answer__external_id=answer_id)
        .prefetch_related("citations")
        .order_by("order")
    )


def _cited(claim: Claim) -> list[int]:
    return sorted(p.position for p in claim.citations.all())


def test_handmade_set_imports_every_marker_form(handmade):
    leave = _claims("hm-1-a")
    notice = _claims("hm-2-a")
    overtime = _claims("hm-3-a")
    remote = _claims("hm-4-a")

    assert [c.text for c in leave] == [
        "Full-time employees receive 25 days of paid annual leave per year.",
        "Part-time staff receive leave pro rata.",
        "Unused leave of up to 5 days may be carried over.",
        "Leave requests must be approved by a line manager.",
    ]
    assert [_cited(c) for c in leave] == [[1], [1, 2], [2], []]
    assert [c.is_uncited for c in leave] == [False, False, False, True]
    assert [_cited(c) for c in notice] == [[1, 2], [2], []]
    assert notice[2].text == "Notice must be given in writing [sic] to HR."
    assert notice[2].cited_unknown == [3]
    assert [_cited(c) for c in overtime] == [[1, 2], [3], []]
    assert overtime[2].text == "The policy was last revised in [2019] according to HR."
    assert overtime[2].is_uncited is True
    assert [_cited(c) for c in remote] == [[1], [2]]


def test_offsets_point_into_the_original_answer(handmade):
    for answer in Answer.objects.all():
        for claim in answer.claims.all():
            sentence = answer.text[claim.start : claim.end]
            assert sentence.startswith(claim.text[:10])


def test_citation_past_the_passages_marks_the_answer_partial(handmade):
    sick = Answer.objects.get(external_id="hm-5-a")

    assert sick.is_partial is True
    assert [c.cited_unknown for c in sick.claims.order_by("order")] == [[], [4]]
    assert Answer.objects.get(external_id="hm-1-a").is_partial is False


def test_passages_record_whether_they_were_cited(handmade):
    sick = Answer.objects.get(external_id="hm-5-a")

    assert list(sick.passages.values_list("position", "is_cited")) == [(1, False), (2, True)]


def test_reimporting_the_same_file_creates_nothing(handmade):
    before = (Answer.objects.count(), Claim.objects.count(), Question.objects.count())

    summary = import_file(handmade, FIXTURES / "demo" / "handmade.jsonl")

    assert summary.answers == 0
    assert summary.skipped == 7
    assert (Answer.objects.count(), Claim.objects.count(), Question.objects.count()) == before


def test_one_question_groups_answers_from_two_systems(handmade):
    question = Question.objects.get(external_id="hm-1")

    assert sorted(question.answers.values_list("system", flat=True)) == [
        "handmade v1",
        "handmade v2",
    ]


def test_every_claim_gets_stored_matcher_checks(handmade):
    assert ClaimCheck.objects.count() == Claim.objects.count()
    probation = _claims("hm-2-a")[1]

    assert probation.machine_check.numbers == [{"token": "7,5", "grounded": False}]
    assert probation.machine_check.label == "unknown"


def test_label_for_missing_claim_is_refused_and_nothing_is_written(audit_set):
    line = {
        "question_id": "q1",
        "question": "Q?",
        "system": "s",
        "answer": "One sentence [1].",
        "passages": [{"title": "t", "url": "", "text": "One sentence."}],
        "labels": [{"rater": "earlier", "claim": 3, "judgment": "supported"}],
    }
    parsed = parse_file(json.dumps(line).encode(), "labels.jsonl")

    with pytest.raises(FormatError) as error:
        answers_import(audit_set=audit_set, parsed=parsed, filename="labels.jsonl", sha256="x")

    assert str(error.value) == (
        "labels.jsonl: line 1: labels[0].claim: claim 3 does not exist "
        "(the answer has 1 claims, numbered from 0)"
    )
    assert (Answer.objects.count(), Passage.objects.count(), Claim.objects.count()) == (0, 0, 0)


def test_expertqa_slice_keeps_given_claims_and_expert_labels(audit_set):
    summary = import_file(audit_set, FIXTURES / "expertqa" / "expertqa_slice15.jsonl")

    assert summary.format == "expertqa"
    assert summary.claims == Claim.objects.count()
    assert RaterLabel.objects.filter(rater__name="expertqa-expert").count() == summary.claims
    located = Claim.objects.exclude(location=Claim.Location.NOT_LOCATED).count()
    assert located / summary.claims >= 0.95
    for claim in Claim.objects.filter(location=Claim.Location.EXACT).select_related("answer"):
        assert claim.answer.text[claim.start : claim.end].startswith(claim.text[:20])


# ------------------------------------------------ refusals through the upload page and CLI

ALL_MODELS = (
    AuditSet,
    ImportBatch,
    Question,
    Answer,
    Passage,
    Claim,
    ClaimCheck,
    Rater,
    RaterLabel,
)


def _counts() -> tuple[int, ...]:
    return tuple(model.objects.count() for model in ALL_MODELS)


def _upload(client, name: str, data: bytes, fmt: str = "auto"):
    """Upload through the import page and, once the queued job has run, the job's page."""
    response = client.post(
        reverse("audit:import"),
        {"new_set_name": "Uploaded", "format": fmt, "file": SimpleUploadedFile(name, data)},
    )
    if response.status_code != 302:
        return response
    run_queued_jobs()
    return client.get(response["Location"])


def _error(response) -> str:
    """The error a refused upload shows: on the import page at once, or on its job's page."""
    if "job" in response.context:
        assert response.context["job"].status == "failed"
        return response.context["job"].error
    assert response.status_code == 400
    return response.context["error"]


def test_web_import_of_nan_is_refused_with_its_place_and_writes_nothing(client_for, lead):
    # PostgreSQL's jsonb refuses NaN, so a NaN that reached the database would be a 500 there.
    data = jsonl(native_line(metadata={"score": float("nan")}))
    before = _counts()

    response = _upload(client_for(lead), "nan.jsonl", data)

    assert _error(response) == (
        "nan.jsonl: line 1: score: NaN is not a number JSON allows; write a number or null "
        "(column 254)"
    )
    assert _counts() == before


def test_import_error_page_shows_file_line_and_field(client_for, lead):
    data = jsonl(native_line(), native_line(question_id="q2", system="s" * 201))

    response = _upload(client_for(lead), "long <names>.jsonl", data)

    assert response.context["job"].status == "failed"
    assert (
        "<pre>long &lt;names&gt;.jsonl: line 2: system: is 201 characters long; "
        "at most 200 fit</pre>"
    ) in response.content.decode()


def test_web_import_of_ids_differing_after_200_characters_is_refused(client_for, lead):
    # Cut to 200 characters, the two ids collided: a server error on both databases.
    long_id = "q" * 200
    data = jsonl(native_line(question_id=long_id + "A"), native_line(question_id=long_id + "B"))
    before = _counts()

    response = _upload(client_for(lead), "ids.jsonl", data)

    assert _error(response) == (
        "ids.jsonl: line 1: question_id: is 201 characters long; at most 200 fit"
    )
    assert _counts() == before


def test_web_import_of_two_long_system_names_does_not_merge_them(client_for, lead):
    shared = "x" * 200
    data = jsonl(native_line(system=shared + "-a"), native_line(system=shared + "-b"))
    before = _counts()

    response = _upload(client_for(lead), "systems.jsonl", data)

    assert _error(response) == (
        "systems.jsonl: line 1: system: is 202 characters long; at most 200 fit"
    )
    assert _counts() == before


def test_web_import_of_a_long_rater_name_is_refused(client_for, lead):
    label = {"rater": "r" * 250, "claim": 0, "judgment": "supported"}
    before = _counts()

    response = _upload(client_for(lead), "raters.jsonl", jsonl(native_line(labels=[label])))

    assert _error(response) == (
        "raters.jsonl: line 1: labels[0].rater: is 250 characters long; at most 200 fit"
    )
    assert _counts() == before


def test_web_import_of_a_repeated_key_is_refused(client_for, lead):
    line = json.dumps(native_line()).replace('"system":', '"system": "first", "system":')
    before = _counts()

    response = _upload(client_for(lead), "twice.jsonl", f"{line}\n".encode())

    assert _error(response) == (
        "twice.jsonl: line 1: system: the same key appears twice in one object; give it once "
        "(column 1)"
    )
    assert _counts() == before


def test_web_import_of_a_nul_escape_in_metadata_is_refused(client_for, lead):
    before = _counts()

    response = _upload(client_for(lead), "nul.jsonl", jsonl(native_line(metadata={"k": "\x00"})))

    assert _error(response) == (
        "nul.jsonl: line 1: metadata: contains a NUL character or an unpaired surrogate"
    )
    assert _counts() == before


def test_wrong_format_hint_on_the_web_page_names_no_command_line_option(client_for, lead):
    data = (FIXTURES / "samples" / "alce_sample.json").read_bytes()

    response = _upload(client_for(lead), "alce_sample.json", data, fmt="native")

    assert _error(response) == (
        "alce_sample.json: this looks like an ALCE result file, not native JSONL: "
        "import it as format 'alce', or let the format be detected"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            jsonl(native_line(metadata={"score": float("inf")})),
            "bad.jsonl: line 1: score: Infinity is not a number JSON allows; write a number or "
            "null (column 254)",
        ),
        (
            jsonl(native_line(answer_id="a" * 300)),
            "bad.jsonl: line 1: answer_id: is 300 characters long; at most 200 fit",
        ),
    ],
)
def test_command_line_prints_one_clear_line_and_exits_non_zero(content, message, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)

    # The file is refused before the command touches a database.
    result = subprocess.run(
        [sys.executable, "manage.py", "import_answers", str(path), "--set", "Any"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )

    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"CommandError: {message} (nothing was imported)\n"


def test_verdict_command_error_is_one_line(audit_set, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(jsonl({"judge": "j", "answer_id": "a", "claim_index": float("nan")}))

    with pytest.raises(CommandError) as error:
        call_command("import_verdicts", str(path), "--set", audit_set.name)

    assert str(error.value) == (
        "bad.jsonl: line 1: claim_index: NaN is not a number JSON allows; write a number or null "
        "(column 49) (nothing was imported)"
    )


def test_a_large_import_leaves_planner_statistics_of_what_it_wrote(audit_set, monkeypatch):
    # Without them the pages right after a bulk load are planned as if the tables were
    # empty (PostgreSQL) or every index selective (SQLite, which never analyses by itself).
    monkeypatch.setattr(planner, "AFTER_ROWS", 1)

    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'audit_claim'")
            (estimated,) = cursor.fetchone()
        else:
            cursor.execute("SELECT stat FROM sqlite_stat1 WHERE tbl = 'audit_claim' LIMIT 1")
            estimated = int(cursor.fetchone()[0].split()[0])
    assert estimated == Claim.objects.count() > 0
    if connection.vendor == "postgresql":
        # Every big table, the empty review tables too: never analysed, PostgreSQL would
        # plan them as if they held ten pages of rows.
        tables = {model._meta.db_table for model in planner.TABLES}
        with connection.cursor() as cursor:
            cursor.execute("SELECT relname FROM pg_class WHERE reltuples >= 0")
            analysed = {name for (name,) in cursor.fetchall()}
        assert {"audit_claimcheck", "audit_assignment", "audit_auditsheet"} <= tables
        assert tables - analysed == set()


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="SQLite reports a deferred key refused only at commit"
)
def test_an_import_checks_foreign_keys_per_statement_then_defers_them_again(audit_set):
    orphan = (10**12, 10**12, "orphan", "A question of no set.")
    columns = ("id", "audit_set_id", "external_id", "text")
    # Inside the block a row without its parent is refused by its own statement, not at
    # commit: the checks run while the import's workers match.
    with (
        transaction.atomic(),
        bulk.foreign_keys_checked_per_statement(),
        pytest.raises(IntegrityError),
        transaction.atomic(),
    ):
        bulk.insert_rows(Question, columns, [orphan])

    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")

    # After the import the rest of the transaction defers them again, as Django expects.
    with transaction.atomic():
        bulk.insert_rows(Question, columns, [orphan])
        with pytest.raises(IntegrityError), connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        transaction.set_rollback(True)
    assert Claim.objects.filter(answer__audit_set=audit_set).exists()


def test_web_import_over_the_size_limit_names_the_files_own_size(client_for, lead, settings):
    # The page reads an upload only to one byte past the limit; the size it names is the
    # file's, not that of what it read.
    settings.IMPORT_MAX_BYTES = 100
    data = jsonl(*(native_line(question_id=f"q{i}") for i in range(4)))
    before = _counts()

    response = _upload(client_for(lead), "big.jsonl", data)

    assert _error(response) == (
        f"big.jsonl: file is {len(data):,} bytes, over the limit of 100 bytes"
    )
    assert _counts() == before


@pytest.mark.parametrize(
    "claims",
    [None, ["Leave is 25 days [0].", "Pay is 3% [7].", "Bonus is paid [3]."]],
    ids=["split", "given"],
)
def test_markers_outside_the_passages_are_stored_as_cited_unknown(audit_set, claims):
    passages = [{"title": f"P{n}", "url": "", "text": f"Passage {n}."} for n in (1, 2, 3)]
    line = native_line(
        answer="Leave is 25 days [0]. Pay is 3% [7]. Bonus is paid [3].", passages=passages
    )
    if claims is not None:
        line["claims"] = claims
    data = jsonl(line)

    answers_import(
        audit_set=audit_set, parsed=parse_file(data, "a.jsonl"), filename="a.jsonl", sha256="x"
    )

    stored = list(Claim.objects.order_by("order").prefetch_related("citations"))
    assert [(c.text, c.cited_unknown, _cited(c), c.is_uncited) for c in stored] == [
        ("Leave is 25 days.", [0], [], False),
        ("Pay is 3%.", [7], [], False),
        ("Bonus is paid.", [], [3], False),
    ]
    assert Answer.objects.get().is_partial is True
