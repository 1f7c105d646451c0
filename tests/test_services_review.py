from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from audit import selectors, services
from audit.judgments import PARTIAL, SUPPORTED, WRONG_CITATION
from audit.models import Adjudication, Answer, Assignment, AuditSheet, Claim, ClaimCheck
from audit.services import (
    AtomicPart,
    EvidenceRef,
    ReviewError,
    SheetData,
    SheetIncomplete,
    StaleSheet,
)
from tests.factories import UserFactory, claim_at, evidence_ref

pytestmark = pytest.mark.django_db


def _assignees() -> dict[int, set[str]]:
    result: dict[int, set[str]] = defaultdict(set)
    for claim_id, username in Assignment.objects.values_list("claim_id", "reviewer__username"):
        result[claim_id].add(username)
    return result


def _age(sheet: AuditSheet, seconds: int) -> None:
    AuditSheet.objects.filter(pk=sheet.pk).update(
        updated_at=timezone.now() - timedelta(seconds=seconds)
    )
    sheet.refresh_from_db()


# --------------------------------------------------------------------------- assignment


def test_review_open_gives_every_claim_to_both_reviewers(opened):
    assert _assignees() == {
        pk: {"rev_a", "rev_b"} for pk in Claim.objects.values_list("pk", flat=True)
    }
    opened.refresh_from_db()
    assert (opened.overlap, opened.review_opened_at is not None) == (2, True)


def test_review_open_balances_answers_across_three_reviewers(handmade, lead):
    people = [UserFactory(username=f"r{i}", role="reviewer") for i in range(3)]

    summary = services.review_open(audit_set=handmade, reviewers=people, overlap=2, by=lead)

    assignees = _assignees()
    assert summary.created == 2 * Claim.objects.count() == 36
    assert all(len(names) == 2 for names in assignees.values())
    for answer in Answer.objects.all():
        pairs = {frozenset(assignees[c.pk]) for c in answer.claims.all()}
        assert len(pairs) == 1, answer.external_id
    loads = Counter(Assignment.objects.values_list("reviewer__username", flat=True))
    # Whole answers go to the least loaded, so loads differ by less than an answer.
    assert loads == {"r0": 13, "r1": 11, "r2": 12}


def test_review_open_is_deterministic(handmade, lead):
    people = [UserFactory(username=f"r{i}", role="reviewer") for i in range(3)]
    services.review_open(audit_set=handmade, reviewers=people, overlap=2, by=lead)
    first = _assignees()
    Assignment.objects.all().delete()

    services.review_open(audit_set=handmade, reviewers=people, overlap=2, by=lead)

    assert _assignees() == first


def test_review_open_again_tops_up_without_assigning_twice(handmade, reviewer_a, reviewer_b, lead):
    services.review_open(audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=1, by=lead)
    assert Assignment.objects.count() == 18

    summary = services.review_open(
        audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )

    assert summary.created == 18
    assert set(map(frozenset, _assignees().values())) == {frozenset({"rev_a", "rev_b"})}


def test_review_open_refuses_overlap_beyond_the_reviewers(handmade, reviewer_a, lead):
    with pytest.raises(ReviewError) as error:
        services.review_open(audit_set=handmade, reviewers=[reviewer_a], overlap=2, by=lead)

    assert str(error.value) == "An overlap of 2 needs at least 2 reviewers; 1 chosen."
    assert Assignment.objects.count() == 0


def test_review_open_needs_a_lead(handmade, reviewer_a, reviewer_b):
    with pytest.raises(PermissionDenied):
        services.review_open(
            audit_set=handmade, reviewers=[reviewer_a, reviewer_b], overlap=2, by=reviewer_a
        )


