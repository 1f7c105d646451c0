"""Authorization matrix: every URL pattern, requested as anonymous, reviewer A, reviewer B and
a lead, with GET and POST, returns exactly the status written here. A URL pattern without an
entry fails the test, so a new page cannot ship without deciding who may see it."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from audit import services
from audit.models import Assignment, AuditSet, Claim, Job, JudgeRun, Membership, Webhook, Workspace
from audit.services import workspaces
from audit.services.judges import judge_create
from tests.conftest import FIXTURES, import_file
from tests.factories import UserFactory, default_workspace

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
    # A POST queues the export as a job (a large set's GET offers that instead of a file).
    "audit:set-export": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 302)},
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
    "audit:suggestions-upload": {
        "GET": (LOGIN, 403, 403, 200),
        "POST": (LOGIN, 403, 403, 200),
    },
    "audit:adjudicate": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:adjudicate-save": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 403, 403, 400)},
    "audit:claim-history": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    # Release report, criteria and comparison: lead-only, like agreement. The failing-claims
    # list needs ?system=&criterion=; without them even a lead gets a 404.
    "audit:set-report": {"GET": (LOGIN, 403, 403, 200), "POST": (405, 405, 405, 405)},
    "audit:set-report-claims": {"GET": (LOGIN, 403, 403, 404), "POST": (405, 405, 405, 405)},
    "audit:set-criteria": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 302)},
    "audit:set-compare": {"GET": (LOGIN, 403, 403, 200), "POST": (405, 405, 405, 405)},
    "audit:suggestion-comparison": {"GET": (LOGIN, 403, 403, 200), "POST": (405, 405, 405, 405)},
    # Automatic judges: lead-only, like agreement; an empty POST is a form shown again (400)
    # or a refusal said on the judge's page (302).
    "audit:judge-list": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:judge-detail": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:judge-threshold": {"GET": (405, 405, 405, 405), "POST": (LOGIN, 403, 403, 400)},
    "audit:judge-run": {"GET": (405, 405, 405, 405), "POST": (LOGIN, 403, 403, 400)},
    "audit:judge-calibration": {"GET": (LOGIN, 403, 403, 200), "POST": (405, 405, 405, 405)},
    "audit:judge-accept": {"GET": (405, 405, 405, 405), "POST": (LOGIN, 403, 403, 302)},
    "audit:judge-run-detail": {"GET": (LOGIN, 403, 403, 200), "POST": (405, 405, 405, 405)},
    "audit:judge-run-resume": {"GET": (405, 405, 405, 405), "POST": (LOGIN, 403, 403, 302)},
    # An export's file is downloaded by the lead who asked for it; the job here is an import.
    "audit:job-download": {"GET": (LOGIN, 403, 403, 404), "POST": (405, 405, 405, 405)},
    "audit:set-rematch": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 403, 403, 302)},
    # Webhooks: a set's leads register and remove them.
    "audit:set-webhooks": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:webhook-delete": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 403, 403, 302)},
    "audit:webhook-deliveries": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 405, 405, 405)},
    # Asked after the lead removed the hook (above): no such hook, so no such delivery.
    "audit:webhook-redeliver": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 403, 403, 404)},
    # A workspace's own webhooks: its leads and owners.
    "audit:workspace-webhooks": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    # Skipping: the assigned reviewer only; an empty reason is refused with a message.
    "audit:review-skip": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 302, 404, 404)},
    # Everyone signed in has their own feedback page (a lead's lists their own sheets).
    "audit:my-feedback": {"GET": (LOGIN, 200, 200, 200), "POST": (405, 405, 405, 405)},
    # Editing a set is for leads; its guideline versions are for everyone who reviews in it.
    "audit:set-edit": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:guideline-history": {"GET": (LOGIN, 200, 200, 200), "POST": (405, 405, 405, 405)},
    # Controls and reviewers against gold: lead-only, like agreement.
    "audit:set-calibration": {"GET": (LOGIN, 403, 403, 200), "POST": (LOGIN, 403, 403, 200)},
    "audit:reviewer-pause": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 403, 403, 302)},
    # A claim's discussion: its reviewer (refused with a message until their sheet is in:
    # a redirect) and leads; anyone else gets a 404. Flags are settled by leads.
    "audit:comment-create": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 302, 404, 302)},
    "audit:flag-settle": {"GET": (LOGIN, 405, 405, 405), "POST": (LOGIN, 403, 403, 302)},
    # Everyone signed in makes their own API tokens; only the owner revokes one (reviewer A's).
    "audit:token-list": {"GET": (LOGIN, 200, 200, 200), "POST": (LOGIN, 200, 200, 200)},
    "audit:token-revoke": {"GET": (405, 405, 405, 405), "POST": (LOGIN, 302, 404, 404)},
    "login": {"GET": (200, 200, 200, 200), "POST": (200, 200, 200, 200)},
    "logout": {"GET": (405, 405, 405, 405), "POST": (302, 302, 302, 302)},
    # Everyone sees their own workspaces; only a site administrator creates one.
    "audit:workspace-list": {"GET": (LOGIN, 200, 200, 200), "POST": (LOGIN, 403, 403, 403)},
    # Members pages are for owners (the lead here is a lead, not an owner).
    "audit:workspace-members": {"GET": (LOGIN, 403, 403, 403), "POST": (LOGIN, 403, 403, 403)},
    "audit:member-update": {"GET": (405, 405, 405, 405), "POST": (LOGIN, 403, 403, 403)},
    "audit:invitation-revoke": {"GET": (405, 405, 405, 405), "POST": (LOGIN, 403, 403, 403)},
    # The invitation link is open to whoever holds it. Posting it signed in joins (once:
    # the next person gets the 404 of a used link); anonymous, the empty account form is a
    # 400.
    "audit:invitation-accept": {"GET": (200, 200, 200, 200), "POST": (400, 302, 404, 404)},
    "password_change": {"GET": (LOGIN, 200, 200, 200), "POST": (LOGIN, 200, 200, 200)},
    "password_change_done": {"GET": (LOGIN, 200, 200, 200), "POST": (LOGIN, 405, 405, 405)},
    "password_reset": {"GET": (200, 200, 200, 200), "POST": (200, 200, 200, 200)},
    "password_reset_done": {"GET": (200, 200, 200, 200), "POST": (405, 405, 405, 405)},
    # A made-up uid and token: the page says the link is used or expired.
    "password_reset_confirm": {"GET": (200, 200, 200, 200), "POST": (200, 200, 200, 200)},
    "password_reset_complete": {"GET": (200, 200, 200, 200), "POST": (405, 405, 405, 405)},
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
def world(lead, egress_loopback):
    reviewer_a = UserFactory(username="rev_a", role="reviewer")
    reviewer_b = UserFactory(username="rev_b", role="reviewer")
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="Matrix")
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=1, by=lead
    )
    claim = Claim.objects.filter(assignments__reviewer=reviewer_a).order_by("pk").first()
    job = Job.objects.create(kind=Job.Kind.IMPORT, audit_set=audit_set, token="matrix")
    judge = judge_create(
        audit_set=audit_set,
        fields={"name": "matrix", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
        user=lead,
    )
    run = JudgeRun.objects.create(
        judge=judge, version=judge.versions.get(), claim_ids=[claim.pk], job=job
    )
    webhook = Webhook.objects.create(
        audit_set=audit_set, url="http://127.0.0.1:9/", secret="s", events=["set.reviewed"]
    )
    # A delivery of it to send again (a redelivery only queues it: nothing is sent here).
    webhook.deliveries.create(event="set.reviewed", body="{}")
    api_token, _text = services.token_create(user=reviewer_a, name="matrix", scope="read")
    assert not Assignment.objects.filter(claim=claim, reviewer=reviewer_b).exists()
    owner = _owner()
    # One invitation to withdraw, another to accept: the matrix withdraws before accepting.
    invitation, _ = workspaces.invitation_create(
        workspace=audit_set.workspace, email="gone@example.org", role="reviewer", by=owner
    )
    _, token = workspaces.invitation_create(
        workspace=audit_set.workspace, email="new@example.org", role="reviewer", by=owner
    )
    return {
        "workspace": audit_set.workspace,
        "membership": Membership.objects.get(user=reviewer_a, workspace=audit_set.workspace),
        "invitation": invitation,
        "token": token,
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
        "judge": judge,
        "run": run,
        "webhook": webhook,
        "api_token": api_token,
    }


def _owner():
    """An owner of the default workspace, who is none of the matrix's roles."""
    owner = UserFactory(username="matrix_owner", role="owner")
    return owner


