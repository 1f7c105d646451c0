"""Request budgets per API token: over budget a request gets 429 with Retry-After and a
JSON body; reads and writes count apart; the count lives in the shared cache."""

from __future__ import annotations

import pytest
from django.test import Client

from audit import services
from tests.conftest import api_client
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_budget(settings):
    settings.API_RATE_LIMIT_READS = 3
    settings.API_RATE_LIMIT_WRITES = 1
    settings.API_RATE_WINDOW_SECONDS = 600


def test_a_token_over_its_read_budget_gets_429_with_retry_after(small_budget):
    client = api_client(UserFactory())
    statuses = [client.get("/api/v1/me").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    refused = client.get("/api/v1/me")
    assert refused.status_code == 429
    retry_after = int(refused["Retry-After"])
    assert 1 <= retry_after <= 600
    body = refused.json()
    assert body["retry_after"] == retry_after
    assert body["detail"].startswith("Too many reads with this token")


def test_another_token_keeps_its_own_budget(small_budget):
    user = UserFactory()
    first = api_client(user)
    for _ in range(3):
        first.get("/api/v1/me")
    assert first.get("/api/v1/me").status_code == 429
    assert api_client(user).get("/api/v1/me").status_code == 200


def test_the_count_is_shared_by_two_clients_of_one_token(small_budget):
    _token, text = services.token_create(user=UserFactory(), name="ci", scope="write")
    one = Client(HTTP_AUTHORIZATION=f"Bearer {text}")
    two = Client(HTTP_AUTHORIZATION=f"Bearer {text}")
    assert [one.get("/api/v1/me").status_code for _ in range(2)] == [200, 200]
    assert [two.get("/api/v1/me").status_code for _ in range(2)] == [200, 429]
    assert one.get("/api/v1/me").status_code == 429


def test_writes_count_apart_from_reads(small_budget):
    client = api_client(UserFactory())
    body = {"name": "x"}
    # A reviewer may not create sets (403), but the request still spends the write budget.
    first = client.post("/api/v1/sets", body, content_type="application/json")
    second = client.post("/api/v1/sets", body, content_type="application/json")
    assert (first.status_code, second.status_code) == (403, 429)
    assert second.json()["detail"].startswith("Too many writes with this token")
    assert client.get("/api/v1/me").status_code == 200


def test_the_default_budgets_are_generous(settings):
    assert settings.API_RATE_LIMIT_READS >= 1000
    assert settings.API_RATE_LIMIT_WRITES >= 100
