"""Every suggestion source of a set measured against the set's gold, side by side, on the
lead's page and in the API, and the anchoring comparison of shown against withheld."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.selectors import suggestion_report
from tests.conftest import api_client
from tests.factories import (
    AuditSetFactory,
    UserFactory,
    anchoring_set,
    suggestion_gold_set,
)

N_SUPPORTED, N_NOT = 6, 4


@pytest.fixture
def gold_set(db, reviewer_a, reviewer_b):
    return suggestion_gold_set(reviewer_a, reviewer_b)


def _rows(audit_set):
    comparison = suggestion_report.source_comparison(audit_set)
    return comparison, {row.source.name: row for row in comparison.rows}


def test_right_source_scores_one_and_always_supported_scores_the_base_rate(gold_set):
    audit_set, _, _, _ = gold_set
    comparison, rows = _rows(audit_set)
    assert comparison.gold_claims == 10
    right = rows["Right"].figures
    assert right.covered == 10
    assert (right.accuracy.value, right.accuracy.n) == (1.0, 10)
    assert right.kappa.value == pytest.approx(1.0)
    assert right.kappa.low < 1.0
    assert (right.any_at_3.value, right.any_at_3.n) == (1.0, N_SUPPORTED)
    assert right.whole_at_5.value == 1.0
    assert (right.token_f1.value, right.token_f1.n) == (1.0, N_NOT)
    always = rows["Always"].figures
    assert always.accuracy.value == pytest.approx(N_SUPPORTED / 10)
    assert always.kappa.value == pytest.approx(0.0)
    assert always.any_at_3.n == 0 and always.any_at_3.value is None
    assert always.token_f1.value is None


def test_the_matcher_finds_the_second_sentence(gold_set):
    audit_set, _, _, _ = gold_set
    _, rows = _rows(audit_set)
    matcher = rows["Matcher"]
    assert matcher.pre_highlights
    assert not rows["Right"].pre_highlights
    assert matcher.figures.covered == 10
    assert (matcher.figures.any_at_3.value, matcher.figures.any_at_3.n) == (1.0, N_SUPPORTED)
    assert matcher.figures.accuracy.value is None  # the matcher suggests no judgment


def test_acceptance_counts_the_sheets_shown_each_source(gold_set):
    audit_set, _, _, _ = gold_set
    _, rows = _rows(audit_set)
    right = rows["Right"].figures
    # Twenty sheets were shown the right source's judgment and kept it: automation bias.
    assert (right.judgment_kept.hits, right.judgment_kept.n) == (20, 20)
    # Its marked highlight (the supported claims' second sentence) kept on those 12 sheets.
    assert (right.evidence_kept.hits, right.evidence_kept.n) == (12, 12)
    assert right.automation_bias
    # No sheet was shown the other sources.
    assert rows["Always"].figures.judgment_kept.n == 0
    assert rows["Matcher"].figures.evidence_kept.n == 0


def test_acceptance_of_judgments_is_not_counted_where_the_set_hides_them(gold_set):
    audit_set, _, _, _ = gold_set
    audit_set.show_suggested_judgment = False
    audit_set.save(update_fields=["show_suggested_judgment"])
    _, rows = _rows(audit_set)
    assert rows["Right"].figures.judgment_kept.n == 0
    assert rows["Right"].figures.evidence_kept.n == 12


def test_a_claim_still_in_review_is_not_gold(gold_set, lead):
    audit_set, claims, _, _ = gold_set
    late = UserFactory(username="late", role="reviewer")
    from audit.models import Assignment

    Assignment.objects.create(claim=claims[0], reviewer=late)
    comparison, rows = _rows(audit_set)
    assert comparison.gold_claims == 9
    assert rows["Right"].figures.judgment_kept.n == 18


def test_no_anchoring_where_nothing_was_withheld(gold_set):
    audit_set, _, _, _ = gold_set
    assert suggestion_report.anchoring(audit_set) is None


@pytest.fixture
def anchored_set(db, reviewer_a, reviewer_b):
    return anchoring_set(reviewer_a, reviewer_b)


def test_anchoring_shows_reviewers_agreeing_more_with_suggestions(anchored_set):
    result = suggestion_report.anchoring(anchored_set)
    assert (result.shown.claims, result.withheld.claims) == (30, 30)
    assert result.shown.agreement.value == 1.0
    assert result.withheld.agreement.value == 0.5
    assert result.agreement_difference.value == pytest.approx(0.5)
    assert result.agreement_difference.low > 0
    assert result.shown.accuracy.value == 1.0
    assert result.withheld.accuracy.value == pytest.approx(45 / 60)
    assert result.accuracy_difference.low > 0


# ------------------------------------------------------------------------------ doors


def test_page_and_api_show_the_same_figures(gold_set, lead, client_for):
    audit_set, _, right, _ = gold_set
    page = client_for(lead).get(reverse("audit:suggestion-comparison", args=[audit_set.pk]))
    assert page.status_code == 200
    body = api_client(lead, scope="read").get(f"/api/v1/sets/{audit_set.pk}/suggestions/comparison")
    assert body.status_code == 200
    data = body.json()
    comparison, rows = _rows(audit_set)
    assert data["gold_claims"] == comparison.gold_claims
    assert [s["name"] for s in data["sources"]] == [r.source.name for r in comparison.rows]
    shown = page.context["rows"]
    for source, row in zip(data["sources"], shown, strict=True):
        figures = row["row"].figures
        assert source["judgment_accuracy"]["value"] == figures.accuracy.value
        assert source["judgment_kappa"]["low"] == figures.kappa.low
        assert source["evidence_any_at_3"]["n"] == figures.any_at_3.n
        assert source["unsupported_token_f1"]["value"] == figures.token_f1.value
        assert source["judgment_kept"]["value"] == figures.judgment_kept.value
    by_key = {s["key"]: s for s in data["sources"]}
    assert by_key[f"source:{right.pk}"]["automation_bias"] is True
    assert by_key["matcher"]["pre_highlights"] is True
    assert data["anchoring"] is None
    html = page.content.decode()
    assert "pre-highlights" in html
    assert "100.0%" in html
    assert 'id="anchoring"' not in html
    # The right source's judgments were kept on all 20 sheets: flagged; its highlights were
    # kept on all 12 sheets shown some, too few to flag.
    assert html.count('class="bias-mark"') == 1


def test_page_and_api_show_anchoring(anchored_set, lead, client_for):
    page = client_for(lead).get(reverse("audit:suggestion-comparison", args=[anchored_set.pk]))
    html = page.content.decode()
    assert 'id="anchoring"' in html
    assert "+50.0 pts" in html
    assert "excludes 0" in html
    data = api_client(lead).get(f"/api/v1/sets/{anchored_set.pk}/suggestions/comparison").json()
    assert data["anchoring"]["agreement_difference"]["value"] == pytest.approx(0.5)
    assert data["anchoring"]["withheld"]["agreement"]["n"] == 30


def test_reviewer_is_refused_page_and_api(gold_set, reviewer_a, client_for):
    audit_set, _, _, _ = gold_set
    page = client_for(reviewer_a).get(reverse("audit:suggestion-comparison", args=[audit_set.pk]))
    assert page.status_code == 403
    response = api_client(reviewer_a).get(f"/api/v1/sets/{audit_set.pk}/suggestions/comparison")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"


def test_anonymous_is_sent_to_log_in_and_the_api_wants_a_token(gold_set, client):
    audit_set, _, _, _ = gold_set
    page = client.get(reverse("audit:suggestion-comparison", args=[audit_set.pk]))
    assert page.status_code == 302
    assert client.get(f"/api/v1/sets/{audit_set.pk}/suggestions/comparison").status_code == 401


def test_a_set_of_another_workspace_is_not_found(gold_set, client_for):
    from audit.models import Workspace

    other = AuditSetFactory(workspace=Workspace.objects.create(name="Other", slug="other"))
    lead = UserFactory(username="lead2", role="lead")
    assert (
        client_for(lead).get(reverse("audit:suggestion-comparison", args=[other.pk])).status_code
        == 404
    )


# --------------------------------------------------------- pushed through the doors, then measured


class FakeModel:
    """A model a team runs outside the app, as the API and the client see it: asked for a
    claim (its text and passages), it answers a suggestion record."""

    def __init__(self, answer):
        self.answer = answer

    def suggest(self, claim) -> dict:
        return {"claim": claim.pk, **self.answer(claim)}


def _oracle(claim) -> dict:
    # Right every time: what the set's gold says (the model a team hopes to have).
    gold = claim.adjudication
    return {
        "judgment": gold.judgment,
        "judgment_score": 0.9,
        "evidence": [
            {"passage": e["passage"], "start": e["start"], "end": e["end"], "score": 0.9}
            for e in gold.evidence
        ],
        "unsupported": [
            {"start": u["start"], "end": u["end"], "score": 0.8}
            for u in gold.unsupported_assertions
        ],
    }


def test_suggestions_pushed_by_the_api_and_the_client_are_measured_against_gold(gold_set, lead):
    import sys

    from audit.models import SuggestionSource
    from tests.conftest import ROOT
    from tests.test_api_problems import _through_django

    sys.path.insert(0, str(ROOT / "clients" / "python" / "src"))
    from citeaudit_client import Client

    audit_set, claims, _, _ = gold_set
    SuggestionSource.objects.filter(audit_set=audit_set).delete()  # pushed afresh below
    right = FakeModel(_oracle)
    always = FakeModel(lambda claim: {"judgment": "supported", "judgment_score": 0.99})

    # The right model through the API, the always-supported one through the client library.
    api = api_client(lead)
    pushed = api.post(
        f"/api/v1/sets/{audit_set.pk}/suggestions",
        {"name": "oracle", "version": "1", "suggestions": [right.suggest(c) for c in claims]},
        content_type="application/json",
    )
    assert pushed.status_code == 200, pushed.content
    token = api.defaults["HTTP_AUTHORIZATION"].removeprefix("Bearer ")
    with Client(
        "http://citeaudit.test", token, transport=_through_django(token), retries=0
    ) as client:
        summary = client.suggestions_push(
            audit_set.pk, "always-supported", "1", [always.suggest(c) for c in claims]
        )
    assert summary["created"] == len(claims)

    body = api.get(f"/api/v1/sets/{audit_set.pk}/suggestions/comparison").json()
    by_name = {s["name"]: s for s in body["sources"]}
    assert body["gold_claims"] == 10
    oracle, supported, matcher = by_name["oracle"], by_name["always-supported"], by_name["Matcher"]
    assert (oracle["judgment_accuracy"]["value"], oracle["judgment_accuracy"]["n"]) == (1.0, 10)
    assert oracle["judgment_kappa"]["value"] == pytest.approx(1.0)
    assert oracle["evidence_any_at_3"]["value"] == 1.0
    assert oracle["evidence_whole_set_at_5"]["value"] == 1.0
    assert oracle["unsupported_token_f1"]["value"] == 1.0
    assert supported["judgment_accuracy"]["value"] == pytest.approx(N_SUPPORTED / 10)
    assert supported["judgment_kappa"]["value"] == pytest.approx(0.0)
    assert supported["evidence_any_at_3"]["value"] is None
    assert matcher["evidence_any_at_3"]["value"] == 1.0
    assert matcher["judgment_accuracy"]["value"] is None
    # Every interval holds its figure.
    for source in body["sources"]:
        for figure in source.values():
            if isinstance(figure, dict) and figure.get("value") is not None:
                assert figure["low"] <= figure["value"] <= figure["high"]