def _url(route: str, world: dict) -> str:
    pk_for = {
        "sets/": world["set"].pk,
        "answers/": world["answer"].pk,
        "claims/": world["claim"].pk,
        "jobs/": world["job"].pk,
        "judges/": world["judge"].pk,
        "judge-runs/": world["run"].pk,
        "webhooks/": world["webhook"].pk,
        "workspaces/<slug:slug>/members/": world["membership"].pk,
        "workspaces/<slug:slug>/invitations/": world["invitation"].pk,
        "tokens/": world["api_token"].pk,
    }
    url = "/" + route
    for prefix, pk in pk_for.items():
        if url.startswith("/" + prefix):
            url = url.replace("<int:pk>", str(pk))
    return (
        url.replace("<str:fmt>", "jsonl")
        .replace("<slug:slug>", world["workspace"].slug)
        .replace("<str:token>", world["token"])
        .replace("<uidb64>/<token>", "MQ/made-up-token")
        .replace("<uuid:delivery>", _delivery_uuid(world))
    )


def _delivery_uuid(world: dict) -> str:
    delivery = world["webhook"].deliveries.first()
    # Once the matrix has removed the hook, any id: the answer is the hook's 404.
    return str(delivery.uuid) if delivery else "00000000-0000-0000-0000-000000000000"


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
    assert sorted(names - set(WORKSPACE_MATRIX)) == []
    assert sorted(set(WORKSPACE_MATRIX) - names) == []


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