def test_reviewer_replace_moves_open_work_and_keeps_submitted(opened, reviewer_a, reviewer_b):
    carol = UserFactory(username="carol", role="reviewer")
    done = claim_at("hm-1-a", 3)
    sheet = services.sheet_for(claim=done, reviewer=reviewer_a)
    services.sheet_submit(
        sheet=sheet, user=reviewer_a, version=1, data=SheetData(judgment="not_supported")
    )
    draft = services.sheet_for(claim=claim_at("hm-1-a", 0), reviewer=reviewer_a)

    summary = services.reviewer_replace(audit_set=opened, leaving=reviewer_a, joining=carol)

    assert (summary.moved, summary.kept, summary.dropped) == (17, 1, 0)
    assert list(Assignment.objects.filter(reviewer=reviewer_a).values_list("claim", flat=True)) == [
        done.pk
    ]
    assert Assignment.objects.filter(reviewer=carol).count() == 17
    assert AuditSheet.objects.get(pk=sheet.pk).status == "submitted"
    assert list(opened.reviewers.order_by("username").values_list("username", flat=True)) == [
        "carol",
        "rev_b",
    ]
    with pytest.raises(PermissionDenied):
        services.sheet_save(sheet=draft, user=reviewer_a, version=1, data=SheetData())


def test_reviewer_replace_drops_claims_the_new_reviewer_already_has(opened, reviewer_a, reviewer_b):
    summary = services.reviewer_replace(audit_set=opened, leaving=reviewer_a, joining=reviewer_b)

    assert (summary.moved, summary.kept, summary.dropped) == (0, 0, 18)
    assert Assignment.objects.filter(reviewer=reviewer_b).count() == 18


# ------------------------------------------------------------------------------- sheets


def test_sheet_for_snapshots_the_claim_and_cited_urls(opened, reviewer_a):
    claim = claim_at("hm-1-a", 1)

    sheet = services.sheet_for(claim=claim, reviewer=reviewer_a)

    assert (sheet.answer_statement, sheet.cited_urls, sheet.status, sheet.version) == (
        "Part-time staff receive leave pro rata.",
        ["https://intranet.example.com/policies/leave", "https://intranet.example.com/hr/faq"],
        "draft",
        1,
    )
    assert services.sheet_for(claim=claim, reviewer=reviewer_a).pk == sheet.pk


def test_sheet_for_refuses_an_unassigned_claim(handmade, reviewer_a):
    with pytest.raises(PermissionDenied):
        services.sheet_for(claim=claim_at("hm-1-a", 0), reviewer=reviewer_a)


def test_a_blank_draft_is_stored_by_its_first_save_only(opened, reviewer_a):
    claim = claim_at("hm-1-a", 1)
    blank = selectors.reviewer_sheet(claim=claim, reviewer=reviewer_a)
    before = (blank.pk, AuditSheet.objects.count())

    saved = services.sheet_save(
        sheet=blank, user=reviewer_a, version=blank.version, data=SheetData(notes="first")
    )

    assert before == (None, 0)
    assert list(AuditSheet.objects.values_list("pk", "answer_statement", "notes", "version")) == [
        (saved.pk, "Part-time staff receive leave pro rata.", "first", 2)
    ]


def test_a_blank_draft_saved_by_someone_else_stores_nothing(opened, reviewer_a, reviewer_b):
    blank = selectors.reviewer_sheet(claim=claim_at("hm-1-a", 0), reviewer=reviewer_a)

    with pytest.raises(PermissionDenied):
        services.sheet_save(sheet=blank, user=reviewer_b, version=1, data=SheetData(notes="x"))

    assert AuditSheet.objects.count() == 0


def test_a_late_copy_of_a_tabs_save_still_refuses_anyone_but_the_reviewer(
    opened, reviewer_a, reviewer_b
):
    sheet = services.sheet_for(claim=claim_at("hm-1-a", 0), reviewer=reviewer_a)
    services.sheet_save(
        sheet=sheet, user=reviewer_a, version=1, data=SheetData(notes="a"), tab="t" * 20, seq=3
    )

    with pytest.raises(PermissionDenied):
        services.sheet_save(
            sheet=sheet, user=reviewer_b, version=1, data=SheetData(), tab="t" * 20, seq=3
        )

    sheet.refresh_from_db()
    assert (sheet.notes, sheet.version) == ("a", 2)


