"""The review page's suggestions: the set's chosen source pre-highlights instead of the
matcher, marked with its name and score; the matcher stays the default; a withheld claim
shows none and its sheet records it; a suggested judgment only where the set shows one."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit import matching, suggestions
from audit.models import AuditSet, AuditSheet, Claim, Suggestion, SuggestionSource

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _first_sentence(claim: Claim) -> tuple[int, int, int, str]:
    passage = claim.citations.order_by("position").first()
    start, end = matching.sentence_spans(passage.text)[0]
    return passage.position, start, end, passage.text[start:end]


@pytest.fixture
def pushed(opened, claim, lead):
    source = SuggestionSource.objects.create(
        audit_set=opened, name="NLI checker", version="2.1", created_by=lead
    )
    position, start, end, _ = _first_sentence(claim)
    word_end = claim.text.index(" ")
    Suggestion.objects.create(
        source=source,
        claim=claim,
        judgment="supported",
        judgment_score=0.91,
        evidence=[{"passage": position, "start": start, "end": end, "score": 0.82}],
        unsupported=[{"start": 0, "end": word_end, "text": claim.text[:word_end], "score": 0.4}],
    )
    AuditSet.objects.filter(pk=opened.pk).update(suggestion_source=f"source:{source.pk}")
    return source


def _page(client, claim) -> str:
    response = client.get(reverse("audit:review-claim", args=[claim.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_chosen_sources_highlight_shows_its_name_and_score(
    client_for, pushed, claim, reviewer_a
):
    html = _page(client_for(reviewer_a), claim)
    position, start, _, _ = _first_sentence(claim)
    tag = (
        f'<span class="sugg-tag" id="sugg-{position}-{start}">'
        "Suggested by NLI checker 2.1 · 0.82</span>"
    )
    assert tag in html
    assert f'aria-describedby="sugg-{position}-{start}"' in html
    assert html.count('class="sugg-tag"') == 1
    assert "Suggestions from NLI checker 2.1" in html
    assert "suggested by NLI checker 2.1, marked" in html
    word = claim.text[: claim.text.index(" ")]
    assert f'data-start="0" data-end="{len(word)}">{word}</button>' in html
    # Not shown unless the set shows suggested judgments.
    assert 'id="suggested-judgment"' not in html


def test_a_suggested_judgment_shows_only_where_the_set_shows_them(
    client_for, opened, pushed, claim, reviewer_a
):
    AuditSet.objects.filter(pk=opened.pk).update(show_suggested_judgment=True)
    html = _page(client_for(reviewer_a), claim)
    assert (
        '<p class="suggested-judgment" id="suggested-judgment" data-judgment="supported">'
        "Suggested: <strong>Supported (0.91)</strong> — NLI checker 2.1" in html
    )
    assert "<dt><kbd>g</kbd></dt><dd>take the suggested judgment</dd>" in html


def test_the_matcher_stays_the_default_and_unlabelled(client_for, opened, claim, reviewer_a):
    html = _page(client_for(reviewer_a), claim)
    assert opened.suggestion_source == "matcher"
    assert "Suggestions from Matcher" in html
    assert 'class="sugg-tag"' not in html
    assert 'title="Machine hint: best match #1"' in html
    assert "(machine hint, marked" in html or 'id="suggestions"' not in html


def _withheld_and_shown(audit_set: AuditSet) -> tuple[Claim, Claim]:
    claims = Claim.objects.filter(answer__audit_set=audit_set).order_by("pk")
    drawn = {c.pk: suggestions.withheld(audit_set.withhold_seed, 0.5, c.pk) for c in claims}
    held = next(c for c in claims if drawn[c.pk])
    shown = next(c for c in claims if not drawn[c.pk])
    return held, shown


def test_a_withheld_claim_shows_no_suggestion_and_its_sheet_records_it(
    client_for, opened, pushed, reviewer_a, lead
):
    services_settings(opened, lead, source_key=f"source:{pushed.pk}", withhold_share=0.5)
    opened.refresh_from_db()
    held, shown = _withheld_and_shown(opened)
    Suggestion.objects.filter(source=pushed).update(claim=held)
    client = client_for(reviewer_a)
    html = _page(client, held)
    assert 'class="sugg-tag"' not in html
    assert " hl" not in html.split('id="passages-heading"')[1].split("</section>")[0]
    assert 'id="suggestions"' not in html
    assert 'id="hints"' not in html
    assert 'id="suggestion-bar"' not in html
    assert "withheld" not in html.lower()
    response = client.post(
        reverse("audit:review-save", args=[held.pk]),
        {"version": 1, "active_seconds": 0, "notes": "draft"},
        **HTMX,
    )
    assert response.status_code == 200
    sheet = AuditSheet.objects.get(claim=held, reviewer=reviewer_a)
    assert (sheet.suggestions_withheld, sheet.suggestion_source_shown) == (True, "")
    client.post(
        reverse("audit:review-save", args=[shown.pk]),
        {"version": 1, "active_seconds": 0, "notes": "draft"},
        **HTMX,
    )
    other = AuditSheet.objects.get(claim=shown, reviewer=reviewer_a)
    assert (other.suggestions_withheld, other.suggestion_source_shown) == (
        False,
        f"source:{pushed.pk}",
    )


def test_a_submitted_sheet_records_the_matcher_by_default(opened, claim, reviewer_a):
    from tests.factories import submit_sheet

    sheet = submit_sheet(reviewer_a, claim, "not_supported")
    assert (sheet.suggestions_withheld, sheet.suggestion_source_shown) == (False, "matcher")


def test_suggestions_never_show_another_reviewers_sheet(
    client, pushed, claim, reviewer_a, reviewer_b
):
    from tests.conftest import log_in
    from tests.factories import submit_sheet

    position, start, end, _ = _first_sentence(claim)
    submit_sheet(reviewer_a, claim, "not_supported", notes="Reviewer A's private reasoning")
    html = _page(log_in(client, reviewer_b), claim)
    assert "Reviewer A" not in html
    assert "Suggested by NLI checker 2.1 · 0.82" in html


def services_settings(audit_set, user, **values):
    from audit.services.suggestion_settings import set_suggestion_settings

    values.setdefault("show_judgment", False)
    values.setdefault("source_key", "matcher")
    values.setdefault("withhold_share", 0.0)
    return set_suggestion_settings(audit_set=audit_set, user=user, **values)
