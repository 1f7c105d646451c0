"""A lead's review work through both doors, the pages and the API: assigning and replacing
reviewers, control claims, the adjudication queue and comparing runs. Each use case is one
service or selector, so both doors show the same rows and write the same ones; both refuse
the same people, and a token sees nothing outside its limit."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from audit import services
from audit.judgments import CONTRADICTED, NOT_SUPPORTED, PARTIAL, SUPPORTED
from audit.models import Assignment, AuditSet, ControlClaim, Membership, Workspace
from tests.conftest import FIXTURES, api_client, import_file, refund_set_with_gold
from tests.factories import AuditSetFactory, UserFactory, claim_at, evidence_ref, submit_sheet
from tests.views.test_reports import V3, judge_third_run

pytestmark = pytest.mark.django_db

HANDMADE = FIXTURES / "demo" / "handmade.jsonl"
FULL_TIME = "Full-time employees are entitled to 25 days of paid annual leave in each leave year."
PART_TIME = "Part-time employees receive the same entitlement pro rata to their contracted hours."


def _api(path: str, audit_set: AuditSet) -> str:
    return f"/api/v1/sets/{audit_set.pk}/{path}"


def _names(response, field: str) -> bool:
    """The refusal names the field (ninja's own checks put it under `payload`)."""
    where, _, name = field.partition(".")
    return bool(re.search(rf"\b{where}\.(payload\.)?{name}\b", response.json()["detail"]))


def _assignments(audit_set: AuditSet) -> list[tuple]:
    """Who holds which claim, named by answer and position so that two sets compare."""
    return sorted(
        Assignment.objects.filter(claim__answer__audit_set=audit_set).values_list(
            "claim__answer__external_id",
            "claim__parent__order",
            "claim__order",
            "reviewer__username",
        ),
        key=lambda row: (row[0], row[1] if row[1] is not None else -1, row[2], row[3]),
    )


@pytest.fixture
def twin(handmade):
    """A second set with the same answers as `handmade`, for a page write and an API write
    side by side."""
    twin = AuditSetFactory(name="Twin", workspace=handmade.workspace)
    import_file(twin, HANDMADE)
    return twin


@pytest.fixture
def reviewer_c(db):
    return UserFactory(username="rev_c", role="reviewer")


@pytest.fixture(autouse=True)
def elsewhere(db):
    """A reviewer of another workspace only: never a candidate for this set."""
    user = UserFactory(username="elsewhere")
    Membership.objects.create(
        user=user, workspace=Workspace.objects.create(name="Other", slug="other"), role="reviewer"
    )
    return user


# ------------------------------------------------------------------------------ reviewers


def test_the_reviewers_read_gives_the_progress_pages_rows(client_for, opened, lead, reviewer_a):
    submit_sheet(reviewer_a, claim_at("hm-1-a", 0), NOT_SUPPORTED)
    page = client_for(lead).get(reverse("audit:set-progress", args=[opened.pk]))
    form_page = client_for(lead).get(reverse("audit:review-open", args=[opened.pk]))

    body = api_client(lead).get(_api("reviewers", opened)).json()

    assert [
        (r["id"], r["username"], r["assigned"], r["submitted"], r["drafts"])
        for r in body["reviewers"]
    ] == [
        (r.reviewer_id, r.username, r.assigned, r.submitted, r.drafts) for r in page.context["rows"]
    ]
    assert [r["submitted"] for r in body["reviewers"]] == [1, 0]
    assert body["candidates"] == [
        user.username for user in form_page.context["form"].fields["reviewers"].queryset
    ]
    assert (body["overlap"], body["allow_reviewer_split"]) == (2, False)


def test_assigning_through_the_api_writes_the_assignments_the_page_writes(
    client_for, handmade, twin, lead, reviewer_a, reviewer_b, reviewer_c
):
    page = client_for(lead).post(
        reverse("audit:review-open", args=[handmade.pk]),
        {"reviewers": [reviewer_a.pk, reviewer_b.pk, reviewer_c.pk], "overlap": 2},
    )
    api = api_client(lead).post(
        _api("reviewers", twin),
        {"reviewers": ["rev_c", "rev_a", "rev_b"], "overlap": 2},
        content_type="application/json",
    )

    assert (page.status_code, api.status_code) == (302, 200), api.content
    assert _assignments(twin) == _assignments(handmade)
    claims = Assignment.objects.filter(claim__answer__audit_set=twin).count() // 2
    assert api.json() == {
        "claims": claims,
        "created": 2 * claims,
        "per_reviewer": {
            name: Assignment.objects.filter(
                claim__answer__audit_set=twin, reviewer__username=name
            ).count()
            for name in ("rev_a", "rev_b", "rev_c")
        },
    }
    twin.refresh_from_db()
    assert twin.overlap == 2
    assert twin.review_opened_at is not None
    assert set(twin.reviewers.values_list("username", flat=True)) == {"rev_a", "rev_b", "rev_c"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"reviewers": ["rev_a", "rev_b"], "overlap": 3}, "body.overlap"),
        ({"reviewers": ["rev_a", "rev_b"], "overlap": 0}, "body.overlap"),
        ({"reviewers": ["rev_a", "rev_b", "elsewhere"], "overlap": 2}, "body.reviewers"),
        ({"reviewers": ["rev_a", "nobody"], "overlap": 1}, "body.reviewers"),
        ({"reviewers": [], "overlap": 1}, "body.reviewers"),
        ({"reviewers": ["rev_a"], "overlap": "two"}, "body.overlap"),
    ],
)
def test_an_assignment_the_page_refuses_is_422_naming_the_field_and_writes_nothing(
    client_for, handmade, lead, reviewer_a, reviewer_b, body, field
):
    response = api_client(lead).post(
        _api("reviewers", handmade), body, content_type="application/json"
    )

    assert response.status_code == 422
    assert _names(response, field)
    assert Assignment.objects.count() == 0
    handmade.refresh_from_db()
    assert handmade.review_opened_at is None


