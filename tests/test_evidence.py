from audit.evidence import (
    ANSWER,
    VERBATIM,
    EvidenceRow,
    EvidenceSpan,
    answer_quote_spans,
    quoted_spans,
    verify_spans,
)

PASSAGES = {
    1: "The board said “revenue rose to 45.2 million dollars” in its report.",
    2: "Headcount grew to 1,204 people.",
}


def test_quoted_spans_need_two_words():
    text = 'The report said "revenue rose sharply" and called it “a record”, not "growth".'

    assert quoted_spans(text) == ["revenue rose sharply", "a record"]


def test_answer_quote_is_checked_against_the_best_cited_passage():
    spans = answer_quote_spans(1, "It said “revenue rose to 88.9 million dollars”.")

    rows = verify_spans(spans, PASSAGES, {1: [1, 2]})

    assert rows == [
        EvidenceRow(
            claim=1,
            source="answer",
            kind=ANSWER,
            passage=1,
            verified=False,
            match=0.5,
            span="revenue rose to 88.9 million dollars",
        )
    ]


def test_answer_quote_without_citations_is_not_applicable():
    spans = answer_quote_spans(2, "They wrote “growth was strong”.")

    rows = verify_spans(spans, PASSAGES, {2: []})

    assert [(r.passage, r.verified, r.match) for r in rows] == [(None, None, None)]


def test_reviewer_sentence_verifies_against_its_passage():
    span = EvidenceSpan(claim=1, source="alice", kind=VERBATIM, text=PASSAGES[2], passage=2)

    assert verify_spans([span], PASSAGES, {1: [2]})[0].verified is True


def test_span_of_a_passage_without_text_is_not_applicable():
    span = EvidenceSpan(claim=1, source="alice", kind=VERBATIM, text="anything", passage=3)

    row = verify_spans([span], {**PASSAGES, 3: ""}, {1: [3]})[0]

    assert (row.verified, row.match) == (None, None)
