from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit import judgments
from audit.judgments import (
    CONTRADICTED,
    NOT_SUPPORTED,
    PARTIAL,
    SUPPORTED,
    UNCLEAR,
    WRONG_CITATION,
)
from audit.metrics import (
    CitationFacts,
    ClaimLabel,
    JudgmentCounts,
    citation_facts,
    judgment_distribution,
    summarize,
    summarize_claims,
)


def label(claim_id: int, **fields) -> ClaimLabel:
    defaults = {
        "answer_id": 1,
        "system": "s1",
        "judgment": SUPPORTED,
        "citations": (1,),
        "evidence": ((1, 0, 10),),
    }
    return ClaimLabel(claim_id=claim_id, **(defaults | fields))


# Worked ALCE example: one answer, 3 claims, 5 citations.
#
# claim 1 cites [1][2], supported, evidence only in passage 1.
#   recall 1. [1] holds all the evidence: supports on its own, precise.
#   [2] holds none: does not support alone, and [1] still fully supports: irrelevant.
# claim 2 cites [2][3], supported, evidence in passages 2 and 3.
#   recall 1. Neither supports alone, but dropping either loses needed evidence: both precise.
# claim 3 cites [4], partially supported.
#   recall 0 (binary entailment); its citation is imprecise because the claim is unsupported.
#
# recall = (1 + 1 + 0) / 3 = 2/3; precision = 3 precise / 5 citations = 0.6.
ALCE_EXAMPLE = (
    label(1, citations=(1, 2), evidence=((1, 0, 40),)),
    label(2, citations=(2, 3), evidence=((2, 5, 30), (3, 0, 12))),
    label(3, citations=(4,), judgment=PARTIAL, evidence=((4, 0, 9),)),
)


def test_alce_worked_example_gives_two_thirds_recall_and_point_six_precision():
    summary = summarize_claims(ALCE_EXAMPLE)

    assert summary.citation_recall == pytest.approx(2 / 3)
    assert summary.citation_precision == pytest.approx(0.6)
    assert (summary.citations, summary.precise_citations) == (5, 3)


def test_alce_worked_example_per_claim_facts():
    facts = [citation_facts(claim) for claim in ALCE_EXAMPLE]

    assert facts == [
        CitationFacts(recall=1, citations=2, precise=1, irrelevant=(2,)),
        CitationFacts(recall=1, citations=2, precise=2, irrelevant=()),
        CitationFacts(recall=0, citations=1, precise=0, irrelevant=()),
    ]


def test_group_recall_and_precision_average_over_answers():
    # Answer 1 is the worked example (2/3, 0.6); answer 2 one clean claim (1, 1);
    # answer 3 one uncited claim: recall 0 and no precision at all.
    claims = [
        *ALCE_EXAMPLE,
        label(4, answer_id=2),
        label(5, answer_id=3, citations=(), evidence=(), judgment=NOT_SUPPORTED, uncited=True),
    ]

    summary = summarize_claims(claims)

    assert summary.citation_recall == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert summary.citation_precision == pytest.approx((0.6 + 1) / 2)


def test_supported_share_counts_uncited_against_and_leaves_out_not_worthy():
    claims = [
        label(1),
        label(2, judgment=NOT_SUPPORTED),
        label(3, citations=(), evidence=(), uncited=True),  # judged supported, cites nothing
        label(4, citations=(), cited_unknown=(9,), evidence=()),  # only a dangling marker
        label(5, verification_worthy=False, citations=(), uncited=True),
        label(6, verification_worthy=False),  # supported, but outside both n and m
    ]

    summary = summarize_claims(claims)

    assert (summary.supported, summary.verifiable) == (1, 4)
    assert summary.supported_text == "1 of 4"
    assert summary.supported_share == pytest.approx(0.25)


def test_supported_claim_without_evidence_credits_every_citation_and_is_counted():
    claim = label(1, citations=(1, 2, 3), evidence=())

    assert citation_facts(claim) == CitationFacts(recall=1, citations=3, precise=3, irrelevant=())
    assert summarize_claims([claim]).supported_without_evidence == 1


def test_evidence_only_in_an_uncited_passage_counts_as_no_evidence():
    claim = label(1, citations=(1, 2), evidence=((5, 0, 20),))

    assert citation_facts(claim) == CitationFacts(recall=1, citations=2, precise=2, irrelevant=())
    assert summarize_claims([claim]).supported_without_evidence == 1


