from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.criteria import (
    AnsweringClaimsBacked,
    CriteriaError,
    CriterionResult,
    Decision,
    MaxWrongCitations,
    MinSupportedShare,
    NoContradicted,
    NoUnsupportedNumbers,
    NumbersGrounded,
    Outcome,
    UncitedOnlyIfNotWorthy,
    criteria_from_dicts,
    criteria_to_dicts,
    criterion_from_dict,
    decide_counts,
    evaluate,
    evaluate_by_system,
)
from audit.forms import CriteriaForm
from audit.judgments import (
    CONTRADICTED,
    INACCESSIBLE,
    JUDGMENT_CODES,
    NOT_SUPPORTED,
    PARTIAL,
    SUPPORTED,
    WRONG_CITATION,
)
from audit.metrics import ClaimLabel, release_counts, release_flags, summarize_claims


def label(claim_id: int, **fields) -> ClaimLabel:
    defaults = {"answer_id": 1, "system": "s1", "judgment": SUPPORTED, "citations": (1,)}
    return ClaimLabel(claim_id=claim_id, **(defaults | fields))


def test_no_contradicted_passes_without_contradictions():
    result = NoContradicted().check([label(1), label(2, judgment=PARTIAL)])

    assert result == CriterionResult(
        NoContradicted(), True, "No contradicted claim among 2 claims.", ()
    )


def test_no_contradicted_fails_with_the_contradicted_claims():
    claims = [label(1, judgment=CONTRADICTED), label(2), label(3, judgment=CONTRADICTED)]

    result = NoContradicted().check(claims)

    assert (result.passed, result.failing_claim_ids) == (False, (1, 3))
    assert result.detail == "2 contradicted claims."


def test_no_contradicted_on_high_risk_topics_ignores_other_answers():
    criterion = NoContradicted(topics=frozenset({"Pay", " leave "}))
    claims = [
        label(1, judgment=CONTRADICTED, topics=frozenset({"holidays"})),
        label(2, judgment=CONTRADICTED, topics=frozenset({"PAY", "benefits"})),
        label(3, judgment=SUPPORTED, topics=frozenset({"leave"})),
    ]

    result = criterion.check(claims)

    assert (result.passed, result.failing_claim_ids) == (False, (2,))
    assert result.detail == "1 contradicted claim in answers tagged leave or pay."
    assert criterion.check(claims[:1] + claims[2:]).detail == (
        "No contradicted claim among 1 claim in answers tagged leave or pay."
    )


def test_numbers_grounded_fails_on_any_worthy_claim_with_an_ungrounded_number():
    claims = [
        label(1, ungrounded_numbers=2, judgment=NOT_SUPPORTED),
        label(2, ungrounded_numbers=1),
        label(3, ungrounded_numbers=4, verification_worthy=False),
        label(4),
    ]

    result = NumbersGrounded().check(claims)

    assert (result.passed, result.failing_claim_ids) == (False, (1, 2))
    assert result.detail == "2 claims with 3 numbers not found in the cited passages."


def test_numbers_grounded_only_for_supported_claims():
    claims = [label(1, ungrounded_numbers=2, judgment=NOT_SUPPORTED), label(2)]

    result = NumbersGrounded(only_supported=True).check(claims)

    assert result == CriterionResult(
        NumbersGrounded(only_supported=True),
        True,
        "Every number is found in the cited passages.",
        (),
    )


def test_min_supported_share_passes_exactly_at_the_threshold():
    # 4 of 5 worthy claims, the uncited one counting against; the unworthy one left out.
    claims = [
        label(1),
        label(2),
        label(3),
        label(4),
        label(5, citations=(), uncited=True),
        label(6, judgment=NOT_SUPPORTED, verification_worthy=False),
    ]

    result = MinSupportedShare(percent=80).check(claims)

    assert result.passed is True
    assert result.detail == "4 of 5 claims fully supported (80%), at least 80%."
    assert result.failing_claim_ids == ()


def test_min_supported_share_fails_with_the_claims_not_fully_supported():
    claims = [label(1), label(2, judgment=PARTIAL), label(3, citations=(), uncited=True)]

    result = MinSupportedShare(percent=50).check(claims)

    assert result.passed is False
    assert result.detail == "1 of 3 claims fully supported (33.3%), below 50%."
    assert result.failing_claim_ids == (2, 3)


def test_min_supported_share_fails_when_there_is_nothing_to_measure():
    result = MinSupportedShare(percent=0).check([label(1, verification_worthy=False)])

    assert (result.passed, result.detail) == (False, "No verification-worthy claim to measure.")