def test_sheet_save_stores_server_cut_evidence_and_bumps_version(opened, reviewer_a):
    claim = claim_at("hm-1-a", 0)
    sheet = services.sheet_for(claim=claim, reviewer=reviewer_a)
    ref = evidence_ref(claim, 1, "Full-time employees are entitled to 25 days")

    saved = services.sheet_save(
        sheet=sheet,
        user=reviewer_a,
        version=1,
        data=SheetData(
            judgment=SUPPORTED,
            evidence=(ref, ref),
            unsupported_assertions=("  per year ", "", "per year"),
            notes="checked",
        ),
    )

    saved.refresh_from_db()
    assert saved.version == 2
    assert saved.evidence == [
        {
            "passage": 1,
            "start": ref.start,
            "end": ref.end,
            "text": "Full-time employees are entitled to 25 days",
        }
    ]
    assert (saved.judgment, saved.unsupported_assertions, saved.notes) == (
        SUPPORTED,
        [{"text": "per year", "start": None, "end": None, "note": ""}],
        "checked",
    )


def test_sheet_save_refuses_a_stale_version(opened, reviewer_a):
    sheet = services.sheet_for(claim=claim_at("hm-1-a", 0), reviewer=reviewer_a)
    services.sheet_save(sheet=sheet, user=reviewer_a, version=1, data=SheetData(notes="tab one"))

    with pytest.raises(StaleSheet) as error:
        services.sheet_save(
            sheet=sheet, user=reviewer_a, version=1, data=SheetData(notes="tab two")
        )

    sheet.refresh_from_db()
    assert (sheet.notes, sheet.version, error.value.current_version) == ("tab one", 2, 2)


def test_sheet_save_refuses_anyone_but_its_reviewer(opened, reviewer_a, reviewer_b, lead):
    sheet = services.sheet_for(claim=claim_at("hm-1-a", 0), reviewer=reviewer_a)

    for intruder in (reviewer_b, lead):
        with pytest.raises(PermissionDenied):
            services.sheet_save(sheet=sheet, user=intruder, version=1, data=SheetData(notes="x"))

    sheet.refresh_from_db()
    assert (sheet.notes, sheet.version) == ("", 1)


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        (EvidenceRef(passage=9, start=0, end=4), "The answer has no passage [9]."),
        (EvidenceRef(passage=1, start=5, end=5), "Evidence offsets 5–5 are outside [1]."),
        (EvidenceRef(passage=1, start=0, end=99999), "Evidence offsets 0–99999 are outside [1]."),
        (
            EvidenceRef(passage=1, start=0, end=6, text="Forged"),
            "Evidence text does not match passage [1].",
        ),
    ],
)
def test_sheet_save_validates_evidence_on_the_server(opened, reviewer_a, ref, message):
    sheet = services.sheet_for(claim=claim_at("hm-1-a", 0), reviewer=reviewer_a)

    with pytest.raises(ReviewError) as error:
        services.sheet_save(
            sheet=sheet, user=reviewer_a, version=1, data=SheetData(evidence=(ref,))
        )

    sheet.refresh_from_db()
    assert (str(error.value), sheet.evidence, sheet.version) == (message, [], 1)


def test_sheet_save_refuses_a_passage_of_another_answer(opened, reviewer_a):
    sheet = services.sheet_for(claim=claim_at("hm-1-b", 0), reviewer=reviewer_a)

    with pytest.raises(ReviewError) as error:
        services.sheet_save(
            sheet=sheet,
            user=reviewer_a,
            version=1,
            data=SheetData(evidence=(EvidenceRef(passage=2, start=0, end=3),)),
        )

    assert str(error.value) == "The answer has no passage [2]."


def test_active_seconds_are_capped_per_save_and_by_elapsed_time(opened, reviewer_a):
    sheet = services.sheet_for(claim=claim_at("hm-1-a", 0), reviewer=reviewer_a)
    _age(sheet, 3600)

    sheet = services.sheet_save(
        sheet=sheet, user=reviewer_a, version=1, data=SheetData(), active_seconds=5000
    )
    assert sheet.active_seconds == 120
    _age(sheet, 30)
    sheet = services.sheet_save(
        sheet=sheet, user=reviewer_a, version=2, data=SheetData(), active_seconds=25
    )
    assert sheet.active_seconds == 145
    _age(sheet, 10)
    sheet = services.sheet_save(
        sheet=sheet, user=reviewer_a, version=3, data=SheetData(), active_seconds=100
    )
    assert sheet.active_seconds == 157
    sheet = services.sheet_save(
        sheet=sheet, user=reviewer_a, version=4, data=SheetData(), active_seconds=-50
    )
    assert sheet.active_seconds == 157