def test_an_overlap_over_the_maximum_is_refused_by_both_doors(
    client_for, handmade, lead, reviewer_a, reviewer_b
):
    page = client_for(lead).post(
        reverse("audit:review-open", args=[handmade.pk]),
        {"reviewers": [reviewer_a.pk, reviewer_b.pk], "overlap": 6},
    )
    with pytest.raises(services.ReviewError):
        services.review_open(
            audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=6, by=lead
        )

    assert page.status_code == 200
    assert list(page.context["form"].errors) == ["overlap"]
    assert Assignment.objects.count() == 0


def test_replacing_a_reviewer_through_the_api_moves_what_the_page_moves(
    client_for, handmade, twin, lead, reviewer_a, reviewer_b, reviewer_c
):
    for audit_set in (handmade, twin):
        services.review_open(
            audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
        )
        first = audit_set.answers.get(external_id="hm-1-a").claims.get(order=0)
        submit_sheet(reviewer_a, first, NOT_SUPPORTED)

    page = client_for(lead).post(
        reverse("audit:reviewer-replace", args=[handmade.pk]),
        {"leaving": reviewer_a.pk, "joining": reviewer_c.pk},
    )
    api = api_client(lead).post(
        _api("reviewers/replace", twin),
        {"leaving": "rev_a", "joining": "rev_c"},
        content_type="application/json",
    )

    assert (page.status_code, api.status_code) == (302, 200), api.content
    assert _assignments(twin) == _assignments(handmade)
    moved = Assignment.objects.filter(claim__answer__audit_set=twin, reviewer=reviewer_c).count()
    assert api.json() == {"moved": moved, "kept": 1, "dropped": 0}
    assert set(twin.reviewers.values_list("username", flat=True)) == {"rev_b", "rev_c"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"leaving": "rev_c", "joining": "rev_b"}, "body.leaving"),
        ({"leaving": "rev_a", "joining": "elsewhere"}, "body.joining"),
        ({"leaving": "rev_a", "joining": "rev_a"}, "body.joining"),
    ],
)
def test_a_replacement_the_page_refuses_is_422_and_moves_nothing(
    opened, lead, reviewer_c, body, field
):
    before = _assignments(opened)

    response = api_client(lead).post(
        _api("reviewers/replace", opened), body, content_type="application/json"
    )

    assert response.status_code == 422
    assert _names(response, field)
    assert _assignments(opened) == before


# ------------------------------------------------------------------------------- controls


@pytest.fixture
def gold_twins(lead, reviewer_a, reviewer_b):
    """Two sets of three claims with gold each, reviewed by both reviewers."""
    sets = []
    for name in ("Refunds", "Refunds two"):
        audit_set, _claims = refund_set_with_gold(lead, name)
        audit_set.reviewers.add(reviewer_a, reviewer_b)
        sets.append(audit_set)
    return sets


def _controls(audit_set: AuditSet) -> list[int]:
    return sorted(
        ControlClaim.objects.filter(claim__answer__audit_set=audit_set).values_list(
            "claim__order", flat=True
        )
    )