def test_cited_unknown_markers_count_as_citations_but_are_never_precise():
    claim = label(1, citations=(1,), cited_unknown=(7, 8), evidence=((1, 0, 5),))

    summary = summarize_claims([claim])

    assert citation_facts(claim) == CitationFacts(recall=1, citations=3, precise=1, irrelevant=())
    assert summary.citation_recall == 1.0
    assert summary.citation_precision == pytest.approx(1 / 3)
    assert summary.cited_unknown == 2


def test_wrong_citation_scores_zero_and_every_citation_is_imprecise():
    claim = label(1, citations=(1, 2), judgment=WRONG_CITATION, wrong_citation_passage=4)

    summary = summarize_claims([claim])

    assert citation_facts(claim) == CitationFacts(recall=0, citations=2, precise=0, irrelevant=())
    assert (summary.citation_recall, summary.citation_precision) == (0.0, 0.0)
    assert summary.wrong_citations == 1


def test_partially_supported_and_unjudged_claims_score_recall_zero():
    claims = [label(1, judgment=PARTIAL), label(2, judgment=None, provisional=True)]

    assert [citation_facts(c).recall for c in claims] == [0, 0]


def test_not_worthy_claims_are_left_out_of_recall_and_precision():
    claims = [
        label(1, answer_id=1, verification_worthy=False, judgment=NOT_SUPPORTED),
        label(2, answer_id=2),
        label(3, answer_id=2, verification_worthy=False, citations=(2,), judgment=PARTIAL),
    ]

    metrics = summarize(claims)

    assert metrics.answers[1].citation_recall is None
    assert metrics.answers[1].citation_precision is None
    assert metrics.answers[2].citation_recall == 1.0
    assert metrics.answers[2].citation_precision == 1.0
    assert metrics.overall.citation_recall == 1.0


def test_problem_counts_run_over_all_claims():
    claims = [
        label(1, judgment=CONTRADICTED, ungrounded_numbers=2),
        label(2, judgment=CONTRADICTED, verification_worthy=False),
        label(3, judgment=SUPPORTED, wrong_citation_passage=3, ungrounded_numbers=1),
        label(4, judgment=WRONG_CITATION, cited_unknown=(5, 6)),
        label(5, citations=(), uncited=True, cited_unknown=(9,), provisional=True),
        label(6, citations=(), uncited=True, verification_worthy=False),
    ]

    summary = summarize_claims(claims)

    assert summary.contradicted == 2
    assert summary.wrong_citations == 2
    assert summary.ungrounded_numbers == 3
    assert summary.cited_unknown == 3
    assert summary.uncited == 2
    assert summary.provisional_claims == 1
    assert summary.provisional is True


def test_summaries_per_answer_system_and_set_carry_their_own_provisional_flag():
    claims = [
        label(1, answer_id=10, system="alpha"),
        label(2, answer_id=10, system="alpha", judgment=NOT_SUPPORTED),
        label(3, answer_id=20, system="beta", provisional=True),
        label(4, answer_id=21, system="beta"),
    ]

    metrics = summarize(claims)

    assert list(metrics.answers) == [10, 20, 21]
    assert list(metrics.systems) == ["alpha", "beta"]
    assert metrics.answers[10].supported_text == "1 of 2"
    assert [m.provisional for m in metrics.answers.values()] == [False, True, False]
    assert metrics.systems["alpha"].provisional is False
    assert metrics.systems["beta"].provisional is True
    assert metrics.systems["beta"].answers == 2
    assert metrics.overall.supported_text == "3 of 4"
    assert metrics.overall.provisional is True
    assert (metrics.overall.scope, metrics.systems["beta"].scope) == ("set", "system")


def test_empty_input_has_no_share_recall_or_precision():
    summary = summarize([]).overall

    assert (summary.supported_share, summary.citation_recall, summary.citation_precision) == (
        None,
        None,
        None,
    )
    assert summary.provisional is False


def test_claims_without_citations_have_recall_but_no_precision():
    summary = summarize_claims([label(1, citations=(), evidence=(), uncited=True)])

    assert summary.citation_recall == 0.0
    assert summary.citation_precision is None