def test_uncited_claims_allowed_only_when_not_worthy():
    claims = [
        label(1, citations=(), uncited=True, verification_worthy=False),
        label(2, citations=(), uncited=True),
        label(3),
    ]

    assert UncitedOnlyIfNotWorthy().check(claims[:1] + claims[2:]).passed is True
    result = UncitedOnlyIfNotWorthy().check(claims)
    assert (result.passed, result.failing_claim_ids) == (False, (2,))
    assert result.detail == "1 uncited claim marked verification-worthy."


def test_max_wrong_citations_counts_judgments_and_named_passages():
    claims = [
        label(1, judgment=WRONG_CITATION),
        label(2, judgment=NOT_SUPPORTED, wrong_citation_passage=3),
        label(3),
    ]

    passing = MaxWrongCitations(limit=2).check(claims)
    failing = MaxWrongCitations(limit=1).check(claims)

    assert (passing.passed, passing.failing_claim_ids) == (True, ())
    assert passing.detail == "2 wrong citations, at most 2 allowed."
    assert (failing.passed, failing.failing_claim_ids) == (False, (1, 2))


def test_descriptions_read_as_sentences():
    criteria = [
        NoContradicted(),
        NoContradicted(topics=frozenset({"termination", "pay", "leave"})),
        NumbersGrounded(),
        NumbersGrounded(only_supported=True),
        MinSupportedShare(percent=82.5),
        UncitedOnlyIfNotWorthy(),
        MaxWrongCitations(limit=1),
        MaxWrongCitations(limit=0),
    ]

    assert [c.describe() for c in criteria] == [
        "No contradicted claim.",
        "No contradicted claim in answers tagged leave, pay or termination.",
        "Every number in a verification-worthy claim is found in its cited passages.",
        "Every number in a claim judged supported is found in its cited passages.",
        "At least 82.5% of claims fully supported by their own citations "
        "(claims marked not verification-worthy, or whose source was inaccessible, left out).",
        "Uncited claims only where marked not verification-worthy.",
        "At most 1 wrong citation.",
        "At most 0 wrong citations.",
    ]


def test_criteria_round_trip_through_json():
    data = [
        {"kind": "no_contradicted", "topics": ["pay", "leave"]},
        {"kind": "numbers_grounded", "only_supported": True},
        {"kind": "min_supported_share", "percent": 90},
        {"kind": "uncited_only_if_not_worthy"},
        {"kind": "max_wrong_citations", "limit": 0},
    ]

    criteria = criteria_from_dicts(json.loads(json.dumps(data)))

    assert criteria == (
        NoContradicted(topics=frozenset({"pay", "leave"})),
        NumbersGrounded(only_supported=True),
        MinSupportedShare(percent=90),
        UncitedOnlyIfNotWorthy(),
        MaxWrongCitations(limit=0),
    )
    assert criteria_from_dicts(criteria_to_dicts(criteria)) == criteria
    assert criteria_to_dicts(criteria)[0] == {"kind": "no_contradicted", "topics": ["leave", "pay"]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"kind": "no_lies"},
            "criterion 1: unknown criterion kind 'no_lies'; expected one of "
            "answering_claims_backed, max_wrong_citations, min_supported_share, "
            "no_contradicted, no_unsupported_numbers, numbers_grounded, "
            "uncited_only_if_not_worthy",
        ),
        ("pay", "criterion 1: a criterion must be an object, got 'pay'"),
        (
            {"kind": "min_supported_share"},
            "criterion 1: min_supported_share: missing setting 'percent'",
        ),
        (
            {"kind": "min_supported_share", "percent": 120},
            "criterion 1: min_supported_share: percent must be between 0 and 100, got 120",
        ),
        (
            {"kind": "min_supported_share", "percent": "80"},
            "criterion 1: min_supported_share: percent must be a number, got '80'",
        ),
        (
            {"kind": "max_wrong_citations", "limit": -1},
            "criterion 1: max_wrong_citations: limit must be at least 0, got -1",
        ),
        (
            {"kind": "max_wrong_citations", "limit": True},
            "criterion 1: max_wrong_citations: limit must be a whole number, got True",
        ),
        (
            {"kind": "max_wrong_citations", "limit": 2, "per": "answer"},
            "criterion 1: max_wrong_citations: unknown setting 'per'; it takes limit",
        ),
        (
            {"kind": "uncited_only_if_not_worthy", "strict": True},
            "criterion 1: uncited_only_if_not_worthy: unknown setting 'strict'; it takes nothing",
        ),
        (
            {"kind": "numbers_grounded", "only_supported": "yes"},
            "criterion 1: numbers_grounded: only_supported must be true or false, got 'yes'",
        ),
        (
            {"kind": "no_contradicted", "topics": "pay"},
            "criterion 1: no_contradicted: topics must be a list of names, got 'pay'",
        ),
        (
            {"kind": "no_contradicted", "topics": ["pay", ""]},
            "criterion 1: no_contradicted: topics must be a list of non-empty names, "
            "got ['pay', '']",
        ),
    ],
)
def test_invalid_criteria_are_refused_with_a_clear_message(data, message):
    with pytest.raises(CriteriaError) as error:
        criteria_from_dicts([data])

    assert str(error.value) == message