def test_marking_controls_through_the_api_marks_what_the_page_marks(client_for, gold_twins, lead):
    by_page, by_api = gold_twins
    page_claims = list(by_page.answers.get().claims.order_by("order").values_list("pk", flat=True))
    api_claims = list(by_api.answers.get().claims.order_by("order").values_list("pk", flat=True))

    page = client_for(lead).post(
        reverse("audit:set-calibration", args=[by_page.pk]),
        {"action": "mark", "claim": [page_claims[0], page_claims[2]]},
    )
    api = api_client(lead).post(
        _api("controls", by_api),
        {"claims": [api_claims[0], api_claims[2]]},
        content_type="application/json",
    )

    assert (page.status_code, api.status_code) == (302, 200), api.content
    assert _controls(by_api) == _controls(by_page) == [0, 2]
    assert api.json()["changed"] == 2
    assert [c["claim"] for c in api.json()["controls"]] == [api_claims[0], api_claims[2]]

    unmark = api_client(lead).post(
        _api("controls", by_api),
        {"claims": [api_claims[0]], "control": False},
        content_type="application/json",
    )
    assert unmark.json()["changed"] == 1
    assert _controls(by_api) == [2]


def test_the_controls_read_gives_the_calibration_pages_rows(client_for, gold_twins, lead):
    audit_set = gold_twins[0]
    first = audit_set.answers.get().claims.get(order=0)
    services.controls_mark(audit_set=audit_set, claim_ids=[first.pk], by=lead)
    page = client_for(lead).get(reverse("audit:set-calibration", args=[audit_set.pk]))

    body = api_client(lead).get(_api("controls", audit_set)).json()

    assert [c["claim"] for c in body["controls"]] == [c.pk for c in page.context["controls"]]
    assert [(c["claim"], c["gold"]) for c in body["candidates"]] == [
        (c.pk, c.adjudication.judgment) for c in page.context["candidates"]
    ]
    assert len(body["candidates"]) == 2
    assert (body["control_rate"], body["calibration_threshold"]) == (
        audit_set.control_rate,
        audit_set.calibration_threshold,
    )


def test_control_settings_through_the_api_are_those_the_page_saves(client_for, gold_twins, lead):
    by_page, by_api = gold_twins
    page = client_for(lead).post(
        reverse("audit:set-calibration", args=[by_page.pk]),
        {"action": "settings", "control_rate": 5, "calibration_threshold": 0.8},
    )
    api = api_client(lead).patch(
        _api("controls", by_api),
        {"control_rate": 5, "calibration_threshold": 0.8},
        content_type="application/json",
    )

    assert (page.status_code, api.status_code) == (302, 200), api.content
    by_page.refresh_from_db()
    by_api.refresh_from_db()
    assert (by_api.control_rate, by_api.calibration_threshold) == (5, 0.8)
    assert (by_page.control_rate, by_page.calibration_threshold) == (5, 0.8)

    # A field left out keeps its value.
    only_rate = api_client(lead).patch(
        _api("controls", by_api), {"control_rate": 0}, content_type="application/json"
    )
    assert (only_rate.json()["control_rate"], only_rate.json()["calibration_threshold"]) == (0, 0.8)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"control_rate": 1}, "body.control_rate"),
        ({"control_rate": -3}, "body.control_rate"),
        ({"control_rate": 1001}, "body.control_rate"),
        ({"calibration_threshold": 1.5}, "body.calibration_threshold"),
        ({"calibration_threshold": "high"}, "body.calibration_threshold"),
    ],
)
def test_control_settings_the_page_refuses_are_422_and_change_nothing(
    client_for, gold_twins, lead, body, field
):
    audit_set = gold_twins[0]
    before = (audit_set.control_rate, audit_set.calibration_threshold)

    response = api_client(lead).patch(
        _api("controls", audit_set), body, content_type="application/json"
    )

    assert response.status_code == 422
    assert _names(response, field)
    audit_set.refresh_from_db()
    assert (audit_set.control_rate, audit_set.calibration_threshold) == before


def test_a_control_rate_of_one_is_refused_by_both_doors(client_for, gold_twins, lead):
    audit_set = gold_twins[0]
    page = client_for(lead).post(
        reverse("audit:set-calibration", args=[audit_set.pk]),
        {"action": "settings", "control_rate": 1, "calibration_threshold": 0.5},
    )
    api = api_client(lead).patch(
        _api("controls", audit_set), {"control_rate": 1}, content_type="application/json"
    )

    assert (page.status_code, api.status_code) == (200, 422)
    message = "One control in N claims: N is 0 (no controls) or from 2 to 1000."
    assert page.context["form"].non_field_errors() == [message]
    assert message in api.json()["detail"]
    audit_set.refresh_from_db()
    assert audit_set.control_rate == 0