# ------------------------------------------------------------------------ workspace axis

WS_ROLES = ("stranger", "reviewer_a", "lead_a", "owner_a", "lead_b", "admin")
EVERYONE = (200,) * 6
NOT_A_FORM = NOT_A_PAGE = (405,) * 6
LEADS_ANYWHERE = (403, 403, 200, 200, 200, 200)
SET_MEMBERS = (404, 200, 200, 200, 404, 200)
SET_MEMBERS_302 = (404, 302, 302, 302, 404, 302)
LEAD_PAGE = (403, 403, 200, 200, 404, 200)
LEAD_ACTION = (403, 403, 302, 302, 404, 302)
ASSIGNEE = (404, 200, 404, 404, 404, 404)
ASSIGNEE_302 = (404, 302, 404, 404, 404, 404)
# An empty post to the members page shows its invitation form again.
OWNER_PAGE = {"GET": (403, 403, 403, 200, 403, 200), "POST": (403, 403, 403, 200, 403, 200)}

# url name: {method: (stranger, reviewer of A, lead of A, owner of A, lead of B, site
# admin)}, every object in workspace A. The stranger is signed in and a member of nothing;
# workspace B has its own lead and set. A lead of B gets the 404 a stranger gets on A's
# objects wherever a lead page is open to them at all; a user who leads nowhere gets the
# lead pages' 403 before any lookup.
WORKSPACE_MATRIX: dict[str, dict[str, tuple[int, ...]]] = {
    "audit:home": {"GET": EVERYONE, "POST": EVERYONE},
    "audit:set-list": {"GET": EVERYONE, "POST": NOT_A_FORM},
    # Creating and importing: a lead of any workspace (each picks among their own).
    "audit:set-create": {"GET": LEADS_ANYWHERE, "POST": LEADS_ANYWHERE},
    "audit:import": {"GET": LEADS_ANYWHERE, "POST": LEADS_ANYWHERE},
    "audit:job-list": {"GET": LEADS_ANYWHERE, "POST": NOT_A_FORM},
    # Pages of a set for its members: a stranger and a lead of B get the same 404.
    "audit:set-detail": {"GET": SET_MEMBERS, "POST": NOT_A_FORM},
    "audit:label-distribution": {"GET": SET_MEMBERS, "POST": NOT_A_FORM},
    "audit:answer-detail": {"GET": SET_MEMBERS, "POST": NOT_A_FORM},
    "audit:review-continue": {"GET": SET_MEMBERS_302, "POST": SET_MEMBERS_302},
    # Lead pages of A's objects.
    "audit:set-progress": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:set-claims": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:claims-mark-answering": {"GET": NOT_A_PAGE, "POST": LEAD_ACTION},
    "audit:review-open": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:reviewer-replace": {"GET": NOT_A_PAGE, "POST": LEAD_ACTION},
    "audit:adjudication-queue": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:adjudication-settings": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:agreement": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:agreement-claims": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:verdicts-upload": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:suggestions-upload": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    # POST queues an export job (a large set's export runs in the background).
    "audit:set-export": {"GET": LEAD_PAGE, "POST": LEAD_ACTION},
    "audit:set-report": {"GET": LEAD_PAGE, "POST": NOT_A_FORM},
    # Without ?system=&criterion= even a lead of A gets a 404.
    "audit:set-report-claims": {"GET": (403, 403, 404, 404, 404, 404), "POST": NOT_A_FORM},
    "audit:set-criteria": {"GET": LEAD_PAGE, "POST": LEAD_ACTION},
    "audit:set-compare": {"GET": LEAD_PAGE, "POST": NOT_A_FORM},
    "audit:suggestion-comparison": {"GET": LEAD_PAGE, "POST": NOT_A_FORM},
    "audit:job-detail": {"GET": LEAD_PAGE, "POST": NOT_A_FORM},
    "audit:job-cancel": {"GET": NOT_A_PAGE, "POST": LEAD_ACTION},
    "audit:job-retry": {"GET": NOT_A_PAGE, "POST": LEAD_ACTION},
    "audit:adjudicate": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:adjudicate-save": {"GET": NOT_A_PAGE, "POST": (403, 403, 400, 400, 404, 400)},
    "audit:claim-history": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    # The claim is assigned to reviewer A alone.
    "audit:review-claim": {"GET": ASSIGNEE, "POST": ASSIGNEE},
    "audit:review-save": {"GET": NOT_A_PAGE, "POST": (404, 400, 404, 404, 404, 404)},
    "audit:review-submit": {"GET": NOT_A_PAGE, "POST": ASSIGNEE},
    "audit:review-reopen": {"GET": NOT_A_PAGE, "POST": ASSIGNEE_302},
    "audit:flag-raise": {"GET": NOT_A_PAGE, "POST": ASSIGNEE_302},
    # Leads of A split; reviewer A may not in this set (403); anyone else: no such claim.
    "audit:claim-split": {
        "GET": (404, 403, 200, 200, 404, 200),
        "POST": (404, 403, 200, 200, 404, 200),
    },
    # Automatic judges, webhooks, rematch, controls and set editing: lead pages of A's set.
    "audit:judge-list": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:judge-detail": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:judge-threshold": {"GET": NOT_A_PAGE, "POST": (403, 403, 400, 400, 404, 400)},
    "audit:judge-run": {"GET": NOT_A_PAGE, "POST": (403, 403, 400, 400, 404, 400)},
    "audit:judge-calibration": {"GET": LEAD_PAGE, "POST": NOT_A_FORM},
    "audit:judge-accept": {"GET": NOT_A_PAGE, "POST": LEAD_ACTION},
    "audit:judge-run-detail": {"GET": LEAD_PAGE, "POST": NOT_A_FORM},
    "audit:judge-run-resume": {"GET": NOT_A_PAGE, "POST": LEAD_ACTION},
    # The world's job is an import: nothing to download, for anyone who may know of it.
    "audit:job-download": {"GET": (403, 403, 404, 404, 404, 404), "POST": NOT_A_FORM},
    "audit:set-rematch": {"GET": NOT_A_PAGE, "POST": LEAD_ACTION},
    "audit:set-webhooks": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    # The lead of A deletes the hook; later requests find none.
    "audit:webhook-delete": {"GET": NOT_A_PAGE, "POST": (403, 403, 302, 404, 404, 404)},
    "audit:webhook-deliveries": {"GET": LEAD_PAGE, "POST": NOT_A_PAGE},
    # Asked after the lead of A removed the hook: a 404 for everyone who may lead at all.
    "audit:webhook-redeliver": {"GET": NOT_A_PAGE, "POST": (403, 403, 404, 404, 404, 404)},
    "audit:workspace-webhooks": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:set-edit": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:set-calibration": {"GET": LEAD_PAGE, "POST": LEAD_PAGE},
    "audit:reviewer-pause": {"GET": NOT_A_PAGE, "POST": LEAD_ACTION},
    "audit:flag-settle": {"GET": NOT_A_PAGE, "POST": LEAD_ACTION},
    # The guidelines' versions: everyone who reviews or leads in the set.
    "audit:guideline-history": {"GET": SET_MEMBERS, "POST": NOT_A_FORM},
    "audit:review-skip": {"GET": NOT_A_PAGE, "POST": ASSIGNEE_302},
    "audit:my-feedback": {"GET": EVERYONE, "POST": NOT_A_FORM},
    # A claim's thread: its reviewer (refused with a message before their sheet is in) and
    # the leads of its set.
    "audit:comment-create": {"GET": NOT_A_PAGE, "POST": (404, 302, 302, 302, 404, 302)},
    # Everyone's own API tokens; only the owner (reviewer A) revokes theirs.
    "audit:token-list": {"GET": EVERYONE, "POST": EVERYONE},
    "audit:token-revoke": {"GET": NOT_A_PAGE, "POST": ASSIGNEE_302},
    "audit:workspace-list": {"GET": EVERYONE, "POST": (403, 403, 403, 403, 403, 200)},
    "audit:workspace-members": OWNER_PAGE,
    # An empty post names no role: 400 for those allowed to post at all.
    "audit:member-update": {"GET": NOT_A_PAGE, "POST": (403, 403, 403, 400, 403, 400)},
    "audit:invitation-revoke": {"GET": NOT_A_PAGE, "POST": (403, 403, 403, 302, 403, 302)},
    # Whoever holds the link may join, once: the stranger joins, then it is used.
    "audit:invitation-accept": {"GET": EVERYONE, "POST": (302, 404, 404, 404, 404, 404)},
    "login": {"GET": EVERYONE, "POST": EVERYONE},
    "logout": {"GET": NOT_A_PAGE, "POST": (302,) * 6},
    "password_change": {"GET": EVERYONE, "POST": EVERYONE},
    "password_change_done": {"GET": EVERYONE, "POST": NOT_A_FORM},
    "password_reset": {"GET": EVERYONE, "POST": EVERYONE},
    "password_reset_done": {"GET": EVERYONE, "POST": NOT_A_FORM},
    "password_reset_confirm": {"GET": EVERYONE, "POST": EVERYONE},
    "password_reset_complete": {"GET": EVERYONE, "POST": NOT_A_FORM},
}


@pytest.fixture
def workspaces_world(world):
    workspace_a = world["workspace"]
    workspace_b = Workspace.objects.create(name="Legal", slug="legal")
    lead_b = UserFactory(username="lead_b")
    Membership.objects.create(workspace=workspace_b, user=lead_b, role="lead")
    AuditSet.objects.create(workspace=workspace_b, name="Legal answers")
    owner_a = UserFactory(username="owner_a")
    Membership.objects.create(workspace=workspace_a, user=owner_a, role="owner")
    users = {
        "stranger": UserFactory(username="stranger"),
        "reviewer_a": world["users"]["reviewer_a"],
        "lead_a": world["users"]["lead"],
        "owner_a": owner_a,
        "lead_b": lead_b,
        "admin": UserFactory(username="root", is_superuser=True, is_staff=True),
    }
    return {**world, "users": users}


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_every_url_answers_each_workspace_role_as_written(workspaces_world, method):
    actual, expected = {}, {}
    for name, route in all_url_names():
        url = _url(route, workspaces_world)
        actual[name] = tuple(
            _status(workspaces_world["users"][role], method, url) for role in WS_ROLES
        )
        expected[name] = WORKSPACE_MATRIX.get(name, {}).get(method)

    assert actual == expected