def test_direct_construction_is_validated_too():
    with pytest.raises(CriteriaError, match="percent must be between 0 and 100, got -5"):
        MinSupportedShare(percent=-5)
    with pytest.raises(CriteriaError, match="limit must be a whole number, got 1.5"):
        criterion_from_dict({"kind": "max_wrong_citations", "limit": 1.5})


ALL_CRITERIA = (
    NoContradicted(topics=frozenset({"pay"})),
    NumbersGrounded(),
    MinSupportedShare(percent=50),
    UncitedOnlyIfNotWorthy(),
    MaxWrongCitations(limit=0),
)


def test_decision_passes_when_every_criterion_passes():
    claims = [label(1, topics=frozenset({"pay"})), label(2, judgment=PARTIAL)]

    decision = evaluate(ALL_CRITERIA, claims)

    assert (decision.system, decision.passed, decision.provisional) == ("s1", True, False)
    assert [r.passed for r in decision.results] == [True] * 5
    assert decision.failed == ()


def test_decision_fails_with_each_failed_criterion_and_is_provisional():
    claims = [
        label(1, judgment=CONTRADICTED, topics=frozenset({"pay"})),
        label(2, ungrounded_numbers=1, provisional=True),
        label(3, citations=(), uncited=True),
    ]

    decision = evaluate(ALL_CRITERIA, claims)

    assert (decision.passed, decision.provisional) == (False, True)
    assert [(r.criterion.kind, r.failing_claim_ids) for r in decision.failed] == [
        ("no_contradicted", (1,)),
        ("numbers_grounded", (2,)),
        ("min_supported_share", (1, 3)),
        ("uncited_only_if_not_worthy", (3,)),
    ]


def test_no_criteria_pass_and_an_empty_run_keeps_its_name():
    assert evaluate([], [], system="run-7") == Decision("run-7", True, False, ())


def test_evaluate_refuses_claims_of_several_systems():
    with pytest.raises(ValueError, match=r"claims of several systems \(a, b\)"):
        evaluate(ALL_CRITERIA, [label(1, system="a"), label(2, system="b")])


def test_evaluate_by_system_decides_each_run_separately():
    claims = [
        label(1, system="beta", judgment=WRONG_CITATION),
        label(2, system="alpha"),
        label(3, system="beta"),
    ]

    decisions = evaluate_by_system([MaxWrongCitations(limit=0)], claims)

    assert list(decisions) == ["alpha", "beta"]
    assert (decisions["alpha"].passed, decisions["beta"].passed) == (True, False)
    assert decisions["beta"].failed[0].failing_claim_ids == (1,)


def test_a_percent_over_100_gets_one_error_not_also_a_missing_one():
    form = CriteriaForm({"min_supported_share": "on", "min_supported_share_percent": "150"})

    assert form.errors == {
        "min_supported_share_percent": ["Ensure this value is less than or equal to 100."]
    }


def test_a_negative_limit_gets_one_error_not_also_a_missing_one():
    form = CriteriaForm({"max_wrong_citations": "on", "max_wrong_citations_limit": "-1"})

    assert form.errors == {
        "max_wrong_citations_limit": ["Ensure this value is greater than or equal to 0."]
    }


def test_numbers_grounded_passes_a_claim_whose_number_check_a_lead_overrode():
    claims = [
        label(1, ungrounded_numbers=1, numbers_overridden=True),
        label(2, ungrounded_numbers=2, judgment=NOT_SUPPORTED),
    ]

    result = NumbersGrounded().check(claims)

    assert (result.passed, result.failing_claim_ids) == (False, (2,))
    assert result.detail == (
        "1 claim with 2 numbers not found in the cited passages. "
        "Number check overridden by a lead for 1 claim."
    )
    assert NumbersGrounded().check(claims[:1]) == CriterionResult(
        NumbersGrounded(),
        True,
        "Every number is found in the cited passages. "
        "Number check overridden by a lead for 1 claim.",
        (),
    )


# Counts decide as the labels do ----------------------------------------------------------

