"""Workspaces: the migration into a default workspace, visibility per membership (a property
test over random workspaces), invitations, role changes, deactivation and passwords."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from audit import selectors, services
from audit.models import (
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    Invitation,
    Membership,
    Workspace,
)
from audit.services import workspaces
from audit.views import accounts
from tests.conftest import FIXTURES, import_file
from tests.factories import UserFactory, default_workspace, submit_sheet

BEFORE = [("audit", "0022_calibration")]
AFTER = [("audit", "0023_workspaces")]


# ------------------------------------------------------------------------------ migration


@pytest.mark.django_db(transaction=True)
def test_migration_puts_every_set_in_the_default_workspace_with_todays_roles():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Group, OldUser = old.get_model("auth", "Group"), old.get_model("auth", "User")
    OldSet = old.get_model("audit", "AuditSet")
    lead_group, _ = Group.objects.get_or_create(name="lead")
    reviewer_group, _ = Group.objects.get_or_create(name="reviewer")
    lena = OldUser.objects.create(username="old_lena")
    alice = OldUser.objects.create(username="old_alice")
    both = OldUser.objects.create(username="old_both")
    OldUser.objects.create(username="old_nobody")
    lena.groups.add(lead_group)
    alice.groups.add(reviewer_group)
    both.groups.add(lead_group, reviewer_group)
    OldSet.objects.create(name="HR")
    OldSet.objects.create(name="Legal")

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    NewSet = new.get_model("audit", "AuditSet")
    NewMembership = new.get_model("audit", "Membership")

    default = new.get_model("audit", "Workspace").objects.get()
    assert (default.slug, default.name) == ("default", "Default")
    assert sorted(NewSet.objects.values_list("name", "workspace_id")) == [
        ("HR", default.pk),
        ("Legal", default.pk),
    ]
    roles = NewMembership.objects.filter(user__username__startswith="old_")
    assert sorted(roles.values_list("user__username", "role", "is_active")) == [
        ("old_alice", "reviewer", True),
        ("old_both", "lead", True),
        ("old_lena", "lead", True),
    ]
    assert not new.get_model("auth", "Group").objects.filter(name__in=["lead", "reviewer"])

    # Back to 0019: the groups come back from the default workspace's memberships.
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    groups = old.get_model("auth", "Group").objects.order_by("name")
    assert [(g.name, sorted(u.username for u in g.user_set.all())) for g in groups] == [
        ("lead", ["old_both", "old_lena"]),
        ("reviewer", ["old_alice"]),
    ]
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


# ---------------------------------------------------------------------------- visibility


ROLE = st.sampled_from(["owner", "lead", "reviewer"])


@pytest.mark.django_db
@hypothesis_settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    n_workspaces=st.integers(1, 3),
    n_users=st.integers(1, 4),
)
def test_each_users_visible_sets_are_those_of_their_active_memberships(data, n_workspaces, n_users):
    Membership.objects.all().delete()
    AuditSet.objects.all().delete()
    Workspace.objects.all().delete()
    spaces = [Workspace.objects.create(name=f"W{i}", slug=f"w{i}") for i in range(n_workspaces)]
    users = [UserFactory(username=f"prop{i}") for i in range(n_users)]
    sets = []
    for space in spaces:
        for j in range(data.draw(st.integers(0, 3), label=f"sets in {space.slug}")):
            sets.append(AuditSet.objects.create(workspace=space, name=f"{space.slug}-{j}"))
    expected: dict[int, set[int]] = {u.pk: set() for u in users}
    for user in users:
        for space in spaces:
            role = data.draw(st.none() | ROLE, label=f"{user.username} in {space.slug}")
            if role is None:
                continue
            active = data.draw(st.booleans(), label="active")
            Membership.objects.create(workspace=space, user=user, role=role, is_active=active)
            in_space = [s for s in sets if s.workspace_id == space.pk]
            reviewed = [s for s in in_space if data.draw(st.booleans(), label="reviews")]
            for audit_set in reviewed:
                audit_set.reviewers.add(user)
            if active:
                expected[user.pk] |= {
                    s.pk for s in (in_space if role in ("owner", "lead") else reviewed)
                }

    for user in users:
        user = User.objects.get(pk=user.pk)  # no role cached from an earlier round
        visible = set(selectors.sets_visible_to(user=user).values_list("pk", flat=True))
        client = Client()
        client.force_login(user)
        page = client.get(reverse("audit:set-list"), {"per_page": 100})
        listed = {row.record.pk for row in page.context["table"].page.object_list}

        assert (visible, listed) == (expected[user.pk], expected[user.pk])


# --------------------------------------------------------------------------- invitations


@pytest.fixture
def owner(db):
    return UserFactory(username="owner", role="owner")


def test_invitation_link_makes_an_account_that_joins_with_the_invited_role(owner):
    workspace = default_workspace()
    invitation, token = workspaces.invitation_create(
        workspace=workspace, email="ann@example.org", role="reviewer", by=owner
    )

    assert token not in invitation.token_hash and len(invitation.token_hash) == 64
    membership = workspaces.invitation_accept(token=token, username="ann", password="S3cret-pw!")

    ann = User.objects.get(username="ann")
    assert (membership.user, membership.role, membership.is_active) == (ann, "reviewer", True)
    assert (ann.email, ann.check_password("S3cret-pw!")) == ("ann@example.org", True)
    with pytest.raises(workspaces.MembershipError, match="used, withdrawn or expired"):
        workspaces.invitation_accept(token=token, username="ann2", password="S3cret-pw!")


def test_expired_or_withdrawn_invitations_open_nothing(owner):
    workspace = default_workspace()
    old, old_token = workspaces.invitation_create(
        workspace=workspace, email="a@example.org", role="lead", by=owner
    )
    Invitation.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    withdrawn, withdrawn_token = workspaces.invitation_create(
        workspace=workspace, email="b@example.org", role="lead", by=owner
    )
    workspaces.invitation_revoke(invitation=withdrawn, by=owner)

    assert workspaces.invitation_usable(old_token) is None
    assert workspaces.invitation_usable(withdrawn_token) is None
    assert Client().get(reverse("audit:invitation-accept", args=[old_token])).status_code == 404


def test_only_an_owner_of_the_workspace_invites(owner, lead):
    other = Workspace.objects.create(name="Legal", slug="legal")

    with pytest.raises(PermissionDenied):
        workspaces.invitation_create(
            workspace=default_workspace(), email="x@example.org", role="reviewer", by=lead
        )
    with pytest.raises(PermissionDenied):
        workspaces.invitation_create(
            workspace=other, email="x@example.org", role="reviewer", by=owner
        )


def test_signed_in_user_accepting_gains_the_membership_only(owner, client_for, reviewer_a):
    legal = Workspace.objects.create(name="Legal", slug="legal")
    Membership.objects.create(workspace=legal, user=owner, role="owner")
    _, token = workspaces.invitation_create(
        workspace=legal, email="rev@example.org", role="lead", by=owner
    )
    users_before = User.objects.count()

    response = client_for(reviewer_a).post(reverse("audit:invitation-accept", args=[token]))

    assert response.status_code == 302
    assert User.objects.count() == users_before
    assert sorted(
        Membership.objects.filter(user=reviewer_a).values_list("workspace__slug", "role")
    ) == [("default", "reviewer"), ("legal", "lead")]


def test_owner_invites_from_the_members_page_and_the_mail_carries_the_link(owner, client_for):
    client = client_for(owner)
    url = reverse("audit:workspace-members", args=["default"])

    response = client.post(url, {"email": "new@example.org", "role": "lead"}, follow=True)

    assert response.status_code == 200
    [message] = mail.outbox
    link = re.search(r"http://testserver(/invitations/\S+/)", message.body).group(1)
    assert message.to == ["new@example.org"]
    signup = Client().post(
        link,
        {"username": "newlead", "password1": "A-long-pass-123", "password2": "A-long-pass-123"},
    )
    assert signup.status_code == 302
    assert Membership.objects.get(user__username="newlead").role == "lead"


# ---------------------------------------------------------------------- roles, deactivate


def test_a_workspace_keeps_an_owner(owner):
    membership = Membership.objects.get(user=owner)

    with pytest.raises(workspaces.MembershipError, match="needs an owner"):
        workspaces.member_role_change(membership=membership, role="lead", by=owner)
    with pytest.raises(workspaces.MembershipError, match="needs an owner"):
        workspaces.member_deactivate(membership=membership, by=owner)


def test_role_change_takes_effect_on_the_next_request(owner, lead, client_for):
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="HR")
    url = reverse("audit:set-progress", args=[audit_set.pk])
    assert client_for(lead).get(url).status_code == 200

    workspaces.member_role_change(
        membership=Membership.objects.get(user=lead), role="reviewer", by=owner
    )

    assert client_for(lead).get(url).status_code == 403


def test_deactivating_a_reviewer_returns_open_claims_and_keeps_submitted_sheets(
    owner, lead, reviewer_a, reviewer_b, client_for
):
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="HR")
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    mine = list(
        Assignment.objects.filter(reviewer=reviewer_a)
        .order_by("claim_id")
        .values_list("claim_id", flat=True)
    )
    done = mine[0]
    submit_sheet(reviewer_a, Claim.objects.get(pk=done), "contradicted")

    summary = workspaces.member_deactivate(
        membership=Membership.objects.get(user=reviewer_a), by=owner
    )

    assert (summary.returned, summary.kept) == (len(mine) - 1, 1)
    assert list(
        Assignment.objects.filter(reviewer=reviewer_a).values_list("claim_id", flat=True)
    ) == [done]
    kept = AuditSheet.objects.get(claim_id=done, reviewer=reviewer_a)
    assert kept.status == AuditSheet.Status.SUBMITTED
    assert list(audit_set.reviewers.all()) == [reviewer_b]
    # Gone from every page of the workspace, as if a stranger.
    client = client_for(reviewer_a)
    assert client.get(reverse("audit:set-detail", args=[audit_set.pk])).status_code == 404
    assert client.get(reverse("audit:review-claim", args=[done])).status_code == 404
    assert selectors.sets_visible_to(user=User.objects.get(pk=reviewer_a.pk)).count() == 0
    # The lead still sees the sheet, under the reviewer's name.
    history = client_for(lead).get(reverse("audit:claim-history", args=[done]))
    assert "rev_a" in history.content.decode()


@pytest.mark.parametrize("page", ["membership", "workspace"])
def test_unticking_active_in_the_admin_also_returns_open_claims(
    page, lead, reviewer_a, reviewer_b, admin_client
):
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="HR")
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    done = Assignment.objects.filter(reviewer=reviewer_a).order_by("claim_id")[0].claim
    submit_sheet(reviewer_a, done, "contradicted")
    membership = Membership.objects.get(user=reviewer_a)

    if page == "membership":
        url = reverse("admin:audit_membership_change", args=[membership.pk])
        form = {"user": reviewer_a.pk, "workspace": membership.workspace_id, "role": "reviewer"}
    else:
        workspace = membership.workspace
        url = reverse("admin:audit_workspace_change", args=[workspace.pk])
        rows = list(workspace.memberships.order_by("pk"))
        form = {"name": workspace.name, "slug": workspace.slug}
        prefix = "memberships"
        form |= {
            f"{prefix}-TOTAL_FORMS": len(rows),
            f"{prefix}-INITIAL_FORMS": len(rows),
            f"{prefix}-MIN_NUM_FORMS": 0,
            f"{prefix}-MAX_NUM_FORMS": 1000,
        }
        for i, row in enumerate(rows):
            form |= {
                f"{prefix}-{i}-id": row.pk,
                f"{prefix}-{i}-workspace": workspace.pk,
                f"{prefix}-{i}-user": row.user_id,
                f"{prefix}-{i}-role": row.role,
            }
            if row.pk != membership.pk and row.is_active:
                form[f"{prefix}-{i}-is_active"] = "on"
    response = admin_client.post(url, form)

    assert response.status_code == 302
    membership.refresh_from_db()
    assert membership.is_active is False
    assert list(
        Assignment.objects.filter(reviewer=reviewer_a).values_list("claim_id", flat=True)
    ) == [done.pk]
    assert list(audit_set.reviewers.all()) == [reviewer_b]


# ------------------------------------------------------------------------------ passwords


def test_password_reset_mails_a_link_that_sets_a_new_password(reviewer_a):
    reviewer_a.email = "rev_a@example.org"
    reviewer_a.save()
    client = Client()

    client.post(reverse("password_reset"), {"email": "rev_a@example.org"})
    [message] = mail.outbox
    link = re.search(r"http://testserver(/password/reset/\S+/)", message.body).group(1)
    form_page = client.get(link, follow=True)
    client.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "Another-pass-987", "new_password2": "Another-pass-987"},
    )

    reviewer_a.refresh_from_db()
    assert reviewer_a.check_password("Another-pass-987")


def test_password_reset_mails_one_address_at_most_three_times_an_hour(reviewer_a):
    reviewer_a.email = "rev_a@example.org"
    reviewer_a.save()

    pages = [
        Client(REMOTE_ADDR=f"10.0.0.{i}").post(reverse("password_reset"), {"email": address})
        for i, address in enumerate(["rev_a@example.org", "REV_A@example.org "] * 3)
    ]

    # Every answer is the usual "sent" page, so none tells whether the limit was reached.
    assert [page.status_code for page in pages] == [302] * 6
    assert {page.url for page in pages} == {reverse("password_reset_done")}
    assert len(mail.outbox) == accounts.PER_ADDRESS


def test_password_reset_refuses_a_client_past_ten_requests_an_hour(reviewer_a):
    client = Client(REMOTE_ADDR="10.0.0.7")
    answers = [
        client.post(reverse("password_reset"), {"email": f"nobody{i}@example.org"}).status_code
        for i in range(accounts.PER_CLIENT + 1)
    ]
    elsewhere = Client(REMOTE_ADDR="10.0.0.8").post(
        reverse("password_reset"), {"email": "someone@example.org"}
    )

    assert answers == [302] * accounts.PER_CLIENT + [429]
    refused = client.post(reverse("password_reset"), {"email": "x@example.org"})
    assert refused["Retry-After"] == "3600"
    assert "Too many password-reset requests" in refused.content.decode()
    assert elsewhere.status_code == 302


def test_password_change_needs_the_old_password(reviewer_a, client_for):
    client = client_for(reviewer_a)

    wrong = client.post(
        reverse("password_change"),
        {
            "old_password": "nope",
            "new_password1": "N3w-pass-4567",
            "new_password2": "N3w-pass-4567",
        },
    )
    right = client.post(
        reverse("password_change"),
        {
            "old_password": "pw-for-tests",
            "new_password1": "N3w-pass-4567",
            "new_password2": "N3w-pass-4567",
        },
    )

    reviewer_a.refresh_from_db()
    assert (wrong.status_code, right.status_code) == (200, 302)
    assert reviewer_a.check_password("N3w-pass-4567")


# ---------------------------------------------------------------------- single sign-on


@pytest.mark.django_db
def test_single_sign_on_is_off_unless_configured(client):
    from django.conf import settings

    page = client.get(reverse("login")).content.decode()

    assert not settings.OIDC_ENABLED
    assert not [app for app in settings.INSTALLED_APPS if app.startswith("allauth")]
    assert "Sign in with" not in page


def test_single_sign_on_configured_by_the_environment_adds_the_provider():
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "audit.settings",
        "OIDC_SERVER_URL": "https://idp.example.org/realms/acme",
        "OIDC_CLIENT_ID": "citeaudit",
        "OIDC_CLIENT_SECRET": "not-a-real-secret",
        "OIDC_NAME": "Acme SSO",
    }
    script = (
        "import django; django.setup()\n"
        "from django.conf import settings\n"
        "from django.urls import reverse\n"
        "from django.template.loader import render_to_string\n"
        "from django.test import RequestFactory\n"
        "from audit.context_processors import roles\n"
        "app = settings.SOCIALACCOUNT_PROVIDERS['openid_connect']['APPS'][0]\n"
        "print(reverse('openid_connect_login', kwargs={'provider_id': 'sso'}))\n"
        "print(app['settings']['server_url'], app['client_id'])\n"
        "print(roles(RequestFactory().get('/login/'))['oidc_name'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )

    assert done.stderr == ""
    assert done.stdout.splitlines() == [
        "/accounts/oidc/sso/login/",
        "https://idp.example.org/realms/acme citeaudit",
        "Acme SSO",
    ]


# ------------------------------------------------------------------------------ commands


@pytest.mark.django_db
def test_commands_name_the_workspace_once_there_are_several():
    import io

    from django.core.management import CommandError, call_command

    path = str(FIXTURES / "demo" / "handmade.jsonl")
    default_workspace()
    call_command("import_answers", path, "--set", "HR", "--workers", "0", stdout=io.StringIO())
    legal = Workspace.objects.create(name="Legal", slug="legal")

    with pytest.raises(CommandError, match=r"name the workspace with --workspace \(one of: "):
        call_command("import_answers", path, "--set", "HR", stdout=io.StringIO())
    call_command(
        "import_answers",
        path,
        "--set",
        "HR",
        "--workspace",
        "legal",
        "--workers",
        "0",
        stdout=io.StringIO(),
    )
    with pytest.raises(CommandError, match="several workspaces have a set named “HR”"):
        call_command("export_labels", "--set", "HR", "--format", "jsonl", stdout=io.StringIO())
    out = io.StringIO()
    call_command(
        "export_labels", "--set", "HR", "--format", "jsonl", "--workspace", "legal", stdout=out
    )

    assert sorted(AuditSet.objects.values_list("workspace__slug", "name")) == [
        ("default", "HR"),
        ("legal", "HR"),
    ]
    assert AuditSet.objects.get(workspace=legal).answers.count() > 0
    assert out.getvalue().count("\n") > 0


def test_workspace_list_counts_every_active_member_and_set(owner, reviewer_a, lead, client_for):
    AuditSet.objects.create(workspace=default_workspace(), name="HR")
    Workspace.objects.create(name="Legal", slug="legal")

    rows = client_for(reviewer_a).get(reverse("audit:workspace-list")).context["rows"]

    assert [
        (r["workspace"].slug, r["role"], r["workspace"].members, r["workspace"].set_count)
        for r in rows
    ] == [("default", "Reviewer", 3, 1)]
