"""Release report, criteria editor and run comparison through real HTTP, with metrics and
decisions computed by hand on the demo set plus a third run (handmade_v3.jsonl)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit import selectors, services
from audit.judgments import CONTRADICTED, NOT_SUPPORTED, PARTIAL, SUPPORTED
from audit.models import Adjudication, Claim, CriteriaChange
from audit.services import AtomicPart
from tests.conftest import FIXTURES, import_file
from tests.factories import claim_at, evidence_ref, submit_sheet

pytestmark = pytest.mark.django_db

V3 = "handmade v3"


def _both(reviewers, claim, judgment, *evidence, **data) -> None:
    for user in reviewers:
        submit_sheet(user, claim, judgment, *evidence, **data)


@pytest.fixture
def three_runs(handmade, reviewer_a, reviewer_b, lead):
    return judge_third_run(handmade, (reviewer_a, reviewer_b), lead)


def judge_third_run(handmade, both, lead) -> dict:
    """handmade v1/v2 unjudged; handmade v3 judged unanimously (so all gold):

    hm-1-c  c0 supported [1]   c1 supported [1]   c2 contradicted [1] (10 vs 5 days: 1
            ungrounded number, topic leave)   c3 uncited, marked not verification-worthy
    hm-2-c  c0 supported [1]   c1 supported [2]
    hm-3-c  c0 supported [1]   c1 partially supported [1]
    """
    import_file(handmade, FIXTURES / "demo" / "handmade_v3.jsonl")
    services.review_open(audit_set=handmade, reviewers=list(both), overlap=2, by=lead)
    full_time = (
        "Full-time employees are entitled to 25 days of paid annual leave in each leave year."
    )
    part_time = (
        "Part-time employees receive the same entitlement pro rata to their contracted hours."
    )
    c = {
        (a, n): claim_at(a, n)
        for a in ("hm-1-c", "hm-2-c", "hm-3-c")
        for n in range(4)
        if Claim.objects.filter(answer__external_id=a, order=n).exists()
    }
    _both(both, c["hm-1-c", 0], SUPPORTED, evidence_ref(c["hm-1-c", 0], 1, full_time))
    _both(both, c["hm-1-c", 1], SUPPORTED, evidence_ref(c["hm-1-c", 1], 1, part_time))
    _both(both, c["hm-1-c", 2], CONTRADICTED)
    _both(both, c["hm-1-c", 3], NOT_SUPPORTED, verification_worthy=False)
    resign = (
        "An employee who wishes to resign must give four weeks' written notice to Human Resources."
    )
    probation = (
        "During the probationary period either party may end employment with 7.5 days' notice."
    )
    _both(both, c["hm-2-c", 0], SUPPORTED, evidence_ref(c["hm-2-c", 0], 1, resign))
    _both(both, c["hm-2-c", 1], SUPPORTED, evidence_ref(c["hm-2-c", 1], 2, probation))
    rate = "Overtime hours are paid at 1.5 times the employee's normal hourly rate."
    approval = "Overtime must be pre-approved."
    _both(both, c["hm-3-c", 0], SUPPORTED, evidence_ref(c["hm-3-c", 0], 1, rate))
    _both(both, c["hm-3-c", 1], PARTIAL, evidence_ref(c["hm-3-c", 1], 1, approval))
    assert Adjudication.objects.filter(claim__answer__system=V3).count() == 8
    return {"set": handmade, "claims": c}


CRITERIA = [
    {"kind": "no_contradicted", "topics": ["leave"]},
    {"kind": "numbers_grounded", "only_supported": False},
    {"kind": "min_supported_share", "percent": 70},
    {"kind": "uncited_only_if_not_worthy"},
    {"kind": "max_wrong_citations", "limit": 0},
]


def _set_criteria(audit_set, lead, criteria=CRITERIA):
    # Once review has started a change needs a reason; before, it is kept all the same.
    return services.criteria_update(
        audit_set=audit_set, criteria=criteria, by=lead, reason="the report's test"
    )


def test_report_shows_hand_computed_metrics_for_a_gold_run(client_for, lead, three_runs):
    audit_set = three_runs["set"]

    response = client_for(lead).get(reverse("audit:set-report", args=[audit_set.pk]))

    assert response.status_code == 200
    v3 = next(r for r in response.context["overview"].systems if r.system == V3)
    m = v3.summary
    # 7 verification-worthy claims (c3 of hm-1-c left out), 5 supported with a citation.
    assert (m.supported, m.verifiable, m.supported_text) == (5, 7, "5 of 7")
    # Recall per answer 2/3, 1, 1/2; precision per answer 2/3, 2/2, 1/2: both 13/18.
    assert m.citation_recall == pytest.approx(13 / 18)
    assert m.citation_precision == pytest.approx(13 / 18)
    assert (m.contradicted, m.wrong_citations, m.ungrounded_numbers) == (1, 0, 1)
    assert (m.cited_unknown, m.uncited, m.provisional_claims) == (0, 1, 0)
    assert v3.decision is None and v3.badge == "none"
    assert "Claims fully supported by their own citations: 5 of 7" in response.text
    bars = {bar["system"]: bar["counts"] for bar in response.context["bars"]["bars"]}
    assert bars[V3].segments()[:4] == (
        ("supported", "Supported", 5, 5 / 7),
        ("partial", "Partially supported", 1, 1 / 7),
        ("not_supported", "Not supported", 0, 0.0),
        ("contradicted", "Contradicted", 1, 1 / 7),
    )


def test_release_decision_fails_with_the_failing_claims(client_for, lead, three_runs):
    audit_set = three_runs["set"]
    c = three_runs["claims"]
    _set_criteria(audit_set, lead)

    response = client_for(lead).get(reverse("audit:set-report", args=[audit_set.pk]))

    releases = {r.system: r for r in response.context["overview"].systems}
    v3 = releases[V3]
    assert v3.badge == "fail"
    assert [(r.passed, r.failing_claim_ids) for r in v3.decision.results] == [
        (False, (c["hm-1-c", 2].pk,)),
        (False, (c["hm-1-c", 2].pk,)),
        (True, ()),
        (True, ()),
        (True, ()),
    ]
    # v1 and v2 have no sheets at all: every claim is provisional.
    assert releases["handmade v1"].badge == "provisional"
    assert releases["handmade v2"].badge == "provisional"
    assert '<span class="release release-fail">FAIL</span>' in response.text


def test_failing_claims_are_one_click_away(client_for, lead, three_runs):
    audit_set = three_runs["set"]
    c = three_runs["claims"]
    _set_criteria(audit_set, lead, [{"kind": "min_supported_share", "percent": 75}])
    url = reverse("audit:set-report-claims", args=[audit_set.pk])

    response = client_for(lead).get(url, {"system": V3, "criterion": 1})

    assert response.status_code == 200
    assert [claim.pk for claim in response.context["rows"]] == [
        c["hm-1-c", 2].pk,
        c["hm-3-c", 1].pk,
    ]
    assert response.context["result"].detail == (
        "5 of 7 claims fully supported (71.4%), below 75%."
    )
    report = client_for(lead).get(reverse("audit:set-report", args=[audit_set.pk]))
    assert f"{url}?system=handmade%20v3&amp;criterion=1" in report.text


def test_failing_claims_of_unknown_criterion_or_system_is_404(client_for, lead, three_runs):
    audit_set = three_runs["set"]
    _set_criteria(audit_set, lead)
    url = reverse("audit:set-report-claims", args=[audit_set.pk])
    client = client_for(lead)

    assert client.get(url, {"system": V3, "criterion": 9}).status_code == 404
    assert client.get(url, {"system": V3, "criterion": "x"}).status_code == 404
    assert client.get(url, {"system": "nope", "criterion": 1}).status_code == 404


def test_provisional_label_comes_from_agreeing_sheets_only(
    client_for, lead, reviewer_a, reviewer_b, handmade
):
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    handmade.auto_gold = False
    handmade.save(update_fields=["auto_gold"])
    agree, differ = claim_at("hm-1-b", 0), claim_at("hm-1-b", 1)
    _both((reviewer_a, reviewer_b), agree, NOT_SUPPORTED)
    submit_sheet(reviewer_a, differ, NOT_SUPPORTED)
    submit_sheet(reviewer_b, differ, CONTRADICTED)

    response = client_for(lead).get(reverse("audit:set-report", args=[handmade.pk]))

    v2 = next(r for r in response.context["overview"].systems if r.system == "handmade v2")
    assert (v2.summary.contradicted, v2.summary.provisional_claims) == (0, 4)
    dist = response.context["bars"]["bars"][1]["counts"]
    # agree: not supported (provisional); differ and the two hm-6-a claims: no label yet.
    assert (dist.not_supported, dist.other) == (1, 3)
    assert "PROVISIONAL" in response.text


def test_set_page_shows_the_release_summary_to_leads_only(client_for, lead, reviewer_a, three_runs):
    audit_set = three_runs["set"]
    _set_criteria(audit_set, lead)

    as_lead = client_for(lead).get(audit_set.get_absolute_url())
    as_reviewer = client_for(reviewer_a).get(audit_set.get_absolute_url())

    assert "Claims fully supported by their own citations: 5 of 25" in as_lead.text
    assert "handmade v3: 5 of 7" in as_lead.text
    assert '<span class="release release-fail">FAIL</span>' in as_lead.text
    assert "Claims fully supported" not in as_reviewer.text


def test_criteria_editor_saves_and_records_the_change_before_the_lock(client_for, lead, handmade):
    url = reverse("audit:set-criteria", args=[handmade.pk])

    response = client_for(lead).post(
        url,
        {
            "no_contradicted": "on",
            "no_contradicted_topics": " Pay, leave ,",
            "min_supported_share": "on",
            "min_supported_share_percent": "80",
            "max_wrong_citations": "on",
            "max_wrong_citations_limit": "2",
        },
    )

    assert response.status_code == 302
    handmade.refresh_from_db()
    assert handmade.criteria == [
        {"kind": "no_contradicted", "topics": ["leave", "pay"]},
        {"kind": "min_supported_share", "percent": 80},
        {"kind": "max_wrong_citations", "limit": 2},
    ]
    change = CriteriaChange.objects.get()
    assert (change.before, change.after, change.after_lock, change.by) == (
        [],
        handmade.criteria,
        False,
        lead,
    )
    assert handmade.criteria_locked_at is None
    form = client_for(lead).get(url)
    assert form.context["form"].initial["no_contradicted_topics"] == "leave, pay"


def test_criteria_editor_requires_parameters_of_checked_criteria(client_for, lead, handmade):
    response = client_for(lead).post(
        reverse("audit:set-criteria", args=[handmade.pk]), {"min_supported_share": "on"}
    )

    assert response.status_code == 200
    assert response.context["form"].errors == {
        "min_supported_share_percent": ["Give the minimum percent."]
    }
    assert CriteriaChange.objects.count() == 0


def test_criteria_lock_at_first_submitted_sheet_and_later_change_is_flagged(
    client_for, lead, reviewer_a, reviewer_b, handmade
):
    _set_criteria(handmade, lead)
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    sheet = submit_sheet(reviewer_a, claim_at("hm-1-b", 0), NOT_SUPPORTED)
    client = client_for(lead)
    report_url = reverse("audit:set-report", args=[handmade.pk])
    assert "criteria changed after review started" not in client.get(report_url).text.lower()

    response = client.post(
        reverse("audit:set-criteria", args=[handmade.pk]),
        {"uncited_only_if_not_worthy": "on", "reason": "uncited claims matter more"},
    )

    assert response.status_code == 302
    handmade.refresh_from_db()
    assert handmade.criteria == [{"kind": "uncited_only_if_not_worthy"}]
    assert handmade.criteria_locked_at == sheet.submitted_at
    first, later = CriteriaChange.objects.order_by("pk")
    assert (first.after_lock, later.after_lock) == (False, True)
    assert (later.before, later.after) == (CRITERIA, [{"kind": "uncited_only_if_not_worthy"}])
    report = client.get(report_url)
    assert report.context["changed_after_lock"] is True
    assert "Criteria changed after review started" in report.text


def test_unchanged_criteria_record_nothing(lead, handmade):
    _set_criteria(handmade, lead)

    assert _set_criteria(handmade, lead) is None
    assert CriteriaChange.objects.count() == 1


def test_compare_two_systems_claim_by_claim(client_for, lead, three_runs):
    audit_set = three_runs["set"]
    c = three_runs["claims"]

    response = client_for(lead).get(
        reverse("audit:set-compare", args=[audit_set.pk]),
        {"a": "system:handmade v1", "b": f"system:{V3}"},
    )

    assert response.status_code == 200
    result = response.context["result"]
    # v1 is unjudged, v3 gold: no pair has a judgment on both sides, so none "changed".
    assert result.with_status("became_supported") == ()
    assert result.with_status("changed") == ()
    newly = [(p.a.text, p.b.claim_id) for p in result.with_status("newly_judged")]
    assert newly == [
        ("Full-time employees receive 25 days of paid annual leave per year.", c["hm-1-c", 0].pk),
        ("Part-time staff receive leave pro rata.", c["hm-1-c", 1].pk),
        ("Unused leave of up to 5 days may be carried over.", c["hm-1-c", 2].pk),
        ("An employee who resigns must give 4 weeks' notice.", c["hm-2-c", 0].pk),
        ("During probation the notice period is 7,5 days.", c["hm-2-c", 1].pk),
        ("Overtime is paid at 1.5 times the hourly rate.", c["hm-3-c", 0].pk),
    ]
    assert sorted(claim.text for claim in result.appeared) == [
        "Leave is approved by HR.",
        "Overtime must be pre-approved.",
    ]
    assert sorted(claim.text for claim in result.vanished) == [
        "Leave requests must be approved by a line manager.",
        "Notice must be given in writing [sic] to HR.",
        "The policy was last revised in [2019] according to HR.",
        "Work on public holidays is paid at double time.",
    ]
    # v3 has no answer to hm-4 and hm-5: their claims are listed apart, not as vanished.
    assert [(claim.question_id, claim.text) for claim in result.unanswered_by_b] == [
        ("hm-4", "Employees may work remotely from abroad for up to 30 days per year."),
        ("hm-4", "Longer stays need approval from the tax team."),
        ("hm-5", "Employees receive full pay for the first 10 days of sick leave."),
        ("hm-5", "After that, statutory sick pay applies."),
    ]
    assert result.unanswered_by_a == ()
    deltas = {d.name: (d.a, d.b, d.delta) for d in result.deltas}
    assert deltas["supported"] == (0, 5, 5)
    assert deltas["contradicted"] == (0, 1, 1)
    assert deltas["uncited"] == (2, 1, -1)
    assert deltas["provisional_claims"] == (14, 0, -14)
    assert "Judged in B only" in response.text
    assert "Not answered by run B: claims of A (4)" in response.text


def test_compare_page_starts_with_the_two_latest_runs(client_for, lead, three_runs):
    response = client_for(lead).get(reverse("audit:set-compare", args=[three_runs["set"].pk]))

    form = response.context["form"]
    assert (form["a"].value(), form["b"].value()) == ("system:handmade v2", f"system:{V3}")


def test_compare_page_of_one_system_starts_with_its_two_latest_imports(client_for, lead, handmade):
    handmade.answers.update(system="handmade")
    first = handmade.imports.get()
    import_file(handmade, FIXTURES / "demo" / "handmade_v3.jsonl")
    handmade.answers.update(system="handmade")
    second = handmade.imports.exclude(pk=first.pk).get()

    response = client_for(lead).get(reverse("audit:set-compare", args=[handmade.pk]))

    form = response.context["form"]
    assert (form["a"].value(), form["b"].value()) == (f"import:{first.pk}", f"import:{second.pk}")


def test_compare_two_imports(client_for, lead, three_runs):
    audit_set = three_runs["set"]
    first, second = audit_set.imports.order_by("pk")

    response = client_for(lead).get(
        reverse("audit:set-compare", args=[audit_set.pk]),
        {"a": f"import:{first.pk}", "b": f"import:{second.pk}"},
    )

    result = response.context["result"]
    assert (result.summary_a.claims, result.summary_b.claims) == (18, 8)
    assert result.summary_a.key == f"import #{first.pk} · handmade.jsonl"


def test_compare_refuses_the_same_run_twice(client_for, lead, handmade):
    response = client_for(lead).get(
        reverse("audit:set-compare", args=[handmade.pk]),
        {"a": "system:handmade v1", "b": "system:handmade v1"},
    )

    assert response.status_code == 200
    assert "result" not in response.context
    assert response.context["form"].non_field_errors() == ["Pick two different runs."]


def test_imported_text_is_escaped_on_the_report(client_for, lead, handmade):
    Claim.objects.filter(answer__external_id="hm-1-a").update()
    handmade.answers.filter(external_id="hm-1-a").update(system="<script>x</script>")

    response = client_for(lead).get(reverse("audit:set-report", args=[handmade.pk]))

    assert "<script>x</script>" not in response.text
    assert "&lt;script&gt;x&lt;/script&gt;" in response.text


def test_report_honours_and_lists_a_number_override(
    client_for, lead, reviewer_a, reviewer_b, handmade
):
    _set_criteria(handmade, lead, [{"kind": "numbers_grounded", "only_supported": True}])
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    claim = claim_at("hm-2-a", 0)  # "4 weeks' notice"; the passages say "four weeks'"
    resign = (
        "An employee who wishes to resign must give four weeks' written notice to Human Resources."
    )
    _both((reviewer_a, reviewer_b), claim, SUPPORTED, evidence_ref(claim, 1, resign))
    url = reverse("audit:set-report", args=[handmade.pk])
    before = client_for(lead).get(url).context["overview"].systems[0]
    assert before.decision.results[0].failing_claim_ids == (claim.pk,)

    gold = Adjudication.objects.get(claim=claim)
    services.adjudication_save(
        claim=claim,
        lead=lead,
        version=gold.version,
        take=gold.sheets.order_by("pk").first().pk,
        numbers_overridden=True,
        numbers_override_reason="[1] says “four weeks”",
    )
    response = client_for(lead).get(url)

    v1 = response.context["overview"].systems[0]
    assert v1.system == "handmade v1"
    result = v1.decision.results[0]
    assert (result.passed, result.failing_claim_ids) == (True, ())
    assert result.detail == (
        "Every number is found in the cited passages. "
        "Number check overridden by a lead for 1 claim."
    )
    assert (v1.summary.ungrounded_numbers, v1.summary.numbers_overridden) == (
        before.summary.ungrounded_numbers - 1,
        1,
    )
    assert [
        (g.claim_id, g.missing, g.numbers_override_reason) for g in response.context["overrides"]
    ] == [(claim.pk, ["4"], "[1] says “four weeks”")]
    assert "[1] says “four weeks”</td>" in response.text


def test_a_split_claim_counts_as_overridden_once_every_atomic_claim_missing_a_number_is(
    lead, reviewer_a, reviewer_b, handmade
):
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead)
    parent = claim_at("hm-2-a", 0)
    notice, weeks = services.claim_split(
        claim=parent,
        parts=[
            AtomicPart("An employee who resigns must give notice."),
            AtomicPart("The notice is 4 weeks.", citations=(1,)),
        ],
        by=lead,
    )
    resign = (
        "An employee who wishes to resign must give four weeks' written notice to Human Resources."
    )
    for atom in (notice, weeks):
        _both((reviewer_a, reviewer_b), atom, SUPPORTED, evidence_ref(atom, 1, resign))

    def parent_label():
        labels = selectors.claim_labels(audit_set=handmade, run="system:handmade v1")
        return next(label for label in labels if label.claim_id == parent.pk)

    def override(atom) -> None:
        gold = Adjudication.objects.get(claim=atom)
        services.adjudication_save(
            claim=atom,
            lead=lead,
            version=gold.version,
            take=gold.sheets.order_by("pk").first().pk,
            numbers_overridden=True,
            numbers_override_reason="[1] says “four weeks”",
        )

    assert parent_label().numbers_overridden is False
    # "The notice is 4 weeks." is the atomic claim that misses a number: until it is
    # overridden, an override elsewhere does not cover the parent.
    override(notice)
    assert parent_label().numbers_overridden is False
    override(weeks)
    assert parent_label().numbers_overridden is True
