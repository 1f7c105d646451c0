"""Release facts: the stored flags the set page's release summary sums."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.urls import reverse

from audit import selectors, services
from audit.judgments import SUPPORTED
from audit.metrics import release_flags
from audit.models import ReleaseFact, ReleaseTally
from tests.factories import evidence_ref, submit_sheet

pytestmark = pytest.mark.django_db


def _stored(audit_set) -> dict:
    return {
        fact.claim_id: (fact.system, fact.supported, fact.provisional, fact.topics)
        for fact in ReleaseFact.objects.filter(audit_set=audit_set)
    }


def test_every_top_level_claim_of_an_imported_set_has_its_release_fact(handmade):
    labels = selectors.claim_labels(audit_set=handmade)

    assert len(labels) > 0
    assert _stored(handmade) == {
        label.claim_id: (label.system, False, True, list(release_flags(label).topics))
        for label in labels
    }


def test_migrate_fills_the_release_facts_of_a_set_stored_before_there_were_any(
    opened, reviewer_a, reviewer_b
):
    claim = opened.answers.order_by("pk").first().claims.filter(citations__isnull=False).first()
    position = claim.citations.order_by("position").first().position
    sentence = claim.answer.passages.get(position=position).text.split(".")[0]
    for reviewer in (reviewer_a, reviewer_b):
        submit_sheet(reviewer, claim, SUPPORTED, evidence_ref(claim, position, sentence))
    before = _stored(opened), _tallies(opened)
    assert before[0][claim.pk][1:3] == (True, False)  # unanimous gold, supported
    ReleaseFact.objects.filter(audit_set=opened).delete()

    call_command("migrate", verbosity=0)

    assert (_stored(opened), _tallies(opened)) == before


def test_deleting_a_release_fact_in_the_admin_only_has_it_written_again(admin_client, handmade):
    fact = ReleaseFact.objects.filter(audit_set=handmade).order_by("pk").first()
    before = _stored(handmade)

    response = admin_client.post(
        reverse("admin:audit_releasefact_delete", args=[fact.pk]), {"post": "yes"}
    )

    assert response.status_code == 302
    assert _stored(handmade) == before


def test_deleting_a_release_tally_in_the_admin_has_the_sets_tallies_counted_again(
    admin_client, handmade
):
    tally = ReleaseTally.objects.filter(audit_set=handmade).order_by("pk").first()
    before = _tallies(handmade)

    response = admin_client.post(
        reverse("admin:audit_releasetally_delete", args=[tally.pk]), {"post": "yes"}
    )

    assert response.status_code == 302
    assert _tallies(handmade) == before


def _tallies(audit_set) -> list:
    return sorted(
        ReleaseTally.objects.filter(audit_set=audit_set, claims__gt=0).values_list(
            "system", "key", "claims"
        )
    )


def test_a_new_claim_s_inserted_fact_is_the_row_an_update_writes(handmade):
    # An import inserts its new claims' facts; claims_changed over claims that have facts
    # updates them in place. Both must store the same columns, the topics' JSON text too.
    def raw() -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT * FROM {ReleaseFact._meta.db_table} WHERE audit_set_id = %s "
                "ORDER BY claim_id",
                [handmade.pk],
            )
            return cursor.fetchall()

    inserted = raw(), _tallies(handmade)

    services.set_changed(audit_set_id=handmade.pk)

    assert (raw(), _tallies(handmade)) == inserted
    assert len(inserted[0]) > 0
