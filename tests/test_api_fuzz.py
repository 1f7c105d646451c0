"""A schema-driven fuzz run: schemathesis generates requests from the API's OpenAPI schema
(wrong types, missing fields, odd strings, huge numbers) and none may get a 500. Each
operation is tried with the generated ids and with real ones, so the bodies and queries
reach the code behind the lookups. Every answer, refusals included, must be one the schema
documents: its status, content type and shape. Kept to a few examples per operation for
CI."""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from audit import services
from audit.models import Claim, Job

pytestmark = pytest.mark.django_db

EXAMPLES = 12
CONFORMANCE = (status_code_conformance, content_type_conformance, response_schema_conformance)


@pytest.fixture
def in_test_transaction(db):
    # Requests go through the WSGI handler in this thread and this test's transaction;
    # closing "old" connections at a request's end would drop that transaction.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(in_test_transaction):
    from audit.wsgi import application

    return schemathesis.openapi.from_wsgi("/api/v1/openapi.json", application)


@pytest.fixture
def real_ids(in_test_transaction, opened, lead):
    _token, text = services.token_create(user=lead, name="fuzz", scope="write")
    job = Job.objects.create(kind=Job.Kind.IMPORT, audit_set=opened, token="fuzz")
    return {
        "token": text,
        "set_id": opened.pk,
        "claim_id": Claim.objects.filter(answer__audit_set=opened).order_by("pk").first().pk,
        "job_id": job.pk,
    }


def test_no_generated_request_gets_a_500(api_schema, real_ids):
    headers = {"Authorization": f"Bearer {real_ids['token']}"}
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 18

    def check(case) -> None:
        response = case.call(headers=headers)
        where = (case.method, case.formatted_path, response.text[:500])
        assert response.status_code < 500, where
        case.validate_response(response, checks=CONFORMANCE)
        if not case.path_parameters:
            return
        for name in case.path_parameters:
            if name in real_ids:
                case.path_parameters[name] = real_ids[name]
        response = case.call(headers=headers)
        where = (case.method, case.formatted_path, response.text[:500])
        assert response.status_code < 500, where
        if response.status_code >= 400:
            assert response.json()["detail"], where
        # Every answer, refusals included, is one the schema documents, in its shape.
        case.validate_response(response, checks=CONFORMANCE)

    for operation in operations:
        run = settings(
            max_examples=EXAMPLES,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )(given(case=operation.as_strategy())(check))
        run()