@pytest.mark.parametrize(
    ("data", "problems"),
    [
        (SheetData(), ["Choose a judgment."]),
        (SheetData(judgment=SUPPORTED), ["“Supported” needs at least one evidence sentence."]),
        (
            SheetData(judgment=PARTIAL),
            ["“Partially supported” needs at least one evidence sentence."],
        ),
        (
            SheetData(judgment=WRONG_CITATION),
            ["“Wrong citation” needs the passage that does support the claim."],
        ),
        (
            SheetData(judgment=WRONG_CITATION, wrong_citation_passage=1),
            ["Passage [1] is already cited; choose an uncited passage for “Wrong citation”."],
        ),
    ],
)
def test_sheet_submit_requires_a_complete_judgment(opened, reviewer_a, data, problems):
    sheet = services.sheet_for(claim=claim_at("hm-1-a", 0), reviewer=reviewer_a)

    with pytest.raises(SheetIncomplete) as error:
        services.sheet_submit(sheet=sheet, user=reviewer_a, version=1, data=data)

    sheet.refresh_from_db()
    assert (error.value.problems, sheet.status, sheet.version) == (problems, "draft", 1)


def test_sheet_submit_accepts_a_wrong_citation_with_an_uncited_passage(opened, reviewer_a):
    sheet = services.sheet_for(claim=claim_at("hm-1-a", 0), reviewer=reviewer_a)

    sheet = services.sheet_submit(
        sheet=sheet,
        user=reviewer_a,
        version=1,
        data=SheetData(judgment=WRONG_CITATION, wrong_citation_passage=2),
    )

    assert (sheet.status, sheet.wrong_citation_passage.position, sheet.version) == (
        "submitted",
        2,
        2,
    )
    assert sheet.submitted_at is not None


def test_a_submitted_sheet_cannot_be_saved_until_reopened(opened, reviewer_a):
    claim = claim_at("hm-1-a", 0)
    sheet = services.sheet_for(claim=claim, reviewer=reviewer_a)
    data = SheetData(judgment=SUPPORTED, evidence=(evidence_ref(claim, 1, "Full-time"),))
    services.sheet_submit(sheet=sheet, user=reviewer_a, version=1, data=data)

    with pytest.raises(ReviewError) as error:
        services.sheet_save(sheet=sheet, user=reviewer_a, version=2, data=SheetData())
    assert str(error.value) == "This sheet is submitted; reopen it to change it."

    sheet = services.sheet_reopen(sheet=sheet, user=reviewer_a)
    sheet = services.sheet_save(
        sheet=sheet, user=reviewer_a, version=3, data=SheetData(judgment=PARTIAL, notes="second")
    )

    history = list(
        sheet.history.order_by("history_id").values_list("status", "judgment", "version")
    )
    assert history == [
        ("draft", "", 1),
        ("submitted", SUPPORTED, 2),
        ("draft", SUPPORTED, 3),
        ("draft", PARTIAL, 4),
    ]


def test_sheet_reopen_is_refused_once_adjudicated(opened, reviewer_a, lead):
    claim = claim_at("hm-1-a", 3)
    sheet = services.sheet_for(claim=claim, reviewer=reviewer_a)
    services.sheet_submit(
        sheet=sheet, user=reviewer_a, version=1, data=SheetData(judgment="not_supported")
    )
    Adjudication.objects.create(claim=claim, judgment="not_supported", source="sheet", lead=lead)

    with pytest.raises(ReviewError) as error:
        services.sheet_reopen(sheet=sheet, user=reviewer_a)

    assert str(error.value) == "This claim is adjudicated; its sheets can no longer change."


