"""Claims named by their answer's id and place ("hm-1-a claim 1") beside the key: the pure
name, the API's claim payloads, the decision JSON and the gate's output."""

from __future__ import annotations

import json

import pytest

from audit import services
from audit.claims import claim_name
from audit.gate import describe
from audit.models import Adjudication
from audit.services.splits import AtomicPart
from tests.conftest import api_client, gold_by_agreement
from tests.factories import claim_at


def test_a_claim_is_named_by_its_answer_and_place_from_one():
    assert claim_name(answer_id="refund-a1", order=0) == "refund-a1 claim 1"
    assert claim_name(answer_id="refund-a1", order=4) == "refund-a1 claim 5"


def test_an_atomic_claim_is_named_under_its_parent():
    assert claim_name(answer_id="refund-a1", order=0, parent_order=1) == "refund-a1 claim 2.1"


@pytest.mark.django_db
def test_the_api_names_claims_in_lists_detail_and_gold(opened, lead, reviewer_a, reviewer_b):
    client = api_client(lead)
    second = claim_at("hm-1-a", 1)
    atoms = services.claim_split(
        claim=second, parts=[AtomicPart("One fact."), AtomicPart("Another fact.")], by=lead
    )
    listed = client.get(f"/api/v1/sets/{opened.pk}/claims", {"limit": 500}).json()["items"]
    names = {c["id"]: c["name"] for c in listed}
    assert names[claim_at("hm-1-a", 0).pk] == "hm-1-a claim 1"
    assert names[second.pk] == "hm-1-a claim 2"
    assert [names[a.pk] for a in atoms] == ["hm-1-a claim 2.1", "hm-1-a claim 2.2"]
    detail = client.get(f"/api/v1/claims/{atoms[1].pk}").json()
    assert detail["name"] == "hm-1-a claim 2.2"
    first = claim_at("hm-1-a", 0)
    gold_by_agreement([reviewer_a, reviewer_b], first)
    response = client.get(f"/api/v1/sets/{opened.pk}/gold")
    rows = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert [(r["claim"], r["name"]) for r in rows] == [(first.pk, "hm-1-a claim 1")]


@pytest.mark.django_db
def test_the_decision_and_the_gate_name_the_failing_claims(opened, lead, reviewer_a, reviewer_b):
    services.criteria_update(audit_set=opened, criteria=[{"kind": "no_contradicted"}], by=None)
    wrong = claim_at("hm-2-a", 0)
    gold_by_agreement([reviewer_a, reviewer_b], wrong)
    Adjudication.objects.filter(claim=wrong).update(judgment="contradicted", source="edited")
    services.claims_changed(claim_ids=[wrong.pk])
    decision = (
        api_client(lead).get(f"/api/v1/sets/{opened.pk}/decision", {"system": "handmade v1"}).json()
    )
    named = decision["failed"][0]["claims"][0]
    assert (named["id"], named["name"]) == (wrong.pk, "hm-2-a claim 1")
    assert f"hm-2-a claim 1 (id {wrong.pk}): " in describe(decision)
