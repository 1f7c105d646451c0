"""Every API refusal is RFC 9457 problem details, documented as such in the served OpenAPI
schema; every answer has a named schema; the Python client reads the problems."""

from __future__ import annotations

import json
import sys

import httpx2
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError
from django.test import Client as DjangoClient

from audit import problems, selectors
from audit.api.base import Problem
from tests.conftest import ROOT, api_client

sys.path.insert(0, str(ROOT / "clients" / "python" / "src"))

from citeaudit_client import Client, Invalid, NotFound  # noqa: E402

pytestmark = pytest.mark.django_db

OPENAPI = "/api/v1/openapi.json"


def _schema() -> dict:
    response = DjangoClient().get(OPENAPI)
    assert response.status_code == 200
    return response.json()


def _operations(schema: dict):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            yield f"{method.upper()} {path}", operation


def _is_typed(schema: dict) -> bool:
    """A named model, a list of one, or an object with declared properties."""
    if "$ref" in schema:
        return True
    if schema.get("type") == "array":
        return _is_typed(schema.get("items", {}))
    return bool(schema.get("properties"))


# ------------------------------------------------------------------------- the schema walk


def test_every_operation_documents_its_refusals_with_the_problem_model():
    schema = _schema()
    operations = list(_operations(schema))
    assert len(operations) >= 25
    wrong = []
    for name, operation in operations:
        refusals = {s: r for s, r in operation["responses"].items() if int(s) >= 400}
        # Every operation can meet a bad token, a NUL character and a busy database.
        if not {"400", "401", "503"} <= set(refusals):
            wrong.append((name, "missing", sorted(refusals)))
        for status, answer in refusals.items():
            content = answer.get("content", {})
            ref = content.get(problems.CONTENT_TYPE, {}).get("schema", {}).get("$ref")
            if set(content) != {problems.CONTENT_TYPE} or ref != "#/components/schemas/Problem":
                wrong.append((name, status, content))
    assert wrong == []


def test_every_success_has_a_typed_schema():
    schema = _schema()
    wrong = []
    for name, operation in _operations(schema):
        successes = {s: r for s, r in operation["responses"].items() if 200 <= int(s) < 300}
        if not successes:
            wrong.append((name, "no 2xx"))
        for status, answer in successes.items():
            for media, body in answer.get("content", {}).items():
                if media == "application/json":
                    typed = _is_typed(body.get("schema", {}))
                else:
                    # A streamed file (JSON Lines, CSV, a JSON document): its media type
                    # says the format, the schema what it is at the top.
                    typed = body.get("schema", {}).get("type") in ("string", "array")
                if not typed:
                    wrong.append((name, status, media, body))
            # 204 No Content has no body by definition; every other success has one.
            if not answer.get("content") and status != "204":
                wrong.append((name, status, "no content"))
    assert wrong == []


def test_the_problem_model_is_the_rfc_shape():
    problem = _schema()["components"]["schemas"]["Problem"]
    assert set(problem["required"]) == {"type", "title", "status", "detail", "errors"}
    assert problem["properties"]["errors"]["items"] == {"$ref": "#/components/schemas/FieldError"}


# ----------------------------------------------------------------- each status, for real


