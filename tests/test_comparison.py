from __future__ import annotations

import pytest

from audit.comparison import (
    BECAME_SUPPORTED,
    CHANGED,
    NEWLY_JUDGED,
    NOT_JUDGED,
    STOPPED_SUPPORTED,
    UNCHANGED,
    MetricDelta,
    RunClaim,
    compare_runs,
    match_claims,
    similarity,
)
from audit.judgments import CONTRADICTED, NOT_SUPPORTED, PARTIAL, SUPPORTED
from audit.metrics import ClaimLabel


def claim(claim_id: int, question: str, text: str, judgment: str | None, **fields) -> RunClaim:
    defaults = {"answer_id": claim_id // 100, "system": "run", "citations": (1,)}
    label = ClaimLabel(claim_id=claim_id, judgment=judgment, **(defaults | fields))
    return RunClaim(question_id=question, text=text, label=label)


RUN_A = [
    claim(101, "q1", "Employees get 25 days of annual leave.", NOT_SUPPORTED),
    claim(102, "q1", "Leave requests go to the line manager.", SUPPORTED),
    claim(103, "q1", "Unused leave expires in March.", SUPPORTED),
    claim(201, "q2", "Overtime is paid at 1.5 times the hourly rate.", PARTIAL),
    claim(202, "q2", "Night shifts carry a 20% bonus.", SUPPORTED),
]
RUN_B = [
    claim(1101, "q1", "Annual leave for employees is 25 days.", SUPPORTED),
    claim(1102, "q1", "Leave requests go to your line manager.", PARTIAL),
    claim(1103, "q1", "Part-time staff get leave pro rata.", SUPPORTED),
    claim(1201, "q2", "Overtime is paid at 1.5 times the hourly rate.", CONTRADICTED),
    claim(1202, "q2", "Night shifts carry a 20% bonus.", SUPPORTED),
]


def test_claims_are_paired_by_question_and_text_with_their_status():
    comparison = compare_runs(RUN_A, RUN_B)

    assert [(p.a.claim_id, p.b.claim_id, p.status) for p in comparison.pairs] == [
        (101, 1101, BECAME_SUPPORTED),
        (102, 1102, STOPPED_SUPPORTED),
        (201, 1201, CHANGED),
        (202, 1202, UNCHANGED),
    ]
    assert [c.claim_id for c in comparison.appeared] == [1103]
    assert [c.claim_id for c in comparison.vanished] == [103]
    assert [p.b.claim_id for p in comparison.with_status(BECAME_SUPPORTED)] == [1101]


def test_word_order_case_and_punctuation_do_not_matter():
    assert similarity("In 2024 the rate was 5%.", "the rate was 5% in 2024") == 100.0


def test_same_text_under_another_question_is_not_a_match():
    pairs, appeared, vanished = match_claims(
        [claim(1, "q1", "The notice period is one month.", SUPPORTED)],
        [claim(2, "q2", "The notice period is one month.", SUPPORTED)],
    )

    assert pairs == ()
    assert [c.claim_id for c in appeared] == [2]
    assert [c.claim_id for c in vanished] == [1]


def test_pairs_below_the_threshold_stay_unmatched():
    a = [claim(1, "q1", "Sick pay starts on day one.", SUPPORTED)]
    b = [claim(2, "q1", "Sick pay starts on the fourth day.", SUPPORTED)]
    score = similarity(a[0].text, b[0].text)

    assert len(match_claims(a, b, threshold=score)[0]) == 1
    assert match_claims(a, b, threshold=score + 0.1)[0] == ()


def test_matching_is_one_to_one_and_takes_the_best_pair_first():
    # Both B claims resemble A's first claim; the identical one wins it, and the other is
    # left for A's second claim only if it clears the threshold (it does not).
    a = [
        claim(1, "q1", "The probation period lasts six months.", SUPPORTED),
        claim(2, "q1", "Contracts are signed on the first day.", SUPPORTED),
    ]
    b = [
        claim(3, "q1", "The probation period lasts three months.", SUPPORTED),
        claim(4, "q1", "The probation period lasts six months.", SUPPORTED),
    ]

    pairs, appeared, vanished = match_claims(a, b)

    assert [(p.a.claim_id, p.b.claim_id, p.score) for p in pairs] == [(1, 4, 100.0)]
    assert [c.claim_id for c in appeared] == [3]
    assert [c.claim_id for c in vanished] == [2]


def test_metric_deltas_are_b_minus_a():
    comparison = compare_runs(RUN_A, RUN_B, name_a="v1", name_b="v2")
    deltas = {d.name: d for d in comparison.deltas}

    # A: 3 of 5 fully supported; B: 3 of 5 as well, with one contradiction.
    assert (comparison.summary_a.key, comparison.summary_b.key) == ("v1", "v2")
    assert deltas["supported_share"] == MetricDelta(
        "supported_share", "Claims fully supported by their own citations", 0.6, 0.6, 0.0
    )
    assert deltas["contradicted"].a == 0
    assert deltas["contradicted"].b == 1
    assert deltas["contradicted"].delta == 1
    # Answers 1 and 2 in A score 2/3 and 1/2; answers 11 and 12 in B score 2/3 and 1/2.
    assert deltas["citation_recall"].delta == pytest.approx(0.0)
    assert comparison.provisional is False


def test_undefined_metrics_give_no_delta():
    a = [claim(1, "q1", "Uncited statement.", NOT_SUPPORTED, citations=(), uncited=True)]
    b = [claim(2, "q1", "Uncited statement.", SUPPORTED, provisional=True)]

    comparison = compare_runs(a, b)
    precision = next(d for d in comparison.deltas if d.name == "citation_precision")

    assert (precision.a, precision.b, precision.delta) == (None, 1.0, None)
    assert comparison.pairs[0].status == BECAME_SUPPORTED
    assert comparison.provisional is True


def test_empty_runs_compare_to_nothing():
    comparison = compare_runs([], [])

    assert (comparison.pairs, comparison.appeared, comparison.vanished) == ((), (), ())
    assert all(d.delta in (None, 0) for d in comparison.deltas)


def test_a_paraphrase_with_the_same_figures_is_paired():
    # handmade v1 and v2 of question hm-1 (fixtures/demo/handmade.jsonl).
    full_time = "Full-time employees receive 25 days of paid annual leave per year."
    a = [
        claim(1, "hm-1", full_time, None),
        claim(2, "hm-1", "Part-time staff receive leave pro rata.", None),
        claim(3, "hm-1", "Unused leave of up to 5 days may be carried over.", None),
    ]
    b = [
        claim(11, "hm-1", "Full-time staff get 25 days of paid leave a year.", None),
        claim(12, "hm-1", "Up to 5 unused days can be carried over.", None),
    ]

    pairs, appeared, vanished = match_claims(a, b)

    assert [(p.a.claim_id, p.b.claim_id) for p in pairs] == [(1, 11), (3, 12)]
    assert appeared == ()
    assert [c.claim_id for c in vanished] == [2]


def test_claims_sharing_words_but_not_the_statement_are_not_paired():
    a = [claim(1, "q1", "Unused leave of up to 5 days may be carried over.", None)]
    b = [claim(2, "q1", "Full-time staff get 25 days of paid leave a year.", None)]

    assert match_claims(a, b)[0] == ()


def test_same_figures_raise_similarity_and_other_figures_do_not():
    same = similarity("Staff get 25 days of leave.", "Employees get 25 days of leave.")
    other = similarity("Staff get 25 days of leave.", "Employees get 20 days of leave.")

    assert same - other > 10


def test_claims_of_a_question_run_b_never_answered_are_not_vanished():
    a = [
        claim(1, "q1", "Sick pay starts on day one.", SUPPORTED),
        claim(2, "q2", "Overtime is paid at 1.5 times the rate.", SUPPORTED),
    ]
    b = [
        claim(11, "q1", "Sick pay starts on day one.", SUPPORTED),
        claim(12, "q3", "Remote work abroad is allowed for 30 days.", SUPPORTED),
    ]

    comparison = compare_runs(a, b)

    assert comparison.vanished == ()
    assert comparison.appeared == ()
    assert [c.claim_id for c in comparison.unanswered_by_b] == [2]
    assert [c.claim_id for c in comparison.unanswered_by_a] == [12]


def test_a_question_answered_without_claims_still_counts_as_answered():
    a = [claim(1, "q1", "Sick pay starts on day one.", SUPPORTED)]

    comparison = compare_runs(a, [], questions_a={"q1"}, questions_b={"q1"})

    assert [c.claim_id for c in comparison.vanished] == [1]
    assert comparison.unanswered_by_b == ()


@pytest.mark.parametrize(
    ("judgment_a", "judgment_b", "status"),
    [
        (None, SUPPORTED, NEWLY_JUDGED),
        (None, NOT_SUPPORTED, NEWLY_JUDGED),
        (SUPPORTED, None, NOT_JUDGED),
        (None, None, NOT_JUDGED),
        (NOT_SUPPORTED, CONTRADICTED, CHANGED),
        (PARTIAL, PARTIAL, UNCHANGED),
    ],
)
def test_a_judgment_changes_only_when_both_sides_are_judged(judgment_a, judgment_b, status):
    pairs, _, _ = match_claims(
        [claim(1, "q1", "Sick pay starts on day one.", judgment_a)],
        [claim(2, "q1", "Sick pay starts on day one.", judgment_b)],
    )

    assert [p.status for p in pairs] == [status]
