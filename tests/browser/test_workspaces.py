"""Accounts in a real browser: an owner invites a reviewer, who accepts the link, sets a
password and judges a claim; the owner deactivates them and their sheet stays, under their
name, for the lead."""

import re

import pytest

from audit import services
from audit.models import AuditSheet, Membership
from tests.browser.conftest import screenshot, watch_errors
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_owner_invites_a_reviewer_who_judges_and_is_deactivated(
    browser, new_page, live_server, handmade, lead
):
    owner = UserFactory(username="olga", role="owner")
    owner_page = new_page(owner)
    errors = watch_errors(owner_page)

    # The owner invites by email; the page shows the single-use link once.
    owner_page.click("nav >> text=Workspaces")
    screenshot(owner_page, "workspace-list-1400")
    owner_page.click("text=Members and invitations")
    owner_page.fill("#id_email", "nina@example.org")
    owner_page.select_option("#id_role", "reviewer")
    owner_page.click("text=Send invitation")
    message = owner_page.inner_text("ul.messages")
    link = re.search(r"(http://\S+/invitations/\S+/)", message).group(1)
    owner_page.set_viewport_size({"width": 1440, "height": 900})
    screenshot(owner_page, "workspace-members-1440")

    # The invitee, signed out, chooses a username and password and is signed in.
    context = browser.new_context(viewport={"width": 1024, "height": 800})
    nina_page = context.new_page()
    nina_page.set_default_timeout(10_000)
    errors += watch_errors(nina_page)
    nina_page.goto(link)
    screenshot(nina_page, "invitation-accept-1024")
    nina_page.fill("#id_username", "nina")
    nina_page.fill("#id_password1", "Nina-judges-2026")
    nina_page.fill("#id_password2", "Nina-judges-2026")
    nina_page.click("text=Create account and join")
    assert "You joined “Default” as reviewer." in nina_page.inner_text("ul.messages")
    nina = Membership.objects.get(user__username="nina").user

    # A lead gives her claims; she judges the first one.
    services.review_open(audit_set=handmade, reviewers=[nina], overlap=1, by=lead)
    nina_page.goto(f"{live_server.url}/sets/{handmade.pk}/continue/")
    first_url = nina_page.url
    claim_id = int(re.search(r"/claims/(\d+)/review/", first_url).group(1))
    nina_page.click("label.judgment:has-text('Contradicted')")
    nina_page.wait_for_selector("#save-status[data-state=saved]")
    nina_page.keyboard.press("s")
    nina_page.wait_for_url(lambda url: url != first_url)
    assert AuditSheet.objects.get(claim_id=claim_id, reviewer=nina).status == "submitted"

    # The owner deactivates her: her open claims go back, her sheet stays.
    owner_page.reload()
    owner_page.click("text=Deactivate nina")
    flash = owner_page.inner_text("ul.messages")
    assert re.search(
        r"Deactivated nina: \d+ unsubmitted claims went back to the pool; "
        r"sheets submitted and kept: 1\.",
        flash,
    )
    screenshot(owner_page, "workspace-members-deactivated")
    gone = nina_page.goto(first_url)
    assert gone.status == 404
    assert nina_page.goto(f"{live_server.url}/sets/{handmade.pk}/").status == 404

    lead_page = new_page(lead)
    lead_page.goto(f"{live_server.url}/sets/new/")
    lead_page.set_viewport_size({"width": 1024, "height": 800})
    screenshot(lead_page, "set-create-with-workspace-1024")
    lead_page.goto(f"{live_server.url}/claims/{claim_id}/history/")
    assert "nina" in lead_page.inner_text("main")
    assert AuditSheet.objects.filter(reviewer=nina, status="submitted").count() == 1
    context.close()
    assert errors == []
