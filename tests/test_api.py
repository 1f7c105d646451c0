"""The HTTP API (/api/v1/): tokens, the resources a script needs, blindness, JSON errors."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from audit import services
from audit.api.base import encode_cursor
from audit.models import Adjudication, ApiToken, Assignment, AuditSet, Claim, Job, RaterLabel
from tests.conftest import FIXTURES, api_client, gold_by_agreement, import_file, run_queued_jobs
from tests.factories import claim_at, default_workspace, submit_sheet

pytestmark = pytest.mark.django_db

HANDMADE = FIXTURES / "demo" / "handmade.jsonl"


def _json(response) -> dict:
    # Refusals are RFC 9457 problem details; answers plain JSON.
    expected = "application/problem+json" if response.status_code >= 400 else "application/json"
    assert response["Content-Type"].startswith(expected), response.content[:200]
    return json.loads(response.content)


def _detail(response) -> str:
    body = _json(response)
    assert body["status"] == response.status_code
    return body["detail"]


def _stream(response) -> bytes:
    return b"".join(response.streaming_content)


# ------------------------------------------------------------------------------- tokens


def test_a_request_without_a_token_is_401_with_a_json_message(opened):
    response = Client().get("/api/v1/sets")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert _detail(response) == "Authentication required: send Authorization: Bearer <token>."


def test_a_session_cookie_does_not_authorize_the_api(opened, lead, client_for):
    client = client_for(lead)
    assert client.get("/sets/").status_code == 200
    assert client.get("/api/v1/sets").status_code == 401


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"revoked_at": timezone.now()}, "This token was revoked."),
        ({"expires_at": timezone.now() - timedelta(seconds=1)}, "This token has expired."),
    ],
)
def test_a_revoked_or_expired_token_is_401(lead, change, message):
    token, text = services.token_create(user=lead, name="ci", scope="write")
    ApiToken.objects.filter(pk=token.pk).update(**change)
    response = Client(HTTP_AUTHORIZATION=f"Bearer {text}").get("/api/v1/sets")
    assert response.status_code == 401
    assert _json(response)["detail"] == message


def test_a_wrong_secret_or_a_malformed_token_is_401(lead):
    _token, text = services.token_create(user=lead, name="ci", scope="write")
    for bad in (text[:-2] + "xx", "nonsense", "cit_", f"{text} extra"):
        response = Client(HTTP_AUTHORIZATION=f"Bearer {bad}").get("/api/v1/sets")
        assert response.status_code == 401, bad


def test_only_a_hash_of_the_secret_is_stored_and_use_is_recorded(lead):
    token, text = services.token_create(user=lead, name="ci", scope="read")
    assert text.startswith(f"cit_{token.prefix}_")
    assert text not in json.dumps(list(ApiToken.objects.values()), default=str)
    assert token.last_used_at is None
    me = Client(HTTP_AUTHORIZATION=f"Bearer {text}").get("/api/v1/me")
    assert _json(me) == {
        "username": "lead",
        "lead": True,
        "scope": "read",
        "token": "ci",
        "workspace": None,
        "set": None,
    }
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_a_read_only_token_reads_but_may_not_write(lead):
    client = api_client(lead, scope="read")
    assert client.get("/api/v1/sets").status_code == 200
    response = client.post("/api/v1/sets", {"name": "New"}, content_type="application/json")
    assert response.status_code == 403
    assert _json(response)["detail"] == "This token is read-only; make a read-write token to write."
    assert not AuditSet.objects.filter(name="New").exists()


def test_the_tokens_page_shows_a_new_secret_once_and_revokes(reviewer_a, client_for):
    client = client_for(reviewer_a)
    page = client.post("/tokens/", {"name": "laptop", "scope": "read", "expires": "30"})
    assert page.status_code == 200
    assert page["Cache-Control"] == "no-store"
    token = ApiToken.objects.get(user=reviewer_a)
    secret = page.context["created"]
    assert secret.startswith(f"cit_{token.prefix}_")
    assert secret.encode() in page.content
    assert token.scope == "read"
    assert timedelta(days=29) < token.expires_at - timezone.now() <= timedelta(days=30)
    again = client.get("/tokens/")
    assert secret.encode() not in again.content
    assert f"cit_{token.prefix}_".encode() in again.content

    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert api.get("/api/v1/sets").status_code == 200
    assert client.post(f"/tokens/{token.pk}/revoke/").status_code == 302
    assert api.get("/api/v1/sets").status_code == 401


def test_nobody_revokes_another_users_token(reviewer_a, reviewer_b, client_for):
    token, _text = services.token_create(user=reviewer_a, name="mine", scope="read")
    assert client_for(reviewer_b).post(f"/tokens/{token.pk}/revoke/").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


# --------------------------------------------------------------------------------- sets


def test_sets_list_what_the_pages_show_and_find_one_by_name(opened, lead, reviewer_a):
    other = AuditSet.objects.create(workspace=default_workspace(), name="Other")
    lead_sets = _json(api_client(lead).get("/api/v1/sets"))
    assert [s["name"] for s in lead_sets] == ["Calibration", "Other"]
    assert [s["name"] for s in _json(api_client(reviewer_a).get("/api/v1/sets"))] == ["Calibration"]
    assert api_client(reviewer_a).get(f"/api/v1/sets/{other.pk}").status_code == 404
    found = _json(api_client(lead).get("/api/v1/sets", {"name": "Other"}))
    assert [s["id"] for s in found] == [other.pk]


def test_a_lead_creates_a_set_and_a_taken_name_is_409(lead):
    client = api_client(lead)
    created = client.post(
        "/api/v1/sets", {"name": " Nightly ", "description": "d"}, content_type="application/json"
    )
    assert created.status_code == 201
    assert _json(created)["name"] == "Nightly"
    assert AuditSet.objects.get(name="Nightly").created_by == lead
    again = client.post("/api/v1/sets", {"name": "Nightly"}, content_type="application/json")
    assert again.status_code == 409
    assert _detail(again) == "A set named “Nightly” exists."


def test_settings_patch_changes_only_what_is_given(opened, lead):
    client = api_client(lead)
    url = f"/api/v1/sets/{opened.pk}/settings"
    before = _json(client.get(url))
    response = client.patch(
        url,
        {"auto_gold": False, "criteria": [{"kind": "no_contradicted"}]},
        content_type="application/json",
    )
    assert response.status_code == 200
    after = _json(response)
    assert after["auto_gold"] is False
    assert after["criteria"] == [{"kind": "no_contradicted", "topics": []}]
    assert {k: v for k, v in after.items() if k not in ("auto_gold", "criteria")} == {
        k: v for k, v in before.items() if k not in ("auto_gold", "criteria")
    }
    opened.refresh_from_db()
    assert opened.auto_gold is False
    assert opened.criteria_changes.count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {"criteria": [{"kind": "no_such_rule"}]},
        {"criteria": ["not an object"]},
        {"evidence_jaccard_threshold": 2},
        {"auto_gold": "perhaps"},
        {"name": None},
        {"name": "   "},
    ],
)
def test_bad_settings_are_422_and_change_nothing(opened, lead, body):
    client = api_client(lead)
    url = f"/api/v1/sets/{opened.pk}/settings"
    before = _json(client.get(url))
    response = client.patch(url, body, content_type="application/json")
    assert response.status_code == 422
    assert _json(response)["detail"]
    assert _json(client.get(url)) == before


# ------------------------------------------------------------------------------ imports


def test_an_uploaded_file_becomes_a_job_whose_status_the_api_follows(lead):
    client = api_client(lead)
    with open(HANDMADE, "rb") as handle:
        response = client.post("/api/v1/imports", {"file": handle, "new_set_name": "Run 42"})
    assert response.status_code == 202
    job = _json(response)
    assert (job["status"], job["kind"], job["filename"]) == ("queued", "import", "handmade.jsonl")
    run_queued_jobs()
    done = _json(client.get(f"/api/v1/jobs/{job['id']}"))
    audit_set = AuditSet.objects.get(name="Run 42")
    assert done["status"] == "succeeded"
    assert done["set"] == audit_set.pk
    assert done["done"] == done["total"] == 7
    assert done["percent"] == 100
    assert done["result"]["answers"] == 7
    assert done["error"] == ""


def test_a_bad_file_fails_its_job_with_file_line_and_field(lead, audit_set):
    client = api_client(lead)
    lines = HANDMADE.read_text().splitlines()
    broken = json.loads(lines[1])
    del broken["system"]
    data = "\n".join([lines[0], json.dumps(broken)]) + "\n"
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("run.jsonl", data.encode())
    response = client.post("/api/v1/imports", {"file": upload, "set": audit_set.pk})
    assert response.status_code == 202
    run_queued_jobs()
    job = _json(client.get(f"/api/v1/jobs/{_json(response)['id']}"))
    assert job["status"] == "failed"
    assert job["error"] == "run.jsonl: line 2: system: required field is missing"
    assert audit_set.answers.count() == 0


def test_an_import_names_its_set_and_a_taken_new_name_is_409(lead, audit_set):
    client = api_client(lead)
    with open(HANDMADE, "rb") as handle:
        response = client.post("/api/v1/imports", {"file": handle})
    assert response.status_code == 422
    with open(HANDMADE, "rb") as handle:
        response = client.post("/api/v1/imports", {"file": handle, "new_set_name": "Calibration"})
    assert response.status_code == 409
    with open(HANDMADE, "rb") as handle:
        response = client.post("/api/v1/imports", {"file": handle, "set": 999999})
    assert response.status_code == 404
    assert Job.objects.count() == 0


# -------------------------------------------------------------------- claims and paging


def _walk(client, url: str, **query) -> list[dict]:
    items, cursor = [], ""
    while True:
        page = _json(client.get(url, {**query, "cursor": cursor} if cursor else query))
        items += page["items"]
        cursor = page["next_cursor"]
        if not cursor:
            return items


def test_claims_page_by_cursor_without_repeats_or_gaps_while_answers_arrive(opened, lead):
    client = api_client(lead)
    url = f"/api/v1/sets/{opened.pk}/claims"
    first = _json(client.get(url, {"limit": 3}))
    assert len(first["items"]) == 3
    # A new run arrives between two pages: its claims come after, none is repeated or lost.
    other_run = HANDMADE.read_text().replace('"answer_id": "hm-', '"answer_id": "run2-hm-')
    path = FIXTURES.parent / "var" / "api-test-v2.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(other_run)
    try:
        import_file(opened, path)
    finally:
        path.unlink()
    rest = _walk(client, url, limit=3, cursor=first["next_cursor"])
    ids = [c["id"] for c in first["items"] + rest]
    every = Claim.objects.filter(answer__audit_set=opened).values_list("pk", flat=True)
    assert ids == sorted(every)
    assert len(every) > len(first["items"]) + 7


def test_claims_filter_by_system_status_and_label(opened, lead, reviewer_a, reviewer_b):
    client = api_client(lead)
    url = f"/api/v1/sets/{opened.pk}/claims"
    every = _walk(client, url, limit=100)
    assert {c["system"] for c in every} == {"handmade v1", "handmade v2"}
    v2 = _walk(client, url, system="handmade v2")
    assert {c["id"] for c in v2} == set(
        Claim.objects.filter(answer__system="handmade v2").values_list("pk", flat=True)
    )
    assert _walk(client, url, system="nope") == []
    claim = claim_at("hm-1-a", 0)
    gold_by_agreement([reviewer_a, reviewer_b], claim)
    adjudicated = _walk(client, url, status="adjudicated")
    assert [c["id"] for c in adjudicated] == [claim.pk]
    verified = _walk(client, url, label="verified")
    assert verified and all(c["label"] == "verified" for c in verified)
    assert (
        len(verified)
        == Claim.objects.filter(answer__audit_set=opened, machine_check__label="verified").count()
    )


def test_filtered_claims_page_in_key_order_past_another_sets_claims(
    opened, lead, reviewer_a, reviewer_b
):
    # Another set's claims between two runs of this one: every walk must step over them.
    other = AuditSet.objects.create(workspace=opened.workspace, name="Other")
    import_file(other, HANDMADE)
    second_run = HANDMADE.read_text().replace('"answer_id": "hm-', '"answer_id": "run2-hm-')
    path = FIXTURES.parent / "var" / "api-test-run2.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(second_run)
    try:
        import_file(opened, path)
    finally:
        path.unlink()
    claims = Claim.objects.filter(answer__audit_set=opened).order_by("pk")
    gold_by_agreement(
        [reviewer_a, reviewer_b], claims.get(answer__external_id="hm-1-a", order=0, parent=None)
    )
    client = api_client(lead)
    url = f"/api/v1/sets/{opened.pk}/claims"

    def ids(**query) -> list[int]:
        return [c["id"] for c in _walk(client, url, limit=2, **query)]

    for label in ("verified", "likely", "unknown"):
        expected = list(claims.filter(machine_check__label=label).values_list("pk", flat=True))
        assert ids(label=label) == expected
    for status in ("adjudicated", "unassigned", "in_review"):
        expected = list(claims.filter(review_status=status).values_list("pk", flat=True))
        assert ids(status=status) == expected
    v1 = claims.filter(answer__system="handmade v1", machine_check__label="verified")
    assert ids(system="handmade v1", label="verified") == list(v1.values_list("pk", flat=True))
    assert ids() == list(claims.values_list("pk", flat=True))
    assert claims.count() < Claim.objects.count()


def test_a_cursor_past_every_row_is_an_empty_last_page(opened, lead):
    huge = encode_cursor(10**30)
    page = _json(api_client(lead).get(f"/api/v1/sets/{opened.pk}/claims", {"cursor": huge}))
    assert page == {"items": [], "next_cursor": None}


@pytest.mark.parametrize(
    "query",
    [
        {"status": "bogus"},
        {"label": "bogus"},
        {"limit": "0"},
        {"limit": "100000"},
        {"limit": "ten"},
        {"cursor": "!!!"},
        {"cursor": "YWZ0ZXI6eA"},
    ],
)
def test_bad_list_parameters_are_4xx_with_a_message(opened, lead, query):
    response = api_client(lead).get(f"/api/v1/sets/{opened.pk}/claims", query)
    assert response.status_code in (400, 422)
    assert _json(response)["detail"]


def test_unknown_or_malformed_ids_are_404_or_422_never_500(lead):
    client = api_client(lead)
    assert client.get("/api/v1/sets/999999").status_code == 404
    assert _detail(client.get("/api/v1/sets/999999")) == "No such audit set."
    assert client.get("/api/v1/claims/999999").status_code == 404
    assert client.get("/api/v1/jobs/999999").status_code == 404
    assert client.get("/api/v1/sets/abc").status_code == 422
    # Past any database integer: still a plain 404.
    assert client.get("/api/v1/sets/99999999999999999999").status_code == 404
    assert client.get("/api/v1/claims/-99999999999999999999").status_code == 404
    bad_json = client.post("/api/v1/sets", "{not json", content_type="application/json")
    assert 400 <= bad_json.status_code < 500


# -------------------------------------------------------------------------- blindness


def test_a_reviewer_reads_only_their_claims_and_own_sheet(opened, reviewer_a, reviewer_b):
    claim = claim_at("hm-1-a", 0)
    submit_sheet(reviewer_b, claim, "contradicted")
    client = api_client(reviewer_a)
    claims = _walk(client, f"/api/v1/sets/{opened.pk}/claims", limit=100)
    assigned = set(
        Claim.objects.filter(assignments__reviewer=reviewer_a).values_list("pk", flat=True)
    )
    assert {c["id"] for c in claims} == assigned
    # Nothing says how B's sheet stands: not the claim's status, not B's sheet.
    row = next(c for c in claims if c["id"] == claim.pk)
    assert "status" not in row
    assert row["my_sheet"] == "todo"
    assert _walk(client, f"/api/v1/sets/{opened.pk}/claims", status="submitted") == []
    detail = _json(client.get(f"/api/v1/claims/{claim.pk}"))
    assert detail["sheets"] == []
    assert detail["gold"] is None
    assert b"contradicted" not in client.get(f"/api/v1/claims/{claim.pk}").content
    assert _walk(client, f"/api/v1/sets/{opened.pk}/sheets") == []
    for lead_only in ("gold", "report", "agreement", "settings", "exports/jsonl"):
        assert client.get(f"/api/v1/sets/{opened.pk}/{lead_only}").status_code == 403

    submit_sheet(reviewer_a, claim, "not_supported")
    sheets = _walk(client, f"/api/v1/sets/{opened.pk}/sheets")
    assert [(s["reviewer"], s["judgment"]) for s in sheets] == [("rev_a", "not_supported")]
    mine = _walk(client, f"/api/v1/sets/{opened.pk}/claims", status="submitted")
    assert [c["id"] for c in mine] == [claim.pk]


def test_a_lead_who_reviews_is_blind_through_the_api_too(opened, lead, reviewer_a):
    claim = claim_at("hm-1-a", 0)
    Assignment.objects.create(claim=claim, reviewer=lead)
    submit_sheet(reviewer_a, claim, "contradicted")
    client = api_client(lead)
    row = next(c for c in _walk(client, f"/api/v1/sets/{opened.pk}/claims") if c["id"] == claim.pk)
    assert row["status"] == "in_review"
    detail = _json(client.get(f"/api/v1/claims/{claim.pk}"))
    assert detail["sheets"] == []
    sheets = _walk(client, f"/api/v1/sets/{opened.pk}/sheets")
    assert claim.pk not in {s["claim"] for s in sheets}
    export = _stream(client.get(f"/api/v1/sets/{opened.pk}/exports/audit-sheets"))
    assert b"contradicted" not in export
    # Gold made meanwhile (by another lead) stays out of the gold stream until they submit.
    other = claim_at("hm-2-a", 0)
    Adjudication.objects.create(claim=claim, judgment="contradicted", source="edited")
    Adjudication.objects.create(claim=other, judgment="unclear", source="edited")
    gold = _stream(client.get(f"/api/v1/sets/{opened.pk}/gold")).decode().splitlines()
    assert [json.loads(line)["claim"] for line in gold] == [other.pk]


# ---------------------------------------------------------------- gold, verdicts, release


def test_gold_streams_as_json_lines(opened, lead, reviewer_a, reviewer_b):
    first, second = claim_at("hm-1-a", 0), claim_at("hm-1-a", 1)
    gold_by_agreement([reviewer_a, reviewer_b], first, "not_supported")
    gold_by_agreement([reviewer_a, reviewer_b], second, "contradicted")
    response = api_client(lead).get(f"/api/v1/sets/{opened.pk}/gold")
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    rows = [json.loads(line) for line in _stream(response).decode().splitlines()]
    assert [(r["claim"], r["judgment"], r["source"]) for r in rows] == [
        (first.pk, "not_supported", "unanimous"),
        (second.pk, "contradicted", "unanimous"),
    ]
    assert rows[0]["answer_external_id"] == "hm-1-a"
    assert rows[0]["system"] == "handmade v1"


def test_verdicts_are_pushed_in_the_upload_format(handmade, lead):
    data = json.dumps(
        {"judge": "nli-v1", "answer_id": "hm-1-a", "claim_index": 0, "judgment": "supported"}
    )
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = api_client(lead)
    url = f"/api/v1/sets/{handmade.pk}/verdicts"
    response = client.post(url, {"file": SimpleUploadedFile("judge.jsonl", data.encode())})
    assert response.status_code == 200
    assert _json(response) == {"judges": ["nli-v1"], "created": 1, "replaced": 0}
    assert RaterLabel.objects.get().claim == claim_at("hm-1-a", 0)
    bad = data.replace("hm-1-a", "nope")
    response = client.post(url, {"file": SimpleUploadedFile("judge.jsonl", bad.encode())})
    assert response.status_code == 422
    assert _detail(response) == (
        "judge.jsonl: line 1: answer_id: no answer 'nope' in set 'Calibration'"
    )
    assert RaterLabel.objects.count() == 1


def _criteria(audit_set, *criteria: dict) -> None:
    services.criteria_update(audit_set=audit_set, criteria=list(criteria), by=None)


def test_decision_is_provisional_then_pass_or_fail_with_the_failing_claims(
    opened, lead, reviewer_a, reviewer_b
):
    _criteria(opened, {"kind": "no_contradicted"})
    client = api_client(lead)
    url = f"/api/v1/sets/{opened.pk}/decision"
    first = _json(client.get(url, {"system": "handmade v1"}))
    assert first["decision"] == "provisional"
    assert first["criteria"][0]["criterion"] == "No contradicted claim."
    for claim in Claim.objects.filter(answer__audit_set=opened, parent__isnull=True):
        gold_by_agreement([reviewer_a, reviewer_b], claim)
    assert _json(client.get(url, {"system": "handmade v1"}))["decision"] == "pass"
    # A lead's edit turns one claim's gold to contradicted.
    wrong = claim_at("hm-2-a", 0)
    Adjudication.objects.filter(claim=wrong).update(judgment="contradicted", source="edited")
    services.claims_changed(claim_ids=[wrong.pk])
    failed = _json(client.get(url, {"system": "handmade v1"}))
    assert failed["decision"] == "fail"
    assert [r["criterion"] for r in failed["failed"]] == ["No contradicted claim."]
    assert [c["id"] for c in failed["failed"][0]["claims"]] == [wrong.pk]
    assert failed["failed"][0]["claims"][0]["answer_external_id"] == "hm-2-a"
    assert client.get(url, {"system": "nope"}).status_code == 404
    assert client.get(url).status_code == 422


def test_report_per_system_matches_the_decision(opened, lead):
    _criteria(opened, {"kind": "no_contradicted"})
    report = _json(api_client(lead).get(f"/api/v1/sets/{opened.pk}/report"))
    assert [(s["system"], s["decision"]) for s in report["systems"]] == [
        ("handmade v1", "provisional"),
        ("handmade v2", "provisional"),
    ]
    assert report["criteria"] == ["No contradicted claim."]
    assert report["systems"][0]["metrics"]["claims"] > 0


def test_agreement_summary(opened, lead, reviewer_a, reviewer_b):
    gold_by_agreement([reviewer_a, reviewer_b], claim_at("hm-1-a", 0))
    summary = _json(api_client(lead).get(f"/api/v1/sets/{opened.pk}/agreement"))
    assert (summary["sheets"], summary["claims"], summary["gold"]) == (2, 1, 1)
    assert api_client(lead).get(f"/api/v1/sets/{opened.pk}/agreement?system=x").status_code == 404


@pytest.mark.parametrize("fmt", ["jsonl", "audit-sheets", "csv", "evidence"])
def test_exports_stream_every_format_as_the_web_does(opened, lead, client_for, fmt):
    response = api_client(lead).get(f"/api/v1/sets/{opened.pk}/exports/{fmt}")
    assert response.status_code == 200
    assert response.streaming
    web = client_for(lead).get(f"/sets/{opened.pk}/export/{fmt}/")
    assert response["Content-Type"] == web["Content-Type"]
    assert _stream(response) == _stream(web)


def test_an_unknown_export_format_is_422(opened, lead):
    response = api_client(lead).get(f"/api/v1/sets/{opened.pk}/exports/pdf")
    assert response.status_code == 422


# ------------------------------------------------------------------------------- gate


def test_gate_command_exits_by_the_decision(opened, reviewer_a, reviewer_b, capsys):
    _criteria(opened, {"kind": "no_contradicted"})
    with pytest.raises(SystemExit) as exit_:
        call_command("gate", "--set", "Calibration", "--system", "handmade v1")
    assert exit_.value.code == 2
    assert capsys.readouterr().out.startswith("handmade v1: PROVISIONAL\n")
    for claim in Claim.objects.filter(answer__audit_set=opened, parent__isnull=True):
        gold_by_agreement([reviewer_a, reviewer_b], claim, "contradicted")
    with pytest.raises(SystemExit) as exit_:
        call_command("gate", "--set", "Calibration", "--system", "handmade v1")
    assert exit_.value.code == 1
    out = capsys.readouterr().out
    assert out.startswith("handmade v1: FAIL\n  FAIL No contradicted claim.")
    with pytest.raises(SystemExit) as exit_:
        call_command("gate", "--set", "Nope", "--system", "handmade v1")
    assert exit_.value.code == 3


# ------------------------------------------------------------------------------- docs


def test_docs_load_their_scripts_and_styles_from_our_static_files(lead):
    page = Client().get("/api/v1/docs")
    assert page.status_code == 200
    html = page.content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in html
    assert "/static/ninja/swagger-ui.css" in html
    assert "cdn" not in html.lower()
    assert "//" not in "".join(
        part.split('"')[0] for part in html.split('src="')[1:] + html.split('href="')[1:]
    )
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui-init.js"):
        assert Client().get(f"/static/ninja/{asset}").status_code == 200
    schema = _json(Client().get("/api/v1/openapi.json"))
    assert schema["openapi"].startswith("3.")
    assert "/api/v1/sets/{set_id}/decision" in schema["paths"]