# --------------------------------------------------------------------- adjudication queue


@pytest.fixture
def round_(opened, reviewer_a, reviewer_b):
    """Three claims of hm-1-a waiting for a lead, one unanimous, and one half submitted."""
    c0, c1, c2, c3 = (claim_at("hm-1-a", n) for n in range(4))
    full, part = evidence_ref(c0, 1, FULL_TIME), evidence_ref(c1, 1, PART_TIME)
    submit_sheet(reviewer_a, c0, SUPPORTED, full, seconds=40)
    submit_sheet(reviewer_b, c0, CONTRADICTED, seconds=1)
    submit_sheet(reviewer_a, c1, SUPPORTED, part, seconds=12)
    submit_sheet(reviewer_b, c1, PARTIAL, part, evidence_ref(c1, 1, FULL_TIME), seconds=30)
    submit_sheet(reviewer_a, c2, NOT_SUPPORTED, seconds=5)
    submit_sheet(reviewer_b, c2, NOT_SUPPORTED, seconds=7)
    submit_sheet(reviewer_a, c3, PARTIAL, evidence_ref(c3, 1, FULL_TIME), seconds=9)
    submit_sheet(reviewer_b, c3, PARTIAL, evidence_ref(c3, 1, PART_TIME), seconds=9)
    half = claim_at("hm-2-a", 0)
    submit_sheet(reviewer_a, half, NOT_SUPPORTED)
    return {"c0": c0, "c1": c1, "c2": c2, "c3": c3, "half": half}


@pytest.mark.parametrize(
    "params",
    [{}, {"severity": "1"}, {"judgment": PARTIAL}, {"fast": "true"}, {"system": "handmade v2"}],
)
def test_the_adjudication_queue_lists_the_pages_rows_in_its_order(
    client_for, opened, round_, lead, params
):
    page = client_for(lead).get(reverse("audit:adjudication-queue", args=[opened.pk]), params)

    body = api_client(lead).get(_api("adjudication", opened), params).json()

    page_rows = [
        (row.record.pk, row.record.severity, [s.judgment for s in row.record.submitted_sheets])
        for row in page.context["table"].rows
    ]
    assert [
        (i["claim"], i["severity"], [s["judgment"] for s in i["sheets"]]) for i in body["items"]
    ] == page_rows
    if not params:
        assert [i["claim"] for i in body["items"]] == [
            round_["c0"].pk,
            round_["c1"].pk,
            round_["c3"].pk,
        ]


def test_the_queue_shows_no_half_submitted_claim_and_names_reviewers_as_the_page_does(
    opened, round_, lead
):
    client = api_client(lead)
    named = client.get(_api("adjudication", opened)).json()
    assert round_["half"].pk not in [item["claim"] for item in named["items"]]
    sheets = named["items"][0]["sheets"]
    assert [(s["letter"], s["reviewer"], s["active_seconds"]) for s in sheets] == [
        ("A", "rev_a", 40),
        ("B", "rev_b", 1),
    ]

    opened.anonymous_adjudication = True
    opened.save(update_fields=["anonymous_adjudication"])
    hidden = client.get(_api("adjudication", opened)).json()
    assert hidden["anonymous"] is True
    assert [(s["letter"], s["reviewer"]) for s in hidden["items"][0]["sheets"]] == [
        ("A", None),
        ("B", None),
    ]


def test_the_queue_pages_by_offset_and_refuses_an_unknown_filter_value(opened, round_, lead):
    client = api_client(lead)
    first = client.get(_api("adjudication", opened), {"limit": 2}).json()
    rest = client.get(_api("adjudication", opened), {"limit": 2, "offset": 2}).json()
    assert [i["claim"] for i in first["items"] + rest["items"]] == [
        round_["c0"].pk,
        round_["c1"].pk,
        round_["c3"].pk,
    ]
    assert (first["next_offset"], rest["next_offset"]) == (2, None)

    bad = client.get(_api("adjudication", opened), {"judgment": "maybe"})
    assert bad.status_code == 422
    assert "query.judgment" in bad.json()["detail"]


# -------------------------------------------------------------------------------- compare


@pytest.fixture
def runs_set(handmade, reviewer_a, reviewer_b, lead) -> AuditSet:
    """Three runs of the hand-made answers, the third judged (see judge_third_run)."""
    return judge_third_run(handmade, (reviewer_a, reviewer_b), lead)["set"]