def test_guideline_flag_needs_a_comment_and_an_assignment(opened, reviewer_a):
    claim = claim_at("hm-2-a", 1)
    outsider = UserFactory(username="outsider", role="reviewer")

    flag = services.guideline_flag_raise(claim=claim, user=reviewer_a, comment=" 7,5 vs 7.5? ")

    assert (flag.audit_set_id, flag.comment, flag.raised_by) == (
        opened.pk,
        "7,5 vs 7.5?",
        reviewer_a,
    )
    with pytest.raises(ReviewError):
        services.guideline_flag_raise(claim=claim, user=reviewer_a, comment="  ")
    with pytest.raises(PermissionDenied):
        services.guideline_flag_raise(claim=claim, user=outsider, comment="x")


# ------------------------------------------------------------------------------- splits


def test_lead_splits_a_claim_into_atomic_claims(opened, lead, reviewer_a):
    parent = claim_at("hm-2-a", 0)

    children = services.claim_split(
        claim=parent,
        parts=[
            AtomicPart("An employee who resigns must give notice."),
            AtomicPart("The notice is 4 weeks.", citations=(1,)),
        ],
        by=lead,
    )

    parent.refresh_from_db()
    assert [(c.order, c.text, c.location, c.parent_id) for c in children] == [
        (0, "An employee who resigns must give notice.", "atomic", parent.pk),
        (1, "The notice is 4 weeks.", "atomic", parent.pk),
    ]
    assert [sorted(c.citations.values_list("position", flat=True)) for c in children] == [
        [1, 2],
        [1],
    ]
    assert ClaimCheck.objects.filter(claim__in=children).count() == 2
    assert (parent.split_by, parent.assignments.count()) == (lead, 0)
    assert _assignees()[children[0].pk] == {"rev_a", "rev_b"}
    assert _assignees()[children[1].pk] == {"rev_a", "rev_b"}


def test_split_refuses_one_part_unknown_passages_and_second_split(opened, lead):
    parent = claim_at("hm-2-a", 0)

    with pytest.raises(ReviewError):
        services.claim_split(claim=parent, parts=[AtomicPart("only one")], by=lead)
    with pytest.raises(ReviewError) as error:
        services.claim_split(
            claim=parent, parts=[AtomicPart("a"), AtomicPart("b", citations=(7,))], by=lead
        )
    assert str(error.value) == "The answer has no passage [7]."
    services.claim_split(claim=parent, parts=[AtomicPart("a"), AtomicPart("b")], by=lead)
    with pytest.raises(ReviewError) as error:
        services.claim_split(claim=parent, parts=[AtomicPart("c"), AtomicPart("d")], by=lead)
    assert str(error.value) == "This claim is already split."


def test_reviewer_splits_only_when_the_set_allows_and_before_judging(opened, reviewer_a):
    parent = claim_at("hm-2-a", 0)
    parts = [AtomicPart("a"), AtomicPart("b")]
    with pytest.raises(PermissionDenied):
        services.claim_split(claim=parent, parts=parts, by=reviewer_a)

    opened.allow_reviewer_split = True
    opened.save()
    sheet = services.sheet_for(claim=parent, reviewer=reviewer_a)
    services.sheet_save(sheet=sheet, user=reviewer_a, version=1, data=SheetData(judgment=PARTIAL))
    with pytest.raises(ReviewError):
        services.claim_split(claim=parent, parts=parts, by=reviewer_a)

    services.sheet_save(sheet=sheet, user=reviewer_a, version=2, data=SheetData())
    children = services.claim_split(claim=parent, parts=parts, by=reviewer_a)
    assert [c.text for c in children] == ["a", "b"]


def _tally(audit_set, reviewer) -> tuple[int, int]:
    row = selectors.queue_place(
        reviewer=reviewer, audit_set=audit_set, claim=Claim.objects.filter(parent=None).first()
    )
    return row.assigned, row.done


