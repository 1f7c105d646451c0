"""Every page of a set carries the same tab bar; a claim's history is one click from the
answer page and from the claims table."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from audit import services
from audit.models import Claim

pytestmark = pytest.mark.django_db

SUBNAV = re.compile(
    r'<nav class="subnav(?: grouped)?" aria-label="Pages of this set">(.*?)</nav>', re.S
)
GROUPS = re.compile(r'<span class="tab-group-label" id="[^"]*">([^<]*)</span>')
LINK = re.compile(r'<a (?:class="([^"]*)" )?href="([^"]*)"[^>]*>([^<]*)</a>')

# In four groups, in the order of the work: the set, the review, the decision, the machines.
LEAD_TABS = [
    "Answers",
    "Label distribution",
    "Import answers",
    "Settings",
    "Open for review",
    "Progress",
    "Claims",
    "Guidelines",
    "Calibration",
    "Disagreements",
    "Agreement",
    "Criteria",
    "Release report",
    "Compare runs",
    "Judges",
    "Suggestions",
    "Machine verdicts",
    "Suggestion sources",
    "Webhooks",
]


def _tabs(body: str) -> list[tuple[str, str, str]]:
    navs = SUBNAV.findall(body)
    assert len(navs) == 1
    return [(text, href, cls) for cls, href, text in LINK.findall(navs[0])]


def _set_pages(audit_set) -> list[str]:
    pk = audit_set.pk
    names = [
        "set-detail",
        "label-distribution",
        "guideline-history",
        "set-progress",
        "set-claims",
        "adjudication-queue",
        "agreement",
        "set-calibration",
        "set-report",
        "set-criteria",
        "set-compare",
        "suggestion-comparison",
        "verdicts-upload",
        "suggestions-upload",
        "adjudication-settings",
        "set-webhooks",
        "review-open",
    ]
    return [reverse(f"audit:{name}", args=[pk]) for name in names]


def test_every_set_page_shows_the_same_tabs_to_a_lead(client_for, handmade, lead):
    client = client_for(lead)

    tab_bars = {url: _tabs(client.get(url).content.decode()) for url in _set_pages(handmade)}

    first = next(iter(tab_bars.values()))
    assert [text for text, _, _ in first] == LEAD_TABS
    body = client.get(_set_pages(handmade)[0]).content.decode()
    assert GROUPS.findall(SUBNAV.findall(body)[0]) == ["Set", "Review", "Decide", "Machines"]
    assert {url: bar == first for url, bar in tab_bars.items()} == dict.fromkeys(tab_bars, True)


def test_each_set_page_marks_its_own_tab_as_current(client_for, handmade, lead):
    client = client_for(lead)
    current = {}
    for url in _set_pages(handmade):
        navs = SUBNAV.findall(client.get(url).content.decode())
        current[url] = re.findall(r'href="([^"]*)" aria-current="page"', navs[0])

    assert current == {url: [url] for url in _set_pages(handmade)}


def test_reviewer_sees_the_answers_label_distribution_and_guidelines_tabs_only(
    client_for, handmade, reviewer_a
):
    client = client_for(reviewer_a)
    pages = [
        reverse("audit:set-detail", args=[handmade.pk]),
        reverse("audit:label-distribution", args=[handmade.pk]),
    ]

    bars = [[text for text, _, _ in _tabs(client.get(url).content.decode())] for url in pages]

    assert bars == [["Answers", "Label distribution", "Guidelines"]] * 2


def test_open_for_review_is_a_button_until_the_set_is_open_then_a_quiet_tab(
    client_for, handmade, reviewer_a, reviewer_b, lead
):
    client = client_for(lead)
    url = reverse("audit:set-detail", args=[handmade.pk])
    open_url = reverse("audit:review-open", args=[handmade.pk])
    before = next(t for t in _tabs(client.get(url).content.decode()) if t[1] == open_url)

    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    after = next(t for t in _tabs(client.get(url).content.decode()) if t[1] == open_url)

    assert before == ("Open for review", open_url, "button small")
    assert after == ("Reviewers", open_url, "")


def test_claims_table_links_every_claim_to_its_history(
    client_for, handmade, reviewer_a, reviewer_b, lead
):
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    body = client_for(lead).get(reverse("audit:set-claims", args=[handmade.pk])).content.decode()

    linked = {int(pk) for pk in re.findall(r'<a href="/claims/(\d+)/history/">History</a>', body)}

    shown = {int(pk) for pk in re.findall(r'href="/claims/(\d+)/split/"', body)}
    assert len(shown) == Claim.objects.filter(answer__audit_set=handmade).count()
    assert linked == shown


def test_answer_page_links_each_claim_to_its_history_for_leads_only(
    client_for, handmade, reviewer_a, lead
):
    answer = handmade.answers.get(external_id="hm-1-a")
    claims = list(answer.claims.filter(parent__isnull=True).order_by("order"))

    as_lead = client_for(lead).get(answer.get_absolute_url()).content.decode()
    as_reviewer = client_for(reviewer_a).get(answer.get_absolute_url()).content.decode()

    history = re.compile(r'<a class="claim-link" href="/claims/(\d+)/history/">History</a>')
    assert [int(pk) for pk in history.findall(as_lead)] == [c.pk for c in claims]
    assert history.findall(as_reviewer) == []
