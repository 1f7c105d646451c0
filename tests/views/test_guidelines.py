"""Guidelines with versions: editing a set in the app, a version per guideline change with
its note and diff, the version each sheet was judged under, and agreement per version."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from audit import selectors, services
from audit.calibration import DiffLine, guideline_diff
from audit.models import AuditSheet, Claim, GuidelineVersion
from tests.factories import submit_sheet

pytestmark = pytest.mark.django_db


def _claims(n: int) -> list[Claim]:
    return list(Claim.objects.filter(answer__external_id="hm-1-a").order_by("order")[:n])


def _edit(client, audit_set, **fields):
    data = {
        "name": audit_set.name,
        "description": audit_set.description,
        "guidelines": audit_set.guidelines,
        "change_note": "",
    }
    data.update(fields)
    return client.post(reverse("audit:set-edit", args=[audit_set.pk]), data)


def test_guideline_diff_marks_added_and_removed_lines():
    before = "Judge the cited passages.\n- Supported: all stated.\nKeep evidence minimal."
    after = "Judge the cited passages.\n- Supported: every part stated.\nKeep evidence minimal."

    assert guideline_diff(before, after) == [
        DiffLine("same", "Judge the cited passages.", 1, 1),
        DiffLine("removed", "- Supported: all stated.", 2, None),
        DiffLine("added", "- Supported: every part stated.", None, 2),
        DiffLine("same", "Keep evidence minimal.", 3, 3),
    ]
    assert guideline_diff("same", "same") == []


def test_a_lead_edits_a_set_and_each_guideline_change_is_a_version(client_for, opened, lead):
    client = client_for(lead)
    old_text = opened.guidelines

    renamed = _edit(client, opened, name="Renamed set", description="Now described.")
    changed = _edit(
        client,
        opened,
        name="Renamed set",
        description="Now described.",
        guidelines=old_text + "\n- *Unclear*: too vague to check.",
        change_note="Define unclear.",
    )

    opened.refresh_from_db()
    versions = list(GuidelineVersion.objects.filter(audit_set=opened).order_by("number"))
    assert (renamed.status_code, changed.status_code) == (302, 302)
    assert (opened.name, opened.description) == ("Renamed set", "Now described.")
    assert [(v.number, v.text, v.note, v.by) for v in versions] == [
        (1, old_text, "First version.", None),
        (2, old_text + "\n- *Unclear*: too vague to check.", "Define unclear.", lead),
    ]


def test_a_guideline_change_without_a_note_is_refused(client_for, opened, lead):
    response = _edit(client_for(lead), opened, guidelines="Other rules.")

    opened.refresh_from_db()
    assert response.status_code == 200
    assert "Say what changed in the guidelines" in response.content.decode()
    assert opened.guidelines != "Other rules."
    assert GuidelineVersion.objects.filter(audit_set=opened).count() == 0


def test_each_sheet_records_the_version_it_was_submitted_under(
    opened, lead, reviewer_a, reviewer_b
):
    first, second = _claims(2)
    submit_sheet(reviewer_a, first, "unclear")
    services.set_update(
        audit_set=opened,
        by=lead,
        name=opened.name,
        description="",
        guidelines="New rules.",
        is_training=False,
        change_note="Rewritten.",
    )
    submit_sheet(reviewer_a, second, "unclear")

    numbers = dict(AuditSheet.objects.values_list("claim_id", "guideline_version__number"))
    assert numbers == {first.pk: 1, second.pk: 2}


def test_the_history_page_shows_the_diff_to_a_reviewer(client_for, opened, lead, reviewer_a):
    services.set_update(
        audit_set=opened,
        by=lead,
        name=opened.name,
        description="",
        guidelines="Line one.\nLine <two>.",
        is_training=False,
        change_note="Second line.",
    )

    body = (
        client_for(reviewer_a)
        .get(reverse("audit:guideline-history", args=[opened.pk]))
        .content.decode()
    )

    added = re.findall(r'<tr class="diff-added">.*?<td class="diff-text">(.*?)</td>', body)
    assert "Line &lt;two&gt;." in added
    assert '<span class="change-note">Second line.</span>' in body


def test_an_unknown_version_is_a_404(client_for, opened, reviewer_a):
    response = client_for(reviewer_a).get(
        reverse("audit:guideline-history", args=[opened.pk]) + "?version=99"
    )

    assert response.status_code == 404


def test_the_adjudication_page_shows_each_sheets_guideline_version(
    client_for, opened, lead, reviewer_a, reviewer_b
):
    (first,) = _claims(1)
    submit_sheet(reviewer_a, first, "not_supported")
    services.set_update(
        audit_set=opened,
        by=lead,
        name=opened.name,
        description="",
        guidelines="New rules.",
        is_training=False,
        change_note="Rewritten.",
    )
    submit_sheet(reviewer_b, first, "unclear")

    body = client_for(lead).get(reverse("audit:adjudicate", args=[first.pk])).content.decode()

    shown = re.findall(r'<dd class="sheet-guidelines"><a [^>]*>(version \d+)</a></dd>', body)
    assert shown == ["version 1", "version 2"]


def test_agreement_is_split_by_guideline_version(opened, lead, reviewer_a, reviewer_b):
    c1, c2, c3, c4 = _claims(4)
    for claim in (c1, c2):
        submit_sheet(reviewer_a, claim, "not_supported")
        submit_sheet(reviewer_b, claim, "unclear" if claim == c1 else "not_supported")
    services.set_update(
        audit_set=opened,
        by=lead,
        name=opened.name,
        description="",
        guidelines="New rules.",
        is_training=False,
        change_note="Rewritten.",
    )
    for claim in (c3, c4):
        submit_sheet(reviewer_a, claim, "not_supported")
        submit_sheet(reviewer_b, claim, "not_supported")

    rows = selectors.agreement_by_guideline_version(audit_set=opened)

    assert [(r.version.number, r.summary.n_items, r.summary.percent) for r in rows] == [
        (1, 2, 0.5),
        (2, 2, 1.0),
    ]


def test_the_agreement_page_splits_by_version_only_when_asked(
    client_for, opened, lead, reviewer_a, reviewer_b
):
    (first,) = _claims(1)
    submit_sheet(reviewer_a, first, "not_supported")
    submit_sheet(reviewer_b, first, "not_supported")
    url = reverse("audit:agreement", args=[opened.pk])
    client = client_for(lead)

    plain = client.get(url).content.decode()
    split = client.get(url + "?by=version").content.decode()

    rows = re.findall(r'<td><a href="[^"]*\?version=(\d+)">version \d+</a></td>', split)
    assert 'id="split-by-version"' in plain
    assert "?version=1" not in plain
    assert rows == ["1"]


def test_the_migration_gives_existing_sets_version_1_and_their_sheets_record_it(opened, reviewer_a):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("audit.migrations.0022_calibration")
    (first,) = _claims(1)
    sheet = submit_sheet(reviewer_a, first, "unclear")
    # As before the migration: no version, and a sheet that records none.
    AuditSheet.objects.update(guideline_version=None)
    GuidelineVersion.objects.all().delete()

    migration.first_versions(apps, None)

    version = GuidelineVersion.objects.get(audit_set=opened)
    sheet.refresh_from_db()
    assert (version.number, version.text) == (1, opened.guidelines)
    assert sheet.guideline_version == version
