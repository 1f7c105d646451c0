import json

import pytest
from django.urls import reverse

from audit import services
from audit.models import Answer, Claim
from tests.conftest import import_file

pytestmark = pytest.mark.django_db


def test_answer_page_links_markers_to_passages_and_flags_unknown(client_for, lead, handmade):
    answer = Answer.objects.get(external_id="hm-5-a")

    response = client_for(lead).get(answer.get_absolute_url())

    body = response.content.decode()
    assert response.status_code == 200
    assert '<a href="#passage-2">2</a>' in body
    assert "no passage 4 was supplied" in body
    assert "cites [4], never supplied" in body
    assert 'id="passage-1"' in body and 'id="passage-2"' in body


def test_answer_page_flags_uncited_claims(client_for, lead, handmade):
    answer = Answer.objects.get(external_id="hm-1-a")

    body = client_for(lead).get(answer.get_absolute_url()).content.decode()

    assert body.count('<span class="flag uncited">uncited</span>') == 1
    assert 'class="claim uncited"' in body


def test_answer_page_shows_number_checks(client_for, lead, handmade):
    answer = Answer.objects.get(external_id="hm-2-a")

    body = client_for(lead).get(answer.get_absolute_url()).content.decode()

    assert '<span class="num-token ungrounded"' in body
    assert "7,5 ✗" in body


def test_untrusted_text_is_escaped_everywhere(client_for, lead, audit_set, tmp_path):
    payload = '<script>window.__xss=1</script><img src=x onerror="alert(1)">'
    line = {
        "question_id": "x1",
        "question": payload,
        "system": payload,
        "answer": f"Claim with {payload} inside [1].",
        "passages": [{"title": payload, "url": "javascript:alert(1)", "text": payload}],
    }
    path = tmp_path / "xss.jsonl"
    path.write_text(json.dumps(line) + "\n")
    import_file(audit_set, path)
    answer = Answer.objects.get()

    body = client_for(lead).get(answer.get_absolute_url()).content.decode()

    assert "<script>window.__xss" not in body
    assert "<img src=x" not in body
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in body
    assert 'href="javascript:' not in body


def test_evidence_table_verifies_quotations_in_the_answer(client_for, lead, handmade):
    answer = Answer.objects.get(external_id="hm-6-a")

    response = client_for(lead).get(answer.get_absolute_url())

    rows = [
        (r.claim, r.passage, r.kind, r.verified, r.match) for r in response.context["evidence_rows"]
    ]
    assert rows == [(1, 1, "answer", True, 1.0), (2, 1, "answer", False, 0.167)]


WORD_MATCH_90 = (
    '<span class="match-score" title="Share of the claim’s content words found in one cited '
    'sentence together with its neighbour; the label’s thresholds apply to this number.">'
    'word match 90%</span> <span class="muted match-why">(every word of the claim in one cited '
    "sentence, every number found)</span>"
)


def test_answer_review_and_adjudication_pages_show_the_same_labelled_score(
    client_for, lead, reviewer_a, reviewer_b, handmade
):
    # The demo's claim 111: its best sentence ranks 0.65 and covers 91% of the claim's words
    # (0.9091 stored), which is what makes it verified.
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    claim = Claim.objects.get(answer__external_id="hm-1-a", order=0)
    assert (claim.machine_check.best_score, claim.machine_check.highlights[0]["score"]) == (
        0.9091,
        0.6547,
    )

    answer_page = client_for(lead).get(claim.answer.get_absolute_url()).text
    review_page = client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk])).text
    adjudication_page = client_for(lead).get(reverse("audit:adjudicate", args=[claim.pk])).text

    assert answer_page.count(WORD_MATCH_90) == 1
    assert review_page.count(WORD_MATCH_90) == 1
    assert adjudication_page.count(WORD_MATCH_90) == 1
    for page in (answer_page, review_page, adjudication_page):
        assert "0.65" not in page
        assert "0.91" not in page


def test_answer_page_flags_an_answer_no_citation_verifies(client_for, lead, reviewer_a, opened):
    flagged = Answer.objects.get(external_id="hm-5-a")
    fine = Answer.objects.get(external_id="hm-1-a")

    for user in (lead, reviewer_a):
        body = client_for(user).get(flagged.get_absolute_url()).content.decode()
        assert "No citation verifies: answered without sources?</span>" in body
    assert (
        "No citation verifies" not in client_for(lead).get(fine.get_absolute_url()).content.decode()
    )


def test_review_and_adjudication_pages_show_the_words_that_differ_from_the_source(
    client_for, lead, reviewer_a, reviewer_b, handmade
):
    # "Up to 5 unused days can be carried over [1]." against "… may be carried over …":
    # every word found but the modal, so the page names can/may instead of a match.
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    claim = Claim.objects.get(answer__external_id="hm-1-b", order=1)
    assert claim.machine_check.best_score == 1.0
    assert claim.machine_check.label == "likely"
    close = Claim.objects.get(answer__external_id="hm-1-a", order=0)

    review_page = client_for(reviewer_a).get(reverse("audit:review-claim", args=[claim.pk])).text
    adjudication_page = client_for(lead).get(reverse("audit:adjudicate", args=[claim.pk])).text
    row = (
        '<tr><td class="muted">modal</td><td><mark class="diff-claim">can</mark></td>'
        '<td><mark class="diff-source">may</mark></td></tr>'
    )
    for page in (review_page, adjudication_page):
        assert "Differs from the best cited sentence:" in page
        assert page.count(row) == 1
        assert "Most words found" in page
        assert ">Verified<" not in page
    # A claim every word of which is in one sentence lists no difference.
    matched = client_for(reviewer_a).get(reverse("audit:review-claim", args=[close.pk])).text
    assert "Differs from the best cited sentence" not in matched
    assert "All words found" in matched
