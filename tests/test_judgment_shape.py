"""The shape of a judgment, defined once in audit.judgments: the evidence key format, the
checks and limits, and the models, forms and records built from it."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.http import QueryDict
from hypothesis import given
from hypothesis import strategies as st

from audit import agreement, judgments
from audit.formats import labelled
from audit.forms import AdjudicationForm, SheetForm
from audit.judgments import (
    EvidenceRef,
    JudgmentData,
    JudgmentError,
    checked_assertions,
    checked_evidence,
    evidence_key,
    evidence_spans,
    judgment_problems,
    parse_evidence_key,
)
from audit.models import Adjudication, AuditSheet, Judgment, JudgmentFields, Rater, Severity
from audit.services import ReviewError


@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6))
def test_an_evidence_key_parses_back_to_its_span(passage, start, end):
    assert parse_evidence_key(evidence_key(passage, start, end)) == EvidenceRef(
        passage=passage, start=start, end=end
    )


@pytest.mark.parametrize("value", ["", "1:2", "1:2:3:4", "a:1:2", "1:2:x", None])
def test_a_value_that_names_no_span_is_refused_with_its_text(value):
    with pytest.raises(ValueError) as failure:
        parse_evidence_key(value)
    assert str(failure.value) == f"Not an evidence span: {value!r}."


def test_evidence_spans_keeps_only_the_keys_that_name_a_span():
    assert evidence_spans(["1:0:5", "junk", "2:3:9", "1:0:5"]) == {(1, 0, 5), (2, 3, 9)}


def test_checked_evidence_cuts_the_text_from_the_passage_and_sorts_by_key():
    passages = {1: "Alpha beta. Gamma.", 2: "Delta."}
    refs = [EvidenceRef(2, 0, 6), EvidenceRef(1, 12, 18, text="Gamma."), EvidenceRef(2, 0, 6)]
    assert checked_evidence(refs, passages) == [
        {"passage": 1, "start": 12, "end": 18, "text": "Gamma."},
        {"passage": 2, "start": 0, "end": 6, "text": "Delta."},
    ]


@pytest.mark.parametrize(
    ("refs", "message"),
    [
        ([EvidenceRef(3, 0, 1)], "The answer has no passage [3]."),
        ([EvidenceRef(1, 4, 40)], "Evidence offsets 4–40 are outside [1]."),
        ([EvidenceRef(1, 0, 5, text="Beta.")], "Evidence text does not match passage [1]."),
        ([EvidenceRef(1, 0, 1)] * 201, "At most 200 evidence sentences."),
    ],
)
def test_checked_evidence_refuses_a_span_it_cannot_find(refs, message):
    with pytest.raises(JudgmentError) as failure:
        checked_evidence(refs, {1: "Alpha beta."})
    assert str(failure.value) == message


def test_assertions_are_trimmed_kept_once_and_limited():
    assert checked_assertions([" a ", "", "b", "a"], "claim") == [
        {"text": "a", "start": None, "end": None, "note": ""},
        {"text": "b", "start": None, "end": None, "note": ""},
    ]
    with pytest.raises(JudgmentError) as failure:
        checked_assertions([f"x{i}" for i in range(51)], "claim")
    assert str(failure.value) == "At most 50 unsupported assertions."


@pytest.mark.parametrize(
    ("judgment", "evidence", "wrong", "problems"),
    [
        ("", [], None, ["Choose a judgment."]),
        (
            judgments.PARTIAL,
            [],
            None,
            ["“Partially supported” needs at least one evidence sentence."],
        ),
        (
            judgments.WRONG_CITATION,
            [],
            None,
            ["“Wrong citation” needs the passage that does support the claim."],
        ),
        (
            judgments.WRONG_CITATION,
            [],
            1,
            ["Passage [1] is already cited; choose an uncited passage for “Wrong citation”."],
        ),
        (judgments.WRONG_CITATION, [], 2, []),
        (judgments.NOT_SUPPORTED, [], None, []),
    ],
)
def test_judgment_problems_without_a_database(judgment, evidence, wrong, problems):
    assert (
        judgment_problems(
            judgment=judgment, evidence=evidence, wrong_citation_passage=wrong, cited=[1]
        )
        == problems
    )


def test_a_judgment_error_is_a_review_error_for_the_views():
    assert ReviewError is JudgmentError


def test_model_choices_are_built_from_the_vocabularies():
    assert Judgment.choices == list(judgments.JUDGMENTS)
    assert Adjudication.Reason.choices == list(judgments.REASONS)
    assert Adjudication.Source.choices == list(judgments.GOLD_SOURCES)
    assert Severity.choices == [(value, label) for _, value, label in judgments.SEVERITIES]
    assert (Severity.ASSERTIONS, Severity.CONFIRM) == (4, 5)
    assert AuditSheet.Status.choices == list(judgments.SHEET_STATUSES)
    assert Rater.Kind.choices == list(judgments.RATER_KINDS)
    assert [(s.name, s.value) for s in agreement.Severity] == [
        (name, value) for name, value, _ in judgments.SEVERITIES[:5]
    ]


def test_sheet_and_gold_share_one_abstract_model_with_the_judgments_fields():
    shared = [f.name for f in JudgmentFields._meta.get_fields()]
    assert shared == list(judgments.FIELDS)
    assert issubclass(AuditSheet, JudgmentFields)
    assert issubclass(Adjudication, JudgmentFields)
    # Gold always has a judgment; a draft sheet may not.
    assert AuditSheet._meta.get_field("judgment").blank is True
    assert Adjudication._meta.get_field("judgment").blank is False


def test_the_export_records_share_one_judged_shape():
    names = list(labelled.Judged.__dataclass_fields__)
    assert names == list(judgments.FIELDS)
    assert issubclass(labelled.Sheet, labelled.Judged)
    assert issubclass(labelled.Gold, labelled.Judged)


@pytest.mark.django_db
def test_the_models_need_no_migration():
    out = io.StringIO()
    call_command("makemigrations", "audit", "--check", "--dry-run", stdout=out)
    assert out.getvalue() == "No changes detected in app 'audit'\n"


def test_the_review_and_adjudication_forms_read_a_judgment_the_same_way():
    post = QueryDict(mutable=True)
    post.update(
        {
            "version": "1",
            "judgment": judgments.WRONG_CITATION,
            "wrong_citation_passage": "2",
            "unsupported_assertions": "four weeks\nfull pay",
        }
    )
    post.setlist("evidence", ["2:0:9", "1:3:8"])
    sheet_form = SheetForm(post, passage_positions=[1, 2])
    gold_form = AdjudicationForm(post, passage_positions=[1, 2])
    assert sheet_form.is_valid(), sheet_form.errors
    assert gold_form.is_valid(), gold_form.errors
    expected = JudgmentData(
        judgment=judgments.WRONG_CITATION,
        evidence=(EvidenceRef(2, 0, 9), EvidenceRef(1, 3, 8)),
        wrong_citation_passage=2,
        verification_worthy=False,
        unsupported_assertions=("four weeks", "full pay"),
    )
    assert sheet_form.sheet_data() == expected
    assert gold_form.gold_data() == expected


def test_a_posted_value_that_names_no_span_is_a_form_error():
    form = SheetForm({"version": "1", "evidence": ["1:2"]}, passage_positions=[1])
    assert form.is_valid() is False
    assert form.errors["evidence"] == ["Not an evidence span: '1:2'."]