_labels = st.builds(
    ClaimLabel,
    claim_id=st.integers(0, 1000),
    answer_id=st.integers(0, 4),
    system=st.just("s1"),
    judgment=st.sampled_from([*JUDGMENT_CODES, None]),
    provisional=st.booleans(),
    verification_worthy=st.booleans(),
    citations=st.lists(st.integers(1, 3), max_size=2).map(tuple),
    wrong_citation_passage=st.none() | st.integers(1, 3),
    ungrounded_numbers=st.integers(0, 2),
    numbers_overridden=st.booleans(),
    topics=st.frozensets(st.sampled_from(["Pay", "pay", "leave", " HR"])),
    uncited=st.booleans(),
    answers_question=st.booleans(),
    unsupported=st.lists(st.sampled_from(["14 days", "business", "in May", "four weeks"])).map(
        tuple
    ),
)
_criteria = st.one_of(
    st.builds(NoContradicted, topics=st.frozensets(st.sampled_from(["pay", "Leave ", "hr"]))),
    st.builds(NumbersGrounded, only_supported=st.booleans()),
    st.builds(MinSupportedShare, percent=st.sampled_from([0, 50, 80, 100, 33.3])),
    st.just(UncitedOnlyIfNotWorthy()),
    st.builds(MaxWrongCitations, limit=st.integers(0, 3)),
    st.just(AnsweringClaimsBacked()),
    st.just(NoUnsupportedNumbers()),
)


@given(st.lists(_labels, max_size=12), st.lists(_criteria, max_size=4), st.integers(0, 12))
def test_counts_of_stored_flags_decide_exactly_as_the_claims_do(labels, criteria, cut):
    # The set page decides from sums of per-claim flags, summed in any grouping.
    flags = [release_flags(claim) for claim in labels]
    counts = release_counts(flags[:cut]) + release_counts(flags[cut:])
    decision = evaluate(criteria, labels, system="s1")
    summary = summarize_claims(labels)

    for criterion in criteria:
        result = criterion.check(labels)
        assert criterion.passes(counts) == result.passed, criterion
        # What check names agrees with the rule: a failing criterion names a failing claim,
        # unless the share has nothing to measure; one that passes names none.
        nothing_to_measure = isinstance(criterion, MinSupportedShare) and counts.verifiable == 0
        if result.passed:
            assert result.failing_claim_ids == (), criterion
        elif not nothing_to_measure:
            assert result.failing_claim_ids != (), criterion
    assert decide_counts(criteria, counts) == Outcome(decision.passed, decision.provisional)
    assert (counts.claims, counts.supported, counts.verifiable, counts.provisional) == (
        summary.claims,
        summary.supported,
        summary.verifiable,
        summary.provisional,
    )
    assert counts.wrong_citations == summary.wrong_citations
    assert counts.contradicted_in() == summary.contradicted
    assert counts.inaccessible == summary.inaccessible


def test_a_claim_answering_the_question_fails_the_release_naming_its_unsupported_words():
    claims = [
        label(1, judgment=PARTIAL, answers_question=True, unsupported=("within 30 days",)),
        label(2, judgment=SUPPORTED, answers_question=True),
        label(3, judgment=NOT_SUPPORTED),  # not marked: the share's business, not this one's
    ]

    result = AnsweringClaimsBacked().check(claims)

    assert (result.passed, result.failing_claim_ids) == (False, (1,))
    assert result.detail == "1 claim that answers the question not backed by its sources."
    assert result.reasons == ((1, "partially supported; unsupported: “within 30 days”"),)
    assert AnsweringClaimsBacked().check(claims[1:]).detail == (
        "Every claim that answers the question is backed (1 marked)."
    )


def test_an_unsupported_number_or_date_fails_but_other_words_do_not():
    claims = [
        label(1, judgment=PARTIAL, unsupported=("business customers", "14 days")),
        label(2, judgment=PARTIAL, unsupported=("in the spring",)),
        label(3, judgment=PARTIAL, unsupported=("since March",), verification_worthy=False),
        label(4, judgment=NOT_SUPPORTED, unsupported=("four weeks",)),
    ]

    result = NoUnsupportedNumbers().check(claims)

    assert result.failing_claim_ids == (1, 4)
    assert result.reasons == (
        (1, "partially supported; unsupported: “14 days”"),
        (4, "not supported; unsupported: “four weeks”"),
    )


def test_inaccessible_sources_are_counted_apart_from_the_supported_share():
    claims = [
        label(1, judgment=SUPPORTED, citations=(1,)),
        label(2, judgment=INACCESSIBLE, citations=(1,)),
        label(3, judgment=NOT_SUPPORTED, citations=(1,)),
    ]

    summary = summarize_claims(claims)

    assert (summary.supported_text, summary.inaccessible) == ("1 of 2", 1)
    assert MinSupportedShare(percent=50).check(claims).passed