def test_judgment_distribution_buckets_worthy_claims_per_system():
    claims = [
        label(1, system="b", judgment=SUPPORTED),
        label(2, system="b", judgment=SUPPORTED),
        label(3, system="b", judgment=PARTIAL),
        label(4, system="b", judgment=WRONG_CITATION),
        label(5, system="b", judgment=None),
        label(6, system="a", judgment=CONTRADICTED),
        label(7, system="a", judgment=NOT_SUPPORTED),
        label(8, system="a", judgment=UNCLEAR, verification_worthy=False),
        label(9, system="c", judgment=SUPPORTED, verification_worthy=False),
    ]

    distribution = judgment_distribution(claims)

    assert distribution == {
        "a": JudgmentCounts(not_supported=1, contradicted=1),
        "b": JudgmentCounts(supported=2, partial=1, other=2),
        "c": JudgmentCounts(),
    }
    assert distribution["b"].segments() == (
        ("supported", "Supported", 2, 0.4),
        ("partial", "Partially supported", 1, 0.2),
        ("not_supported", "Not supported", 0, 0.0),
        ("contradicted", "Contradicted", 0, 0.0),
        ("other", "Other", 2, 0.4),
    )
    assert [share for *_, share in distribution["c"].segments()] == [0.0] * 5


def test_labels_from_json_lists_are_normalised_and_duplicate_citations_collapse():
    claim = ClaimLabel(
        claim_id=1,
        answer_id=1,
        system="s",
        judgment=SUPPORTED,
        citations=[2, 2, 1],
        cited_unknown=[9, 9],
        evidence=[[2, 0, 4]],
        topics=["pay"],
    )

    assert claim.citations == (2, 1)
    assert claim.cited_unknown == (9,)
    assert claim.evidence == ((2, 0, 4),)
    assert claim.topics == frozenset({"pay"})
    assert citation_facts(claim) == CitationFacts(recall=1, citations=3, precise=1, irrelevant=(1,))


positions = st.integers(min_value=1, max_value=5)
labels = st.builds(
    ClaimLabel,
    claim_id=st.integers(0, 1000),
    answer_id=st.integers(0, 4),
    system=st.sampled_from(["a", "b"]),
    judgment=st.sampled_from([*judgments.JUDGMENT_CODES, None, ""]),
    provisional=st.booleans(),
    verification_worthy=st.booleans(),
    citations=st.lists(positions, max_size=4).map(tuple),
    cited_unknown=st.lists(st.integers(6, 20), max_size=2).map(tuple),
    evidence=st.lists(st.tuples(positions, st.integers(0, 50), st.integers(0, 50)), max_size=4).map(
        tuple
    ),
    wrong_citation_passage=st.none() | positions,
    ungrounded_numbers=st.integers(0, 3),
    topics=st.frozensets(st.sampled_from(["pay", "leave"])),
    uncited=st.booleans(),
)


@given(st.lists(labels, max_size=12))
def test_metrics_stay_in_range_and_are_none_only_when_undefined(claims):
    metrics = summarize(claims)

    for summary in [*metrics.answers.values(), *metrics.systems.values(), metrics.overall]:
        assert summary.supported <= summary.verifiable <= summary.claims
        assert summary.precise_citations <= summary.citations
        if summary.verifiable:
            assert 0.0 <= summary.supported_share <= 1.0
            assert summary.citation_recall is not None
        else:
            assert summary.supported_share is None
        # Recall also scores claims whose source was inaccessible (0, as ALCE would), which
        # the supported share leaves out.
        if summary.citation_recall is None:
            assert summary.verifiable == 0
        else:
            assert 0.0 <= summary.citation_recall <= 1.0
        if summary.citations:
            assert 0.0 <= summary.citation_precision <= 1.0
        else:
            assert summary.citation_precision is None
    for counts in judgment_distribution(claims).values():
        assert sum(share for *_, share in counts.segments()) == pytest.approx(
            1.0 if counts.total else 0.0
        )


def test_evidence_left_in_a_cited_passage_of_a_wrong_citation_makes_no_citation_precise():
    wrong = label(1, judgment=WRONG_CITATION, evidence=((1, 0, 10),), wrong_citation_passage=2)

    assert citation_facts(wrong) == CitationFacts(recall=0, citations=1, precise=0, irrelevant=())
    assert summarize_claims([wrong]).citation_precision == 0.0


def test_overridden_number_checks_leave_the_ungrounded_count_and_are_counted_apart():
    labels = [
        label(1, ungrounded_numbers=1, numbers_overridden=True),
        label(2, ungrounded_numbers=2),
    ]

    summary = summarize_claims(labels)

    assert (summary.ungrounded_numbers, summary.numbers_overridden) == (2, 1)
