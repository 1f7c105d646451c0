"""Importing an automatic judge's verdicts: claims named by index or text, all or nothing."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from audit import services
from audit.formats import FormatError
from audit.models import ImportBatch, Rater, RaterLabel
from tests.factories import claim_at

pytestmark = pytest.mark.django_db

MAX = 1_000_000


def _file(*verdicts: dict) -> bytes:
    return "".join(json.dumps(v) + "\n" for v in verdicts).encode()


def _import(audit_set, *verdicts: dict):
    return services.verdicts_import(
        audit_set=audit_set, data=_file(*verdicts), filename="judge.jsonl", max_bytes=MAX
    )


def test_verdicts_name_claims_by_index_or_folded_text(handmade):
    second = claim_at("hm-1-a", 1)
    spaced = "  " + second.text.replace(" ", "\n  ") + " "

    summary = _import(
        handmade,
        {
            "judge": "nli-v1",
            "answer_id": "hm-1-a",
            "claim_index": 0,
            "judgment": "supported",
            "evidence": ["25 days of paid annual leave"],
            "rationale": "entailed",
        },
        {"judge": "nli-v1", "answer_id": "hm-1-a", "claim_text": spaced, "judgment": "unclear"},
    )

    assert summary == services.VerdictImportSummary(judges=("nli-v1",), created=2, replaced=0)
    rater = Rater.objects.get(name="nli-v1")
    assert rater.kind == Rater.Kind.AUTOMATIC
    labels = list(
        RaterLabel.objects.order_by("claim__order").values_list(
            "claim_id", "judgment", "raw_label", "evidence", "rationale", "import_batch__format"
        )
    )
    assert labels == [
        (
            claim_at("hm-1-a", 0).pk,
            "supported",
            "supported",
            ["25 days of paid annual leave"],
            "entailed",
            "verdicts",
        ),
        (second.pk, "unclear", "unclear", [], "", "verdicts"),
    ]


def test_importing_a_judge_again_replaces_its_verdicts(handmade):
    verdict = {"judge": "nli-v1", "answer_id": "hm-1-a", "claim_index": 0, "judgment": "supported"}
    _import(handmade, verdict)

    summary = _import(handmade, {**verdict, "judgment": "contradicted"})

    assert (summary.created, summary.replaced) == (0, 1)
    assert list(RaterLabel.objects.values_list("judgment", flat=True)) == ["contradicted"]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            {"answer_id": "nope", "claim_index": 0},
            "judge.jsonl: line 2: answer_id: no answer 'nope' in set 'Calibration'",
        ),
        (
            {"answer_id": "hm-1-a", "claim_index": 9},
            "judge.jsonl: line 2: claim_index: answer 'hm-1-a' has 4 claims, numbered from 0; "
            "there is no claim 9",
        ),
        (
            {"answer_id": "hm-1-a", "claim_text": "Not a claim of this answer."},
            "judge.jsonl: line 2: claim_text: no claim of answer 'hm-1-a' has this text",
        ),
        (
            {"answer_id": "hm-1-a", "claim_index": 1, "claim_text": "Not claim one."},
            "judge.jsonl: line 2: claim_text: does not match claim 1 of 'hm-1-a'",
        ),
    ],
)
def test_an_unknown_claim_names_file_line_and_field_and_writes_nothing(handmade, bad, message):
    good = {"judge": "nli-v1", "answer_id": "hm-1-a", "claim_index": 0, "judgment": "supported"}

    with pytest.raises(FormatError) as error:
        _import(handmade, good, {"judge": "nli-v1", "judgment": "supported", **bad})

    assert str(error.value) == message
    assert (Rater.objects.count(), RaterLabel.objects.count(), ImportBatch.objects.count()) == (
        0,
        0,
        1,  # the handmade import itself
    )


def test_two_verdicts_of_one_judge_on_one_claim_are_refused(handmade):
    first = claim_at("hm-1-a", 0)

    with pytest.raises(FormatError) as error:
        _import(
            handmade,
            {"judge": "j", "answer_id": "hm-1-a", "claim_index": 0, "judgment": "supported"},
            {"judge": "j", "answer_id": "hm-1-a", "claim_text": first.text, "judgment": "unclear"},
        )

    assert str(error.value) == (
        "judge.jsonl: line 2: a second verdict by 'j' for the same claim (line 1)"
    )


def test_a_judge_cannot_take_the_name_of_imported_human_labels(handmade):
    Rater.objects.create(name="expertqa-expert", kind=Rater.Kind.HUMAN)

    with pytest.raises(FormatError) as error:
        _import(
            handmade,
            {
                "judge": "expertqa-expert",
                "answer_id": "hm-1-a",
                "claim_index": 0,
                "judgment": "supported",
            },
        )

    assert str(error.value) == (
        "judge.jsonl: line 1: judge: 'expertqa-expert' names imported human labels, not an "
        "automatic judge"
    )
    assert RaterLabel.objects.count() == 0


def test_import_verdicts_command(handmade, tmp_path, capsys):
    path = tmp_path / "judge.jsonl"
    path.write_bytes(
        _file({"judge": "llm-a", "answer_id": "hm-2-a", "claim_index": 1, "judgment": "unclear"})
    )

    call_command("import_verdicts", str(path), "--set", "Calibration")

    assert (
        capsys.readouterr().out
        == "judge.jsonl into “Calibration”: verdicts of llm-a: 1 new, 0 replaced\n"
    )
    assert RaterLabel.objects.get().claim == claim_at("hm-2-a", 1)


def test_import_verdicts_command_reports_the_line_and_imports_nothing(handmade, tmp_path):
    path = tmp_path / "judge.jsonl"
    path.write_bytes(
        _file(
            {"judge": "llm-a", "answer_id": "hm-2-a", "claim_index": 1, "judgment": "unclear"},
            {"judge": "llm-a", "answer_id": "hm-9-z", "claim_index": 0, "judgment": "unclear"},
        )
    )

    with pytest.raises(CommandError) as error:
        call_command("import_verdicts", str(path), "--set", "Calibration")

    assert str(error.value) == (
        "judge.jsonl: line 2: answer_id: no answer 'hm-9-z' in set 'Calibration' "
        "(nothing was imported)"
    )
    assert RaterLabel.objects.count() == 0
    with pytest.raises(CommandError) as missing:
        call_command("import_verdicts", str(path), "--set", "Nope")
    assert str(missing.value) == "No audit set named “Nope”."


def test_verdict_upload_over_the_web_limit_is_refused_and_writes_nothing(
    client_for, handmade, lead, settings
):
    settings.WEB_IMPORT_MAX_VERDICTS = 2
    verdicts = [
        {"judge": "llm-a", "answer_id": "hm-1-a", "claim_index": i, "judgment": "supported"}
        for i in range(3)
    ]
    batches = ImportBatch.objects.count()

    response = client_for(lead).post(
        reverse("audit:verdicts-upload", args=[handmade.pk]),
        {"file": SimpleUploadedFile("v.jsonl", _file(*verdicts))},
    )

    assert response.status_code == 400
    assert response.context["error"] == (
        "v.jsonl: line 3: the file holds more than 2 verdicts, the most one import here may "
        "bring. Import it on the server instead, where there is no such limit: "
        "python manage.py import_verdicts FILE --set NAME"
    )
    assert (RaterLabel.objects.count(), ImportBatch.objects.count()) == (0, batches)