def _ids(claims) -> list[int]:
    return [claim.claim_id for claim in claims]


def test_compare_gives_the_pages_comparison(client_for, runs_set, lead):
    audit_set = runs_set
    runs = {"a": "system:handmade v1", "b": f"system:{V3}"}
    page = client_for(lead).get(reverse("audit:set-compare", args=[audit_set.pk]), runs)
    result = page.context["result"]

    body = api_client(lead).get(_api("compare", audit_set), runs).json()

    assert [(p["a"]["claim"], p["b"]["claim"], p["status"]) for p in body["pairs"]] == [
        (p.a.claim_id, p.b.claim_id, p.status) for p in result.pairs
    ]
    for name in ("appeared", "vanished", "unanswered_by_a", "unanswered_by_b"):
        assert [c["claim"] for c in body[name]] == _ids(getattr(result, name))
    assert {d["name"]: (d["a"], d["b"], d["delta"]) for d in body["deltas"]} == {
        d.name: (d.a, d.b, d.delta) for d in result.deltas
    }
    deltas = {d["name"]: d["delta"] for d in body["deltas"]}
    assert (deltas["supported"], deltas["provisional_claims"]) == (5, -14)
    assert (body["a"]["name"], body["b"]["name"]) == ("handmade v1", V3)
    assert body["provisional"] is True


def test_compare_without_runs_compares_the_pages_default_pair(client_for, runs_set, lead):
    audit_set = runs_set
    form = client_for(lead).get(reverse("audit:set-compare", args=[audit_set.pk])).context["form"]

    body = api_client(lead).get(_api("compare", audit_set)).json()

    assert (body["a"]["key"], body["b"]["key"]) == (form["a"].value(), form["b"].value())
    assert (body["a"]["key"], body["b"]["key"]) == ("system:handmade v2", f"system:{V3}")


def test_compare_refuses_an_unknown_run_and_a_run_with_itself(runs_set, lead):
    client = api_client(lead)
    url = _api("compare", runs_set)

    unknown = client.get(url, {"a": "system:handmade v1", "b": "system:nope"})
    same = client.get(url, {"a": "system:handmade v1", "b": "system:handmade v1"})

    assert unknown.status_code == 404
    assert same.status_code == 422
    assert "query.b" in same.json()["detail"]


# ---------------------------------------------------------------------------- permissions

READS = ["reviewers", "controls", "adjudication", "compare?a=system:handmade%20v1&b=system:x"]
WRITES = [
    ("post", "reviewers", {"reviewers": ["rev_a"], "overlap": 1}),
    ("post", "reviewers/replace", {"leaving": "rev_a", "joining": "rev_b"}),
    ("patch", "controls", {"control_rate": 4}),
    ("post", "controls", {"claims": [1]}),
]


def _statuses(client, audit_set: AuditSet) -> list[int]:
    codes = [client.get(_api(path, audit_set)).status_code for path in READS]
    for method, path, body in WRITES:
        response = getattr(client, method)(
            _api(path, audit_set), body, content_type="application/json"
        )
        codes.append(response.status_code)
    return codes


def test_a_reviewer_is_refused_every_lead_endpoint_as_on_the_pages(opened, reviewer_a):
    before = _assignments(opened)

    assert _statuses(api_client(reviewer_a), opened) == [403] * 8
    assert _assignments(opened) == before


def test_a_lead_of_another_workspace_finds_nothing(opened):
    other = UserFactory(username="other_lead")
    billing = Workspace.objects.create(name="Billing", slug="billing")
    Membership.objects.create(workspace=billing, user=other, role=Membership.Role.LEAD)
    before = _assignments(opened)

    assert _statuses(api_client(other), opened) == [404] * 8
    assert _assignments(opened) == before


def test_a_token_limited_to_another_set_finds_nothing(opened, lead):
    elsewhere = AuditSetFactory(name="Elsewhere", workspace=opened.workspace)
    _token, text = services.token_create(user=lead, name="ci", scope="write", audit_set=elsewhere)
    before = _assignments(opened)

    assert _statuses(Client(HTTP_AUTHORIZATION=f"Bearer {text}"), opened) == [404] * 8
    assert _assignments(opened) == before


def test_a_read_only_token_reads_but_writes_nothing(opened, lead):
    before = (_assignments(opened), opened.control_rate)

    codes = _statuses(api_client(lead, scope="read"), opened)

    assert codes[:3] == [200, 200, 200]
    assert codes[4:] == [403] * 4
    opened.refresh_from_db()
    assert (_assignments(opened), opened.control_rate) == before