def _busy(monkeypatch):
    def locked(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(selectors, "sets_visible_to", locked)


# (status, who asks, method, path, data, setup); `who` is a token's scope or None for none.
SPECIFIC = [
    (400, "write", "get", "/api/v1/sets?name=a%00b", None, None),
    (400, "write", "get", "/api/v1/jobs?cursor=nonsense", None, None),
    (401, None, "get", "/api/v1/sets", None, None),
    (401, "bogus", "get", "/api/v1/me", None, None),
    (403, "read", "post", "/api/v1/sets", {"name": "Read-only"}, None),
    (404, "write", "get", "/api/v1/sets/999999", None, None),
    (404, "write", "get", "/api/v1/no-such-address", None, None),
    (405, "write", "delete", "/api/v1/sets", None, None),
    (409, "write", "post", "/api/v1/sets", {"name": "Calibration"}, None),
    (413, "write", "post", "/api/v1/sets/{set}/verdicts", "file", "small_limit"),
    (422, "write", "get", "/api/v1/sets/not-a-number", None, None),
    (422, "write", "patch", "/api/v1/sets/{set}/settings", {"guidelines_note": "x"}, None),
    (429, "write", "get", "/api/v1/sets", None, "rate_limited"),
    (503, "write", "get", "/api/v1/sets", None, "busy"),
]


@pytest.mark.parametrize(
    ("status", "who", "method", "path", "data", "setup"),
    SPECIFIC,
    ids=[f"{row[0]}-{row[2]}-{row[3]}" for row in SPECIFIC],
)
def test_each_refusal_is_problem_details(
    status, who, method, path, data, setup, opened, lead, settings, monkeypatch
):
    if setup == "small_limit":
        settings.IMPORT_MAX_WHOLE_BYTES = 10
    if setup == "busy":
        _busy(monkeypatch)
    if setup == "rate_limited":
        settings.API_RATE_LIMIT_READS = 1
    if who is None:
        client = DjangoClient()
    elif who == "bogus":
        client = DjangoClient(HTTP_AUTHORIZATION="Bearer cit_not-a-token")
    else:
        client = api_client(lead, scope=who)
    url = path.format(set=opened.pk)
    if setup == "rate_limited":
        assert client.get(url).status_code == 200  # the window's one read
    if data == "file":
        upload = SimpleUploadedFile("verdicts.jsonl", b'{"judge": "nli"}\n' * 10)
        response = client.post(url, {"file": upload})
    elif data is not None:
        response = getattr(client, method)(url, data, content_type="application/json")
    else:
        response = getattr(client, method)(url)

    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == problems.CONTENT_TYPE
    body = json.loads(response.content)
    documented = _schema()["components"]["schemas"]["Problem"]
    # The standard members always; a 429 adds its retry_after, which the schema names.
    assert set(documented["required"]) <= set(body) <= set(documented["properties"])
    assert ("retry_after" in body) == (status == 429)
    Problem.model_validate(body, strict=True)
    assert body["status"] == status
    assert body["type"] == problems.problem_type(status)
    assert body["type"].startswith(problems.TYPE_BASE)
    assert body["title"] == problems.KINDS[status].title
    assert body["detail"]


def test_a_field_error_names_its_field(opened, lead):
    client = api_client(lead)
    url = f"/api/v1/sets/{opened.pk}/settings"
    typed = client.patch(url, {"evidence_jaccard_threshold": 2}, content_type="application/json")
    refused = client.patch(url, {"guidelines_note": "x"}, content_type="application/json")

    assert (typed.status_code, refused.status_code) == (422, 422)
    assert [e["field"] for e in typed.json()["errors"]] == [
        "body.payload.evidence_jaccard_threshold"
    ]
    assert typed.json()["detail"].startswith(
        "Invalid request: body.payload.evidence_jaccard_threshold: "
    )
    # Raised by the endpoint (FieldInvalid), not by the request's validation.
    assert refused.json()["errors"] == [
        {"field": "body.guidelines_note", "message": refused.json()["errors"][0]["message"]}
    ]
    assert refused.json()["detail"] == (
        f"Invalid request: body.guidelines_note: {refused.json()['errors'][0]['message']}"
    )
    assert refused.json()["errors"][0]["message"]


def test_a_405_names_the_methods_allowed():
    response = DjangoClient().put("/api/v1/sets")
    assert response.status_code == 405
    assert set(response["Allow"].replace(" ", "").split(",")) == {"GET", "POST"}
    assert response.json()["detail"] == "PUT is not allowed here."


def test_a_status_with_no_meaning_of_ours_is_about_blank():
    body = problems.problem(418, "")
    assert body == {
        "type": "about:blank",
        "title": "I'm a Teapot",
        "status": 418,
        "detail": "I'm a Teapot",
        "errors": [],
    }


# -------------------------------------------------------------------------- the client


def _through_django(token: str) -> httpx2.MockTransport:
    """The client's requests answered by the app in this test's transaction."""
    django = DjangoClient(HTTP_AUTHORIZATION=f"Bearer {token}")

    def handle(request: httpx2.Request) -> httpx2.Response:
        answer = django.generic(
            request.method,
            request.url.raw_path.decode(),
            request.read(),
            content_type=request.headers.get("Content-Type", ""),
        )
        return httpx2.Response(
            answer.status_code,
            content=answer.content,
            headers={"Content-Type": answer["Content-Type"]},
        )

    return httpx2.MockTransport(handle)


def test_the_client_carries_the_problem_members(opened, lead):
    from audit import services

    _token, text = services.token_create(user=lead, name="client", scope="write")
    with Client("http://citeaudit.test", text, transport=_through_django(text), retries=0) as c:
        with pytest.raises(Invalid) as invalid:
            c.set_settings_update(opened.pk, evidence_jaccard_threshold=2)
        with pytest.raises(NotFound) as missing:
            c.set(opened.pk + 1000)

    error = invalid.value
    assert (error.status, error.type, error.title) == (
        422,
        problems.TYPE_BASE + "invalid",
        "Invalid request",
    )
    assert error.detail.startswith("Invalid request: body.payload.evidence_jaccard_threshold")
    assert [e["field"] for e in error.errors] == ["body.payload.evidence_jaccard_threshold"]
    assert all(e["message"] for e in error.errors)
    assert (missing.value.status, missing.value.type, missing.value.errors) == (
        404,
        problems.TYPE_BASE + "not-found",
        [],
    )
    assert missing.value.detail == "No such audit set."


# -------------------------------------------------------- every documented refusal is met


def _concrete(path: str, operation: dict) -> str:
    """The path with an id no one has for each id, the first choice of each enum."""
    for parameter in operation.get("parameters", []):
        if parameter["in"] != "path":
            continue
        schema = parameter.get("schema", {})
        if "enum" in schema:
            value = schema["enum"][0]
        elif schema.get("format") == "uuid":
            value = "00000000-0000-4000-8000-000000000000"
        else:
            value = 987654321
        path = path.replace("{" + parameter["name"] + "}", str(value))
    return path


def test_every_documented_refusal_status_is_met_by_a_request_above():
    # Each status that any operation documents is answered by a real request in SPECIFIC.
    documented = {
        int(status)
        for _name, operation in _operations(_schema())
        for status in operation["responses"]
        if int(status) >= 400
    }
    assert documented <= {row[0] for row in SPECIFIC}


def test_each_operation_answers_the_refusals_it_documents_for_a_stranger(opened, lead):
    """Every operation, called as it documents: without a token it answers 401; a NUL in a
    query answers 400; where it documents 404, an id no one has answers 404; where it
    documents 403, a read-only token on a write answers 403 (or 404: no such set). Every
    one of them as problem details."""
    write = api_client(lead, scope="write")
    read = api_client(lead, scope="read")
    anonymous = DjangoClient()
    wrong = []
    operations = 0
    for path, methods in _schema()["paths"].items():
        for method, operation in methods.items():
            operations += 1
            name = f"{method.upper()} {path}"
            statuses = {int(s) for s in operation["responses"] if int(s) >= 400}
            url = _concrete(path, operation)
            assert "{" not in url, f"no stand-in for a parameter of {path}"

            def expect(client, allowed, what, *, url=url, method=method, name=name):
                answer = client.generic(method.upper(), url, b"{}", content_type="application/json")
                if answer.status_code not in allowed:
                    wrong.append((name, what, answer.status_code))
                elif answer["Content-Type"] != problems.CONTENT_TYPE:
                    wrong.append((name, what, answer["Content-Type"]))

            expect(anonymous, {401}, "no token")
            expect(write, {400}, "NUL", url=url + "?q=a%00b")
            # An operation that needs a body or a query parameter checks it first (422).
            needs_input = "requestBody" in operation or any(
                p.get("required") and p["in"] == "query" for p in operation.get("parameters", [])
            )
            if 404 in statuses and url != path:
                expect(write, {404, 422} if needs_input else {404}, "unknown id")
            if 403 in statuses and method != "get":
                expect(read, {403, 404}, "read-only token")
    assert operations >= 25
    assert wrong == [], wrong
