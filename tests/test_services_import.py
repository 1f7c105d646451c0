import json

import pytest

from audit.formats import FormatError, parse_file
from audit.models import Answer, Claim, ClaimCheck, Passage, Question, RaterLabel
from audit.services import answers_import
from tests.conftest import FIXTURES, import_file

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
