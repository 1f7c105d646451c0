"""Conflicting requests sent at the same moment, over real HTTP through the test client in
threads (each with its own database connection): every answer is a success or a 409, never a
500, and the database ends as one of the serial orders would leave it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial

import pytest
from django.db import connection
from django.http import HttpResponse
from django.test import Client
from django.urls import reverse

from audit import roles, selectors, services
from audit.judgments import CONTRADICTED, NOT_SUPPORTED
from audit.metrics import release_flags
from audit.models import (
    Adjudication,
    AuditSheet,
    ClaimComment,
    ControlClaim,
    GuidelineFlag,
    Membership,
    ReleaseFact,
    ReleaseTally,
    ReviewerTally,
    Webhook,
    WebhookDelivery,
    Workspace,
)
from audit.services.release import release_tallies_rebuild
from audit.services.statuses import claim_statuses_refresh
from tests.factories import AuditSetFactory, UserFactory, answer_with_claims

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("role_groups")]

# Enough rounds that an interleaving which fails one time in a few shows up.
ROUNDS = 20


def _people(*names: str, role: str = roles.REVIEWER) -> list:
    return [UserFactory(username=name, role=role) for name in names]


def _opened(reviewers: list, *, lead, overlap: int, auto_gold: bool = True):
    audit_set = AuditSetFactory(auto_gold=auto_gold)
    _, claims = answer_with_claims(audit_set, ROUNDS)
    services.review_open(audit_set=audit_set, reviewers=reviewers, overlap=overlap, by=lead)
    return audit_set, claims


def _client(user, first_page: str) -> Client:
    """A logged-in browser that has loaded a page, so its session holds a CSRF secret as it
    does after a real login; a 500 comes back as a response, as a browser would see it."""
    client = Client(raise_request_exception=False)
    client.force_login(user)
    assert client.get(first_page).status_code == 200
    return client


def _tab_of(client: Client) -> Client:
    """Another tab of the same browser: the same session."""
    tab = Client(raise_request_exception=False)
    tab.cookies = client.cookies
    return tab


def _at_once(*sends: Callable[[], HttpResponse]) -> list[int]:
    """Send every request at the same moment, each from its own thread; their statuses."""
    barrier = threading.Barrier(len(sends))
    statuses: list[int] = [0] * len(sends)
    failures: list[BaseException] = []

    def run(index: int, send: Callable[[], HttpResponse]) -> None:
        try:
            barrier.wait()
            statuses[index] = send().status_code
        except BaseException as failure:  # noqa: BLE001 - reported by the test below
            failures.append(failure)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(sends)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    return statuses


def _sheet(claim, reviewer) -> AuditSheet:
    return services.sheet_for(claim=claim, reviewer=reviewer)


def _submitted(claim, reviewer, judgment: str) -> AuditSheet:
    sheet = _sheet(claim, reviewer)
    return services.sheet_submit(
        sheet=sheet,
        user=reviewer,
        version=sheet.version,
        data=services.SheetData(judgment=judgment),
    )


def _tallies_are_counts(audit_set) -> bool:
    stored = dict(
        ReviewerTally.objects.filter(audit_set=audit_set).values_list("reviewer_id", "submitted")
    )
    counted = {
        reviewer_id: AuditSheet.objects.filter(
            reviewer_id=reviewer_id,
            status=AuditSheet.Status.SUBMITTED,
            claim__assignments__reviewer_id=reviewer_id,
            claim__answer__audit_set=audit_set,
        ).count()
        for reviewer_id in stored
    }
    return stored == counted


def test_reopen_racing_the_other_reviewers_last_submit_ends_as_one_of_the_two_orders():
    lead = UserFactory(username="lead", role=roles.LEAD)
    a, b = _people("rev_a", "rev_b")
    audit_set, claims = _opened([a, b], lead=lead, overlap=2)
    for claim in claims:
        _submitted(claim, a, NOT_SUPPORTED)
    page = reverse("audit:review-claim", args=[claims[0].pk])
    client_a, client_b = _client(a, page), _client(b, page)

    statuses, outcomes = [], set()
    for claim in claims:
        version = _sheet(claim, b).version
        statuses += _at_once(
            partial(client_a.post, reverse("audit:review-reopen", args=[claim.pk])),
            partial(
                client_b.post,
                reverse("audit:review-submit", args=[claim.pk]),
                {"version": version, "judgment": NOT_SUPPORTED},
            ),
        )
        gold = Adjudication.objects.filter(claim=claim).first()
        outcome = (
            _sheet(claim, a).status,
            _sheet(claim, b).status,
            gold.source if gold else None,
            tuple(sorted(gold.sheets.values_list("reviewer__username", flat=True)) if gold else ()),
        )
        outcomes.add(outcome)
        # The stored status, derived in the same transaction, agrees with the rows.
        assert claim_statuses_refresh(claim_ids=[claim.pk]) == 0

    assert statuses == [302] * 2 * ROUNDS
    # Reopen first: A's sheet is a draft and the claim waits for it. Submit first: the two
    # identical sheets made unanimous gold, and the reopen was refused.
    assert outcomes <= {
        ("draft", "submitted", None, ()),
        ("submitted", "submitted", "unanimous", ("rev_a", "rev_b")),
    }
    assert _tallies_are_counts(audit_set)


def test_six_tabs_saving_one_sheet_at_once_keep_exactly_one_save_and_refuse_the_rest():
    lead = UserFactory(username="lead", role=roles.LEAD)
    a, b = _people("rev_a", "rev_b")
    _, claims = _opened([a, b], lead=lead, overlap=2)
    claim = claims[0]
    save = reverse("audit:review-save", args=[claim.pk])
    browser = _client(a, reverse("audit:review-claim", args=[claim.pk]))
    tabs = [browser] + [_tab_of(browser) for _ in range(5)]

    for round_ in range(ROUNDS):
        version = _sheet(claim, a).version
        statuses = _at_once(
            *(
                partial(
                    tab.post,
                    save,
                    {"version": version, "notes": f"round {round_} tab {i}"},
                    headers={"hx-request": "true"},
                )
                for i, tab in enumerate(tabs)
            )
        )
        sheet = _sheet(claim, a)

        assert sorted(statuses) == [200, 409, 409, 409, 409, 409]
        assert sheet.notes == f"round {round_} tab {statuses.index(200)}"
        assert sheet.version == version + 1


def test_four_reviewers_saving_their_own_sheets_at_once_all_succeed():
    lead = UserFactory(username="lead", role=roles.LEAD)
    people = _people("rev_a", "rev_b", "rev_c", "rev_d")
    _, claims = _opened(people, lead=lead, overlap=4)
    page = reverse("audit:review-claim", args=[claims[0].pk])
    clients = [_client(person, page) for person in people]

    for claim in claims:
        versions = [_sheet(claim, person).version for person in people]
        save = reverse("audit:review-save", args=[claim.pk])
        statuses = _at_once(
            *(
                partial(
                    client.post,
                    save,
                    {"version": version, "notes": f"{person.username} on {claim.pk}"},
                    headers={"hx-request": "true"},
                )
                for client, person, version in zip(clients, people, versions, strict=True)
            )
        )

        assert statuses == [200, 200, 200, 200]
        assert [_sheet(claim, p).notes for p in people] == [
            f"{p.username} on {claim.pk}" for p in people
        ]


def test_two_leads_saving_one_claims_gold_at_once_leave_one_gold_and_a_409():
    lead, other_lead = _people("lead", "lead2", role=roles.LEAD)
    a, b = _people("rev_a", "rev_b")
    _, claims = _opened([a, b], lead=lead, overlap=2)
    takes = []
    for claim in claims:
        takes.append((_submitted(claim, a, NOT_SUPPORTED), _submitted(claim, b, CONTRADICTED)))
    page = reverse("audit:adjudicate", args=[claims[0].pk])
    leads = [(lead, _client(lead, page)), (other_lead, _client(other_lead, page))]

    for claim, sheets in zip(claims, takes, strict=True):
        save = reverse("audit:adjudicate-save", args=[claim.pk])
        statuses = _at_once(
            *(
                partial(client.post, save, {"version": 0, "take": sheet.pk, "reason": "other"})
                for (_, client), sheet in zip(leads, sheets, strict=True)
            )
        )
        gold = Adjudication.objects.get(claim=claim)
        winner = statuses.index(302)

        assert sorted(statuses) == [302, 409]
        assert (gold.lead, gold.from_sheet, gold.version) == (leads[winner][0], sheets[winner], 1)
        assert gold.history.count() == 1


def test_two_reviewers_submitting_two_atomic_claims_of_one_parent_leave_its_release_fact_right():
    # The parent's release fact is derived from every atomic claim: two submits on two of
    # them at once must not each derive it from before the other (services/locks.py).
    lead = UserFactory(username="lead", role=roles.LEAD)
    a, b = _people("rev_a", "rev_b")
    audit_set, claims = _opened([a, b], lead=lead, overlap=2)
    parts = [services.AtomicPart("First part."), services.AtomicPart("Second part.")]
    atoms = [services.claim_split(claim=claim, parts=parts, by=lead) for claim in claims]
    page = reverse("audit:review-claim", args=[atoms[0][0].pk])
    client_a, client_b = _client(a, page), _client(b, page)

    statuses = []
    for first, second in atoms:
        # Each reviewer has judged the other's atomic claim already, so each submit completes
        # one atomic claim and the last one to commit completes the parent.
        _submitted(first, b, NOT_SUPPORTED)
        _submitted(second, a, NOT_SUPPORTED)
        statuses += _at_once(
            partial(
                client_a.post,
                reverse("audit:review-submit", args=[first.pk]),
                {"version": _sheet(first, a).version, "judgment": NOT_SUPPORTED},
            ),
            partial(
                client_b.post,
                reverse("audit:review-submit", args=[second.pk]),
                {"version": _sheet(second, b).version, "judgment": NOT_SUPPORTED},
            ),
        )

    assert statuses == [302] * 2 * ROUNDS
    stored = dict(
        ReleaseFact.objects.filter(claim__in=claims).values_list("claim_id", "provisional")
    )
    # Every atomic claim has both sheets in and agrees: no parent is left provisional.
    assert stored == {claim.pk: False for claim in claims}
    computed = {
        label.claim_id: release_flags(label)
        for label in selectors.top_claim_labels(claim_ids=[claim.pk for claim in claims])
    }
    assert {pk: computed[pk].provisional for pk in stored} == stored
    # The tallies moved by every difference, as a count from the facts gives them.
    moved = _release_tallies(audit_set)
    release_tallies_rebuild(audit_set_id=audit_set.pk)
    assert moved == _release_tallies(audit_set)


def _release_tallies(audit_set) -> list:
    return sorted(
        ReleaseTally.objects.filter(audit_set=audit_set, claims__gt=0).values_list("key", "claims")
    )


def test_two_owners_deactivating_each_other_at_once_leave_exactly_one_owner():
    workspace = Workspace.objects.create(name="Race", slug="race")
    for round_ in range(ROUNDS):
        pair = [UserFactory(username=f"owner{round_}_{n}") for n in "ab"]
        members = [
            Membership.objects.create(workspace=workspace, user=user, role="owner") for user in pair
        ]
        Membership.objects.filter(workspace=workspace).exclude(
            pk__in=[m.pk for m in members]
        ).update(is_active=False)
        page = reverse("audit:workspace-members", args=[workspace.slug])
        clients = [_client(user, page) for user in pair]

        statuses = _at_once(
            *(
                partial(
                    client.post,
                    reverse("audit:member-update", args=[workspace.slug, other.pk]),
                    {"action": "deactivate"},
                )
                for client, other in zip(clients, reversed(members), strict=True)
            )
        )

        # Each request is done (302, saying what happened) or comes after the other has
        # deactivated its sender, who no longer owns or sees the workspace (403 or 404).
        assert 302 in statuses and set(statuses) <= {302, 403, 404}
        owners = Membership.objects.filter(workspace=workspace, role="owner", is_active=True)
        assert owners.filter(pk__in=[m.pk for m in members]).count() == 1


def test_one_token_revoked_in_two_tabs_at_once_is_revoked_once():
    (owner,) = _people("owner", role=roles.LEAD)
    client = _client(owner, reverse("audit:token-list"))
    for round_ in range(ROUNDS):
        token, text = services.token_create(user=owner, name=f"ci {round_}", scope="read")
        revoke = reverse("audit:token-revoke", args=[token.pk])

        statuses = _at_once(*(partial(tab.post, revoke) for tab in (client, _tab_of(client))))

        token.refresh_from_db()
        first = token.revoked_at
        assert statuses == [302, 302]
        assert first is not None
        # A third click changes nothing: the token keeps the time it was revoked at.
        assert client.post(revoke).status_code == 302
        token.refresh_from_db()
        assert token.revoked_at == first
        assert Client().get("/api/v1/sets", HTTP_AUTHORIZATION=f"Bearer {text}").status_code == 401


def test_two_leads_marking_the_same_controls_through_the_api_at_once_mark_each_once():
    (lead,) = _people("lead", role=roles.LEAD)
    audit_set = AuditSetFactory()
    _, claims = answer_with_claims(audit_set, ROUNDS)
    for claim in claims:
        Adjudication.objects.create(claim=claim, judgment=NOT_SUPPORTED, source="edited", lead=lead)
    ids = [claim.pk for claim in claims]
    url = f"/api/v1/sets/{audit_set.pk}/controls"
    tabs = []
    for _ in range(2):
        _token, text = services.token_create(user=lead, name="ci", scope="write")
        tabs.append(Client(HTTP_AUTHORIZATION=f"Bearer {text}", raise_request_exception=False))
    answers: list[HttpResponse] = []

    def mark(tab: Client) -> HttpResponse:
        answers.append(tab.post(url, {"claims": ids}, content_type="application/json"))
        return answers[-1]

    statuses = _at_once(*(partial(mark, tab) for tab in tabs))

    assert statuses == [200, 200]
    assert sorted(answer.json()["changed"] for answer in answers) == [0, ROUNDS]
    assert ControlClaim.objects.filter(claim__answer__audit_set=audit_set).count() == ROUNDS


def test_two_leads_deleting_one_webhook_at_once_remove_it_and_its_log():
    lead, other_lead = _people("lead", "lead2", role=roles.LEAD)
    audit_set = AuditSetFactory()
    page = reverse("audit:set-webhooks", args=[audit_set.pk])
    clients = [_client(lead, page), _client(other_lead, page)]
    for round_ in range(ROUNDS):
        hook = Webhook.objects.create(
            audit_set=audit_set,
            url=f"https://example.org/hook/{round_}",
            secret="s3cret",
            events=["set.reviewed"],
        )
        WebhookDelivery.objects.create(webhook=hook, event="set.reviewed", body="{}")
        delete = reverse("audit:webhook-delete", args=[hook.pk])

        statuses = _at_once(*(partial(client.post, delete) for client in clients))

        # Each is done, or finds the webhook gone already.
        assert 302 in statuses and set(statuses) <= {302, 404}
        assert not Webhook.objects.filter(pk=hook.pk).exists()
        assert not WebhookDelivery.objects.filter(webhook_id=hook.pk).exists()


def _flagged(audit_set, claims, reviewer) -> list[GuidelineFlag]:
    return [
        services.guideline_flag_raise(claim=claim, user=reviewer, comment=f"Unclear: {n}")
        for n, claim in enumerate(claims)
    ]


def test_two_leads_opening_one_flag_as_a_thread_at_once_open_one_thread():
    lead, other_lead = _people("lead", "lead2", role=roles.LEAD)
    (reviewer,) = _people("rev")
    audit_set, claims = _opened([reviewer], lead=lead, overlap=1)
    flags = _flagged(audit_set, claims, reviewer)
    page = reverse("audit:set-progress", args=[audit_set.pk])
    clients = [_client(lead, page), _client(other_lead, page)]
    settle = reverse("audit:flag-settle", args=[audit_set.pk])

    for flag in flags:
        statuses = _at_once(
            *(partial(c.post, settle, {"flag": flag.pk, "action": "discuss"}) for c in clients)
        )

        assert statuses == [302, 302]
        assert ClaimComment.objects.filter(from_flag=flag).count() == 1


def test_two_leads_settling_one_flag_at_once_leave_one_of_the_two_settlements():
    lead, other_lead = _people("lead", "lead2", role=roles.LEAD)
    (reviewer,) = _people("rev")
    audit_set, claims = _opened([reviewer], lead=lead, overlap=1)
    flags = _flagged(audit_set, claims, reviewer)
    page = reverse("audit:set-progress", args=[audit_set.pk])
    settlers = [
        (lead, "resolve", _client(lead, page)),
        (other_lead, "dismiss", _client(other_lead, page)),
    ]
    settle = reverse("audit:flag-settle", args=[audit_set.pk])

    for flag in flags:
        statuses = _at_once(
            *(partial(c.post, settle, {"flag": flag.pk, "action": a}) for _, a, c in settlers)
        )

        flag.refresh_from_db()
        assert statuses == [302, 302]
        # Status, settler and time are one write: never one lead's status with the other's name.
        assert (flag.status, flag.settled_by) in {("resolved", lead), ("dismissed", other_lead)}
        assert flag.settled_at is not None


def test_one_flag_sent_from_two_tabs_at_once_is_raised_once():
    (lead,) = _people("lead", role=roles.LEAD)
    (reviewer,) = _people("rev")
    _, claims = _opened([reviewer], lead=lead, overlap=1)
    client = _client(reviewer, reverse("audit:review-claim", args=[claims[0].pk]))

    for claim in claims:
        raise_flag = reverse("audit:flag-raise", args=[claim.pk])
        statuses = _at_once(
            *(
                partial(tab.post, raise_flag, {"flag_comment": "Is a forecast a claim?"})
                for tab in (client, _tab_of(client))
            )
        )

        assert 500 not in statuses and len(set(statuses)) == 1
        assert GuidelineFlag.objects.filter(claim=claim, raised_by=reviewer).count() == 1


def test_a_source_pushed_again_and_deleted_at_once_ends_whole_or_gone_never_a_500():
    (lead,) = _people("lead-s", role=roles.LEAD)
    audit_set = AuditSetFactory()
    _, claims = answer_with_claims(audit_set, 3)
    records = [{"claim": claim.pk, "judgment": "supported"} for claim in claims]
    url = f"/api/v1/sets/{audit_set.pk}/suggestions"
    push_body = {"name": "nli", "version": "1", "suggestions": records}

    def push(client: Client) -> HttpResponse:
        return client.post(url, push_body, content_type="application/json")

    def delete(client: Client, source_id: int) -> HttpResponse:
        return client.delete(f"/api/v1/sets/{audit_set.pk}/suggestion-sources/{source_id}")

    from audit.models import Suggestion, SuggestionSource
    from tests.conftest import api_client

    outcomes = set()
    for _ in range(ROUNDS):
        first, second = api_client(lead), api_client(lead)
        first.raise_request_exception = second.raise_request_exception = False
        assert push(first).status_code == 200
        source_id = SuggestionSource.objects.get(audit_set=audit_set).pk

        statuses = _at_once(
            partial(push, first),
            partial(delete, second, source_id),
            partial(delete, first, source_id),
        )

        assert statuses[0] == 200 and set(statuses[1:]) <= {204, 404}, statuses
        assert statuses[1:].count(204) <= 1
        # Whole or gone: a source left standing holds every pushed suggestion.
        left = list(SuggestionSource.objects.filter(audit_set=audit_set))
        assert len(left) <= 1
        if left:
            assert Suggestion.objects.filter(source=left[0]).count() == len(records)
            left[0].delete()
        assert not Suggestion.objects.filter(source__audit_set=audit_set).exists()
        outcomes.add(bool(left))
    assert outcomes  # at least one order was seen
