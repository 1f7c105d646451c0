"""A submit sent twice (its answer lost on the way) is one submit; a different submit from
another tab over the same version is still a conflict, whatever it shares with the first.
And the script's own door: JSON that names the next claim, the message left for a page
that is not the one the script holds."""

import pytest
from django.urls import reverse

from audit.models import AuditSheet
from tests.views.test_review import HTMX, _form

pytestmark = pytest.mark.django_db

SWAP = {"HTTP_X_CITEAUDIT_SWAP": "1"}


def _draft(client, claim, **fields):
    return client.post(reverse("audit:review-save", args=[claim.pk]), _form(**fields), **HTMX)


def _submit(client, claim, **fields):
    return client.post(reverse("audit:review-submit", args=[claim.pk]), _form(**fields))


def test_the_same_submit_sent_again_is_one_submit(client_for, opened, reviewer_a, claim):
    client = client_for(reviewer_a)
    _draft(client, claim, judgment="not_supported", notes="n")
    fields = {"version": 2, "judgment": "not_supported", "notes": "n"}

    first = _submit(client, claim, **fields)
    again = _submit(client, claim, **fields)

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert first.status_code == again.status_code == 302
    assert again["Location"] == first["Location"]
    assert (sheet.status, sheet.version) == ("submitted", 3)
    assert sheet.history.filter(status="submitted").count() == 1


def test_another_tabs_different_submit_over_the_same_version_is_refused(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)
    _draft(client, claim, judgment="not_supported")
    words = claim.text.split()[0]
    item = f'{{"start": 0, "end": {len(words)}, "note": ""}}'

    first = _submit(client, claim, version=2, judgment="not_supported")
    # Same judgment, evidence and notes; the other tab also marked words as unsupported.
    other = _submit(client, claim, version=2, judgment="not_supported", unsupported_item=[item])

    sheet = AuditSheet.objects.get(claim=claim, reviewer=reviewer_a)
    assert (first.status_code, other.status_code) == (302, 409)
    assert "Changed in another tab" in other.content.decode()
    assert sheet.unsupported_assertions == []


def test_the_scripts_submit_gets_the_next_address_and_the_message_waits_only_if_not_held(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)
    _draft(client, claim, judgment="not_supported")
    page = client.get(reverse("audit:review-claim", args=[claim.pk]))
    held = page.context["next_url"]
    assert f'data-next-url="{held}"' in page.content.decode()

    answer = client.post(
        reverse("audit:review-submit", args=[claim.pk]),
        _form(version=2, judgment="not_supported"),
        HTTP_X_CITEAUDIT_PREFETCHED=held,
        **SWAP,
    )

    assert answer.json() == {
        "next": held,
        "message": "Submitted. Here is your next claim.",
        "swap": True,
    }
    # Shown in place, with the message the script adds: nothing left for a later page.
    later = client.get(reverse("audit:home"))
    assert "Submitted. Here is your next claim." not in later.content.decode()


def test_a_page_fetched_ahead_leaves_the_waiting_messages_for_the_page_shown(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)
    _draft(client, claim, judgment="not_supported")
    # A plain post: its message waits for the next page the reviewer is shown.
    next_url = _submit(client, claim, version=2, judgment="not_supported")["Location"]

    ahead = client.get(next_url, HTTP_X_CITEAUDIT_PREFETCH="1")
    shown = client.get(next_url)

    assert "Submitted. Here is your next claim." not in ahead.content.decode()
    assert "Submitted. Here is your next claim." in shown.content.decode()
