"""Authorization matrix: every URL pattern, requested as anonymous, reviewer A, reviewer B and
a lead, with GET and POST, returns exactly the status written here. A URL pattern without an
entry fails the test, so a new page cannot ship without deciding who may see it."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from audit import services
from audit.models import Assignment, AuditSet, Claim, Job
from tests.conftest import FIXTURES, import_file
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "reviewer_a", "reviewer_b", "lead")
LOGIN = 302  # anonymous users are sent to the login page
# Django's own admin is guarded by is_staff; none of the roles is staff.
ADMIN_PREFIX = "admin:"
# The API authenticates by token, not session: its matrix is tests/test_api_authorization.py.
API_PREFIX = "api:"

# url name: {method: (anonymous, reviewer A, reviewer B, lead)}
# Reviewer A is assigned the claim; reviewer B reviews the same set but not that claim.
# Reviewer B is not a member of the "other" set used for set pages.
MATRIX: dict[str, dict[str, tuple[int, int, int, int]]] = {
    # Everyone signed in has a home and a list of the sets they may see.
    "audit:home": {"GET": (LOGIN, 200, 200, 200), "POST": (LOGIN, 200, 200, 200)},
    "audit:set-list": {"GET": (LOGIN, 200, 200, 200), "POST": (405, 405, 405, 405)},
    "audit:set-create": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:set-detail": {"GET": (LOGIN, 200, 200, 200), "POST": (405, 405, 405, 405)},
    "audit:label-distribution": {"GET": (LOGIN, 200, 200, 200), "POST": (405, 405, 405, 405)},
    # Continue redirects to the reviewer's own next claim (a lead has none: home).
    "audit:review-continue": {"GET": (LOGIN, 302, 302, 302), "POST": (LOGIN, 302, 302, 302)},
    "audit:set-progress": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:set-claims": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:claims-mark-answering": {
        "GET": (405, 405, 405, 405),
        "POST": (LOGIN, 403, 403, 302),
    },
    "audit:review-open": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:reviewer-replace": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 403, 403, 302)},
    "audit:set-export": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 405, 405, 405)},
    "audit:import": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    # Jobs are started and followed by leads only.
    "audit:job-list": {"GET": (LOGIN, 403, 403, 200), "POST": (405, 405, 405, 405)},
    "audit:job-detail": {"GET": (LOGIN, 403, 403, 200), "POST": (405, 405, 405, 405)},
    "audit:job-cancel": {"GET": (405, 405, 405, 405), "POST": (LOGIN, 403, 403, 302)},
    "audit:job-retry": {"GET": (405, 405, 405, 405), "POST": (LOGIN, 403, 403, 302)},
    "audit:answer-detail": {"GET": (LOGIN, 200, 200, 200), "POST": (405, 405, 405, 405)},
    # A claim's review page exists only for the reviewer it is assigned to.
    "audit:review-claim": {"GET": (LOGIN, 200, 404, 404), "POST": (LOGIN, 200, 404, 404)},
    "audit:review-save": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 400, 404, 404)},
    "audit:review-submit": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 200, 404, 404)},
    "audit:review-reopen": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 302, 404, 404)},
    "audit:flag-raise": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 302, 404, 404)},
    # Splitting: leads always; the assigned reviewer only where the set allows it (not here).
    "audit:claim-split": {"GET": (LOGIN, 403, 404, 200), "POST": (LOGIN, 403, 404, 200)},
    # Adjudication and agreement: lead-only pages; reviewers get a 403 whether or not the
    # object exists, so the refusal tells them nothing.
    "audit:adjudication-queue": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:adjudication-settings": {
        "GET": (LOGIN, 403, 403, 200),
        "POST": (LOGIN, 403, 403, 200),
    },
    "audit:agreement": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:agreement-claims": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:verdicts-upload": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:adjudicate": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:adjudicate-save": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 403, 403, 400)},
    "audit:claim-history": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    # Release report, criteria and comparison: lead-only, like agreement. The failing-claims
    # list needs ?system=&criterion=; without them even a lead gets a 404.
    "audit:set-report": {"GET": (LOGIN, 403, 403, 200), "POST": (405, 405, 405, 405)},
    "audit:set-report-claims": {"GET": (LOGIN, 403, 403, 404), "POST": (405, 405, 405, 405)},
    "audit:set-criteria": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 302)},
    "audit:set-compare": {"GET": (LOGIN, 403, 403, 200), "POST": (405, 405, 405, 405)},
    # Everyone signed in makes their own API tokens; only the owner revokes one (reviewer A's).
    "audit:token-list": {"GET": (LOGIN, 200, 200, 200), "POST": (LOGIN, 200, 200, 200)},
    "audit:token-revoke": {"GET": (405, 405, 405, 405), "POST": (LOGIN, 302, 404, 404)},
    "login": {"GET": (200, 200, 200, 200), "POST": (200, 200, 200, 200)},
    "logout": {"GET": (405, 405, 405, 405), "POST": (302, 302, 302, 302)},
}


def _patterns(resolver: URLResolver, prefix: str = "", namespace: str = "") -> list[tuple]:
    found = []
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            ns = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            found += _patterns(entry, prefix + str(entry.pattern), ns)
        elif isinstance(entry, URLPattern) and entry.name:
            found.append((f"{namespace}{entry.name}", prefix + str(entry.pattern)))
    return found


def all_url_names() -> list[tuple[str, str]]:
    return [
        (n, r) for n, r in _patterns(get_resolver()) if not n.startswith((ADMIN_PREFIX, API_PREFIX))
    ]


@pytest.fixture
def world(lead):
    reviewer_a = UserFactory(username="rev_a", role="reviewer")
    reviewer_b = UserFactory(username="rev_b", role="reviewer")
    audit_set = AuditSet.objects.create(name="Matrix")
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=1, by=lead
    )
    claim = Claim.objects.filter(assignments__reviewer=reviewer_a).order_by("pk").first()
    job = Job.objects.create(kind=Job.Kind.IMPORT, audit_set=audit_set, token="matrix")
    token, _text = services.token_create(user=reviewer_a, name="matrix", scope="read")
    assert not Assignment.objects.filter(claim=claim, reviewer=reviewer_b).exists()
    return {
        "users": {
            "anonymous": None,
            "reviewer_a": reviewer_a,
            "reviewer_b": reviewer_b,
            "lead": lead,
        },
        "set": audit_set,
        "claim": claim,
        "answer": claim.answer,
        "job": job,
        "token": token,
    }


def _url(route: str, world: dict) -> str:
    pk_for = {
        "sets/": world["set"].pk,
        "answers/": world["answer"].pk,
        "claims/": world["claim"].pk,
        "jobs/": world["job"].pk,
        "tokens/": world["token"].pk,
    }
    url = "/" + route
    for prefix, pk in pk_for.items():
        if url.startswith("/" + prefix):
            url = url.replace("<int:pk>", str(pk))
    return url.replace("<str:fmt>", "jsonl")


def _status(user, method: str, url: str) -> int:
    client = Client()
    if user is not None:
        client.force_login(user)
    response = client.get(url) if method == "GET" else client.post(url, {})
    return response.status_code


def test_every_url_pattern_has_an_entry():
    names = {name for name, _ in all_url_names()}

    assert sorted(names - set(MATRIX)) == []
    assert sorted(set(MATRIX) - names) == []


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_every_url_answers_each_role_as_written(world, method):
    actual, expected = {}, {}
    for name, route in all_url_names():
        url = _url(route, world)
        actual[name] = tuple(_status(world["users"][role], method, url) for role in ROLES)
        expected[name] = MATRIX.get(name, {}).get(method)

    assert actual == expected


def test_post_without_csrf_token_is_refused(world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(world["users"]["reviewer_a"])
    claim = world["claim"]

    response = client.post(f"/claims/{claim.pk}/review/save/", {"version": 1})

    assert response.status_code == 403


def _refusal_text(response) -> str:
    body = response.content.decode()
    start = body.index('<section class="refusal narrow"')
    return body[start : body.index("</section>", start)]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_every_refusal_is_a_styled_page_with_a_way_home(world, method):
    refusals = {}
    for name, route in all_url_names():
        url = _url(route, world)
        for role in ROLES:
            client = Client()
            if world["users"][role] is not None:
                client.force_login(world["users"][role])
            response = client.get(url) if method == "GET" else client.post(url, {})
            if response.status_code in (403, 404, 405):
                templates = [t.name for t in response.templates]
                refusals[(name, role)] = (
                    templates[:2],
                    'href="/">Go to your home page</a>' in response.content.decode(),
                )

    expected_template = {403: "403.html", 404: "404.html", 405: "405.html"}
    assert refusals == {
        (name, role): (
            [expected_template[MATRIX[name][method][ROLES.index(role)]], "base.html"],
            True,
        )
        for name, role in refusals
    }
    assert len(refusals) > 20


def test_opening_a_form_address_keeps_the_allow_header_on_the_styled_405(world):
    client = Client()
    client.force_login(world["users"]["reviewer_a"])

    response = client.get(f"/claims/{world['claim'].pk}/review/submit/")

    assert (response.status_code, response["Allow"]) == (405, "POST")
    assert "Not a page to open" in _refusal_text(response)


def test_reviewer_is_refused_a_lead_page_alike_whether_or_not_the_set_exists(world):
    client = Client()
    client.force_login(world["users"]["reviewer_b"])

    existing = client.get(f"/sets/{world['set'].pk}/agreement/")
    missing = client.get("/sets/999999/agreement/")

    assert (existing.status_code, missing.status_code) == (403, 403)
    assert _refusal_text(existing) == _refusal_text(missing)
    assert "This page is for leads." in _refusal_text(existing)


def test_unknown_address_is_a_styled_404_that_lists_no_url_patterns(world):
    client = Client()
    client.force_login(world["users"]["reviewer_a"])

    response = client.get("/sets/1/no-such-page/")

    assert response.status_code == 404
    assert [t.name for t in response.templates][:2] == ["404.html", "base.html"]
    assert _refusal_text(response) == (
        '<section class="refusal narrow" aria-labelledby="refusal-title">\n'
        '  <p class="refusal-code muted">Error 404</p>\n'
        '  <h1 id="refusal-title">Page not found</h1>\n'
        "  <p>There is no page at this address.</p>\n"
        '  <p class="muted">The address may be mistyped, or what it pointed to was removed or'
        " is not shared with your account.</p>\n"
        '  <p><a class="button" href="/">Go to your home page</a></p>\n'
    )
    assert "sets/&lt;int:pk&gt;" not in response.content.decode()


def test_server_error_page_renders_without_a_request():
    body = render_to_string("500.html")

    assert "Something went wrong on the server" in body
    assert 'href="/">Go to your home page</a>' in body


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_htmx_request_from_an_ended_session_gets_401_not_the_login_page(world, method):
    statuses = {}
    for name, route in all_url_names():
        url = _url(route, world)
        client = Client(headers={"HX-Request": "true"})
        response = client.get(url) if method == "GET" else client.post(url, {})
        statuses[name] = response.status_code

    assert statuses == {
        name: 401 if MATRIX[name][method][0] == LOGIN else MATRIX[name][method][0]
        for name in statuses
    }
