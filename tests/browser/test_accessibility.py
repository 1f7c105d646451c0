"""axe-core over every page each role opens, on a round with sheets, gold, a judge and a
job: no serious or critical violation. axe-core is the version pinned in
tests/browser/axe (installed by .ci/setup from the npm registry)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from audit.models import Answer, ImportBatch, Job, Judge
from tests.browser.test_adjudication import demo_round  # noqa: F401 - the round's fixture
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
RUN = """async () => {
    const result = await axe.run(document, {resultTypes: ['violations']});
    return result.violations
        .filter(v => v.impact === 'serious' || v.impact === 'critical')
        .map(v => ({rule: v.id, impact: v.impact,
                    nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
}"""


def _signed_in(browser, live_server, user, width: int):
    # axe is injected as a script of its own: the pages' CSP (script-src 'self') would
    # refuse it, so this context alone bypasses CSP; the pages are unchanged.
    context = browser.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "pw-for-tests")
    page.click("button[type=submit]")
    page.wait_for_load_state("load")
    return context, page


def _violations(page, url: str) -> list[dict]:
    page.goto(url)
    page.wait_for_load_state("load")
    page.add_script_tag(path=str(AXE))
    return page.evaluate(RUN)


def _lead_pages(audit_set, claim, judge, job, answer) -> list[str]:
    pk = audit_set.pk
    set_pages = [
        "set-detail",
        "label-distribution",
        "set-progress",
        "set-claims",
        "review-open",
        "adjudication-queue",
        "adjudication-settings",
        "agreement",
        "verdicts-upload",
        "suggestions-upload",
        "set-report",
        "set-criteria",
        "set-compare",
        "suggestion-comparison",
        "judge-list",
        "set-webhooks",
        "set-edit",
        "guideline-history",
        "set-calibration",
    ]
    return [
        reverse("audit:home"),
        reverse("audit:set-list"),
        reverse("audit:set-create"),
        reverse("audit:import"),
        reverse("audit:job-list"),
        reverse("audit:job-detail", args=[job.pk]),
        reverse("audit:workspace-list"),
        reverse("audit:workspace-members", args=["default"]),
        reverse("audit:token-list"),
        reverse("audit:my-feedback"),
        reverse("audit:answer-detail", args=[answer.pk]),
        reverse("audit:adjudicate", args=[claim.pk]),
        reverse("audit:claim-history", args=[claim.pk]),
        reverse("audit:judge-detail", args=[judge.pk]),
        reverse("password_change"),
        *(reverse(f"audit:{name}", args=[pk]) for name in set_pages),
    ]


def test_no_page_has_a_serious_or_critical_violation_for_any_role(
    browser,
    live_server,
    demo_round,  # noqa: F811 - the fixture imported above
    lead,
    reviewer_a,
):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run 'bash .ci/setup', which installs axe-core with npm")
    claim = demo_round["c0"]
    audit_set = claim.answer.audit_set
    judge = Judge.objects.create(
        audit_set=audit_set, name="nli-check", base_url="https://judge.example/v1", model="m"
    )
    job = Job.objects.create(
        kind=Job.Kind.IMPORT, audit_set=audit_set, created_by=lead, status=Job.Status.SUCCEEDED
    )
    answer = Answer.objects.filter(audit_set=audit_set).order_by("pk").first()
    owner = UserFactory(username="olga", role="owner")
    assert ImportBatch.objects.filter(audit_set=audit_set).exists()

    found: dict[str, list[dict]] = {}
    for user, pages in (
        (lead, _lead_pages(audit_set, claim, judge, job, answer)),
        (owner, [reverse("audit:workspace-members", args=["default"])]),
        (
            reviewer_a,
            [
                reverse("audit:home"),
                reverse("audit:review-claim", args=[demo_round["c2"].pk]),
                reverse("audit:my-feedback"),
                reverse("audit:set-detail", args=[audit_set.pk]),
                reverse("audit:token-list"),
            ],
        ),
    ):
        for width in (1440, 1024):
            context, page = _signed_in(browser, live_server, user, width)
            for path in pages:
                bad = _violations(page, live_server.url + path)
                if bad:
                    found[f"{user.username} {width} {path}"] = bad
            context.close()
    signed_out = browser.new_context(bypass_csp=True)
    page = signed_out.new_page()
    for path in (reverse("login"), reverse("password_reset")):
        bad = _violations(page, live_server.url + path)
        if bad:
            found[f"signed out {path}"] = bad
    signed_out.close()

    assert found == {}, json.dumps(found, indent=1)


def test_the_review_and_adjudication_pages_name_their_regions_and_show_focus(
    new_page,
    live_server,
    demo_round,  # noqa: F811 - the fixture imported above
    lead,
    reviewer_a,
):
    review = new_page(reviewer_a)
    review.goto(f"{live_server.url}/claims/{demo_round['c2'].pk}/review/")
    adjudication = new_page(lead)
    adjudication.goto(f"{live_server.url}/claims/{demo_round['c0'].pk}/adjudicate/")

    for page, regions in (
        (review, ["The claim and its sources", "Your audit sheet"]),
        (adjudication, ["The claim, the sheets and the passages", "Gold record"]),
    ):
        for name in regions:
            assert page.get_by_role("region", name=name).count() == 1
        assert page.get_by_role("main").count() == 1
        # Tab through the first controls: each one shows where the focus is.
        page.locator("body").focus()
        for _ in range(12):
            page.keyboard.press("Tab")
            outline = page.evaluate(
                """() => { const e = document.activeElement;
                    const s = getComputedStyle(e.closest('label') || e);
                    const own = getComputedStyle(e);
                    return [own.outlineStyle, s.outlineStyle, e.tagName]; }"""
            )
            assert "solid" in outline[:2], outline
