"""A set's suggestion settings: who may change them, which sources they may name, and the
withheld share fixed once review starts; through the service, the set's edit page and the
API alike."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import PermissionDenied

from audit.models import AuditSet, SuggestionSettingChange, SuggestionSource
from audit.services import SetRefused
from audit.services.suggestion_settings import set_suggestion_settings
from tests.conftest import api_client, log_in
from tests.factories import submit_sheet


@pytest.fixture
def pushed(opened, lead):
    return SuggestionSource.objects.create(
        audit_set=opened, name="NLI checker", version="2.1", created_by=lead
    )


def _settings(audit_set, user, **changes):
    values = {"source_key": "matcher", "show_judgment": False, "withhold_share": 0.0}
    values.update(changes)
    return set_suggestion_settings(audit_set=audit_set, user=user, **values)


def _start_review(audit_set, reviewer):
    from audit.models import Claim

    claim = Claim.objects.filter(answer__audit_set=audit_set, assignments__reviewer=reviewer)[0]
    submit_sheet(reviewer, claim, "not_supported")


def test_lead_chooses_a_pushed_source_and_a_withheld_share(opened, lead, pushed):
    change = _settings(
        opened, lead, source_key=f"source:{pushed.pk}", show_judgment=True, withhold_share=0.25
    )
    stored = AuditSet.objects.get(pk=opened.pk)
    assert stored.suggestion_source == f"source:{pushed.pk}"
    assert stored.show_suggested_judgment is True
    assert stored.withhold_share == 0.25
    assert len(stored.withhold_seed) == 32
    assert stored.withhold_chosen_at is not None
    assert change.before == {
        "suggestion_source": "matcher",
        "show_suggested_judgment": False,
        "withhold_share": 0.0,
    }
    assert change.after["suggestion_source"] == f"source:{pushed.pk}"
    assert change.by == lead
    assert change.after_review_started is False


def test_a_reviewer_cannot_change_the_settings(opened, reviewer_a, pushed):
    with pytest.raises(PermissionDenied):
        _settings(opened, reviewer_a, source_key=f"source:{pushed.pk}")
    assert AuditSet.objects.get(pk=opened.pk).suggestion_source == "matcher"
    assert SuggestionSettingChange.objects.count() == 0


@pytest.mark.parametrize("key", ["bert", "source:", "source:abc", "judge-run:0", "source:999999"])
def test_a_key_that_names_no_source_of_the_set_is_refused(opened, lead, key):
    with pytest.raises(SetRefused) as refused:
        _settings(opened, lead, source_key=key)
    assert refused.value.field == "source_key"
    assert AuditSet.objects.get(pk=opened.pk).suggestion_source == "matcher"


def test_another_sets_source_is_refused(opened, lead):
    other = AuditSet.objects.create(name="Other", workspace=opened.workspace)
    foreign = SuggestionSource.objects.create(audit_set=other, name="X", version="1")
    with pytest.raises(SetRefused) as refused:
        _settings(opened, lead, source_key=f"source:{foreign.pk}")
    assert str(refused.value) == f"This set has no source “source:{foreign.pk}”."


@pytest.mark.parametrize("share", [-0.1, 0.91, float("nan"), float("inf"), True])
def test_a_share_outside_0_to_0_9_is_refused(opened, lead, share):
    with pytest.raises(SetRefused) as refused:
        _settings(opened, lead, withhold_share=share)
    assert refused.value.field == "withhold_share"
    assert AuditSet.objects.get(pk=opened.pk).withhold_share == 0.0


def test_the_share_is_fixed_once_review_started_but_the_source_may_change(
    opened, lead, reviewer_a, pushed
):
    _settings(opened, lead, withhold_share=0.2)
    seed = AuditSet.objects.get(pk=opened.pk).withhold_seed
    _start_review(opened, reviewer_a)
    with pytest.raises(SetRefused) as refused:
        _settings(opened, lead, withhold_share=0.5)
    assert refused.value.field == "withhold_share"
    assert "Review started" in str(refused.value)
    change = _settings(opened, lead, source_key=f"source:{pushed.pk}", withhold_share=0.2)
    stored = AuditSet.objects.get(pk=opened.pk)
    assert (stored.withhold_share, stored.withhold_seed) == (0.2, seed)
    assert stored.suggestion_source == f"source:{pushed.pk}"
    assert change.after_review_started is True


def test_saving_the_same_settings_records_nothing(opened, lead):
    assert _settings(opened, lead) is None
    assert SuggestionSettingChange.objects.count() == 0


# ------------------------------------------------------------------------ the edit page


def _page_post(client, audit_set, **data):
    body = {
        "action": "suggestions",
        "source_key": "matcher",
        "withhold_percent": "0",
        **data,
    }
    return client.post(f"/sets/{audit_set.pk}/edit/", body)


def test_edit_page_lists_the_sets_sources_and_saves_them(client, opened, lead, pushed):
    log_in(client, lead)
    page = client.get(f"/sets/{opened.pk}/edit/")
    html = page.content.decode()
    assert "<legend>Suggestions</legend>" in html
    assert f'<option value="source:{pushed.pk}">NLI checker (2.1)</option>' in html
    assert 'value="matcher" selected' in html
    response = _page_post(
        client,
        opened,
        source_key=f"source:{pushed.pk}",
        show_judgment="on",
        withhold_percent="30",
    )
    assert response.status_code == 302
    stored = AuditSet.objects.get(pk=opened.pk)
    assert (stored.suggestion_source, stored.show_suggested_judgment) == (
        f"source:{pushed.pk}",
        True,
    )
    assert stored.withhold_share == 0.3


def test_edit_page_disables_the_share_once_review_started(client, opened, lead, reviewer_a):
    _start_review(opened, reviewer_a)
    log_in(client, lead)
    html = client.get(f"/sets/{opened.pk}/edit/").content.decode()
    assert "Fixed since review started" in html
    assert 'name="withhold_percent" value="0.0" step="1"' in html
    assert "disabled" in html.split('name="withhold_percent"')[1].split(">")[0]
    # A disabled field ignores what is posted: the share stays.
    response = _page_post(client, opened, withhold_percent="50")
    assert response.status_code == 302
    assert AuditSet.objects.get(pk=opened.pk).withhold_share == 0.0


def test_edit_page_refuses_a_reviewer(client, opened, reviewer_a):
    log_in(client, reviewer_a)
    response = _page_post(client, opened, show_judgment="on")
    assert response.status_code in (403, 404)
    assert AuditSet.objects.get(pk=opened.pk).show_suggested_judgment is False


def test_edit_page_names_an_unknown_source(client, opened, lead):
    log_in(client, lead)
    response = _page_post(client, opened, source_key="source:424242")
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()


# ------------------------------------------------------------------------------ the API


def _json(response) -> dict:
    return json.loads(response.content)


def test_api_patch_goes_through_the_same_rules(opened, lead, reviewer_a, pushed):
    client = api_client(lead)
    url = f"/api/v1/sets/{opened.pk}/settings"
    response = client.patch(
        url,
        {"suggestion_source": f"source:{pushed.pk}", "withhold_share": 0.1},
        content_type="application/json",
    )
    assert response.status_code == 200
    body = _json(response)
    assert body["suggestion_source"] == f"source:{pushed.pk}"
    assert body["withhold_share"] == 0.1
    assert body["show_suggested_judgment"] is False
    assert body["withhold_chosen_at"] is not None
    _start_review(opened, reviewer_a)
    refused = client.patch(
        url, {"withhold_share": 0.3, "name": "Renamed"}, content_type="application/json"
    )
    assert refused.status_code == 422
    assert "Review started" in refused.content.decode()
    stored = AuditSet.objects.get(pk=opened.pk)
    assert (stored.withhold_share, stored.name) == (0.1, opened.name)


def test_api_patch_refuses_an_unknown_source_naming_the_field(opened, lead):
    client = api_client(lead)
    response = client.patch(
        f"/api/v1/sets/{opened.pk}/settings",
        {"suggestion_source": "gpt"},
        content_type="application/json",
    )
    assert response.status_code == 422
    assert "suggestion_source" in response.content.decode()
    assert AuditSet.objects.get(pk=opened.pk).suggestion_source == "matcher"