def test_a_reviewer_cannot_split_a_claim_another_reviewer_submitted(opened, reviewer_a, reviewer_b):
    opened.allow_reviewer_split = True
    opened.save()
    parent = claim_at("hm-2-a", 0)
    sheet = services.sheet_for(claim=parent, reviewer=reviewer_a)
    services.sheet_submit(
        sheet=sheet, user=reviewer_a, version=1, data=SheetData(judgment="not_supported")
    )
    services.sheet_for(claim=parent, reviewer=reviewer_b)
    before = _tally(opened, reviewer_a)

    with pytest.raises(ReviewError) as error:
        services.claim_split(claim=parent, parts=[AtomicPart("a"), AtomicPart("b")], by=reviewer_b)

    assert str(error.value) == services.splits.REVIEWER_SPLIT_REFUSED
    assert AuditSheet.objects.get(pk=sheet.pk).status == "submitted"
    assert _assignees()[parent.pk] == {"rev_a", "rev_b"}
    assert Claim.objects.filter(parent=parent).count() == 0
    assert _tally(opened, reviewer_a) == before == (18, 1)


@pytest.mark.parametrize(
    "work",
    [
        {"judgment": PARTIAL},
        {"notes": "looking at [2]"},
        {"unsupported_assertions": ("4 weeks",)},
        {"verification_worthy": False},
    ],
)
def test_a_reviewer_split_is_refused_alike_whoever_saved_work_on_the_claim(
    opened, reviewer_a, reviewer_b, work
):
    opened.allow_reviewer_split = True
    opened.save()
    parent = claim_at("hm-2-a", 0)
    parts = [AtomicPart("a"), AtomicPart("b")]
    messages = []
    for author in (reviewer_a, reviewer_b):
        sheet = services.sheet_for(claim=parent, reviewer=author)
        sheet = services.sheet_save(
            sheet=sheet, user=author, version=sheet.version, data=SheetData(**work)
        )
        with pytest.raises(ReviewError) as error:
            services.claim_split(claim=parent, parts=parts, by=reviewer_b)
        messages.append(str(error.value))
        services.sheet_save(sheet=sheet, user=author, version=sheet.version, data=SheetData())

    children = services.claim_split(claim=parent, parts=parts, by=reviewer_b)

    assert messages == [services.splits.REVIEWER_SPLIT_REFUSED] * 2
    assert [c.text for c in children] == ["a", "b"]


def test_a_lead_split_keeps_submitted_sheets_on_the_parent_and_in_its_history(
    opened, reviewer_a, reviewer_b, lead
):
    parent = claim_at("hm-2-a", 0)
    sheet = services.sheet_for(claim=parent, reviewer=reviewer_a)
    services.sheet_submit(
        sheet=sheet, user=reviewer_a, version=1, data=SheetData(judgment="not_supported")
    )

    children = services.claim_split(claim=parent, parts=[AtomicPart("a"), AtomicPart("b")], by=lead)

    kept = AuditSheet.objects.get(pk=sheet.pk)
    assert (kept.claim_id, kept.status, kept.judgment) == (parent.pk, "submitted", "not_supported")
    assert list(kept.history.order_by("history_id").values_list("status", flat=True)) == [
        "draft",
        "submitted",
    ]
    assert [c.pk for c in selectors.split_after_judging(user=reviewer_a)] == [parent.pk]
    assert list(selectors.split_after_judging(user=reviewer_b)) == []
    assert _assignees()[children[0].pk] == {"rev_a", "rev_b"}
    # The parent's sheet is no longer counted: its reviewer now judges the two parts.
    assert _tally(opened, reviewer_a) == (19, 0)


def test_a_split_parent_cannot_be_submitted(opened, reviewer_a, lead):
    parent = claim_at("hm-2-a", 0)
    sheet = services.sheet_for(claim=parent, reviewer=reviewer_a)
    services.claim_split(claim=parent, parts=[AtomicPart("a"), AtomicPart("b")], by=lead)
    Assignment.objects.create(claim=parent, reviewer=reviewer_a)

    with pytest.raises(SheetIncomplete) as error:
        services.sheet_submit(
            sheet=sheet, user=reviewer_a, version=1, data=SheetData(judgment="not_supported")
        )

    assert error.value.problems == ["This claim was split into atomic claims; judge those instead."]
