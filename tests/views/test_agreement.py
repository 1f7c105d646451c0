"""The agreement dashboard through the test client: published κ and α worked examples
rebuilt as submitted sheets, the heat map's links, evidence and matcher figures, raters
against gold, the filters, reading facts only, and machine-verdict upload."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit.agreement import LabelScore
from audit.judgments import CONTRADICTED, NOT_SUPPORTED, PARTIAL, SUPPORTED, UNCLEAR
from audit.models import Adjudication, AuditSet, ClaimCheck, Rater, RaterLabel
from tests.factories import AuditSetFactory, UserFactory, answer_with_claims, submitted_sheet

pytestmark = pytest.mark.django_db

YES, NO = SUPPORTED, NOT_SUPPORTED


@pytest.fixture
def board_set(db) -> AuditSet:
    return AuditSetFactory(name="Agreement")


def _dashboard(client, audit_set: AuditSet, **params):
    response = client.get(reverse("audit:agreement", args=[audit_set.pk]), params)
    assert response.status_code == 200
    return response


def _two_by_two(audit_set, a, b, cells: dict[tuple[str, str], int], system: str = "sys-1"):
    """Claims judged by reviewers a and b, `n` claims per (a's judgment, b's judgment)."""
    _, claims = answer_with_claims(audit_set, sum(cells.values()), system=system)
    at = 0
    for (judgment_a, judgment_b), n in cells.items():
        for claim in claims[at : at + n]:
            submitted_sheet(claim, a, judgment_a)
            submitted_sheet(claim, b, judgment_b)
        at += n
    return claims


def test_kappa_matches_wikipedias_worked_example(
    client_for, board_set, lead, reviewer_a, reviewer_b
):
    # Wikipedia "Cohen's kappa": 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no; κ = 0.4.
    _two_by_two(
        board_set,
        reviewer_a,
        reviewer_b,
        {(YES, YES): 20, (YES, NO): 5, (NO, YES): 10, (NO, NO): 15},
    )

    response = _dashboard(client_for(lead), board_set)

    board = response.context["board"]
    [pair] = board.full.pairs
    assert (pair.rater_a, pair.rater_b, pair.n_items) == ("rev_a", "rev_b", 50)
    assert pair.kappa == pytest.approx(0.4, abs=1e-12)
    assert pair.percent == pytest.approx(0.7, abs=1e-12)
    # Not supported collapses to "not": the binary table is the same table.
    assert board.binary.pairs[0].kappa == pytest.approx(0.4, abs=1e-12)
    assert (board.full.n_items, board.full.n_raters, board.sheets, board.claims) == (50, 2, 100, 50)
    assert board.confusion.labels == (SUPPORTED, NOT_SUPPORTED)
    assert board.confusion.counts == ((20, 5), (10, 15))
    body = response.content.decode()
    assert '<td>rev_a × rev_b</td><td class="num">50</td><td class="num">0.400</td>' in body
    assert '<td class="num">70.0%</td>' in body


def test_alpha_matches_krippendorffs_four_observer_example(client_for, board_set, lead):
    # Krippendorff (2011), section C: 4 observers × 12 units with missing values; the one
    # value of unit 12 pairs with nothing. Nominal α = 0.743 (exactly 113/152).
    values = {1: SUPPORTED, 2: PARTIAL, 3: NOT_SUPPORTED, 4: CONTRADICTED, 5: UNCLEAR}
    table = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    observers = [UserFactory(username=f"obs{i}", role="reviewer") for i in range(4)]
    _, claims = answer_with_claims(board_set, 12)
    for observer, row in zip(observers, table, strict=True):
        for claim, value in zip(claims, row, strict=True):
            if value is not None:
                submitted_sheet(claim, observer, values[value])

    response = _dashboard(client_for(lead), board_set)

    board = response.context["board"]
    assert (board.full.n_items, board.full.n_raters, board.sheets) == (11, 4, 41)
    assert board.full.alpha == pytest.approx(113 / 152, abs=1e-12)
    assert [(p.rater_a, p.rater_b, p.n_items) for p in board.full.pairs] == [
        ("obs0", "obs1", 9),
        ("obs0", "obs2", 8),
        ("obs0", "obs3", 9),
        ("obs1", "obs2", 9),
        ("obs1", "obs3", 10),
        ("obs2", "obs3", 10),
    ]
    assert '<td class="num">0.743</td>' in response.content.decode()


def test_heat_map_cells_link_to_their_claims(client_for, board_set, lead, reviewer_a, reviewer_b):
    claims = _two_by_two(
        board_set, reviewer_a, reviewer_b, {(YES, YES): 3, (YES, PARTIAL): 2, (PARTIAL, PARTIAL): 1}
    )
    client = client_for(lead)

    response = _dashboard(client, board_set)

    [(_, full), (_, binary)] = response.context["heatmaps"]
    cells = {(c["x"], c["y"]): c for c in full["cells"]}
    assert [c["count"] for c in full["cells"]] == [3, 2, 0, 1]
    link = full["cells"][1]["href"]
    assert link == (
        f"/sets/{board_set.pk}/agreement/claims/?which=reviewers&scale=full"
        "&row=supported&col=partially_supported"
    )
    assert full["cells"][2]["href"] == ""  # nothing behind an empty cell
    assert [c["count"] for c in binary["cells"]] == [3, 2, 0, 1]
    assert len(cells) == 4
    body = response.content.decode()
    assert f'<a href="{link.replace("&", "&amp;")}" class="hm-link">' in body
    assert 'fill="#2f5d8a" fill-opacity="0.62"' in body  # 2 of a peak of 3

    listed = client.get(link)
    assert [c.pk for c in listed.context["rows"]] == [claims[3].pk, claims[4].pk]
    assert listed.context["title"] == "Sheet A: Supported · Sheet B: Partially supported"


def test_evidence_jaccard_and_matcher_acceptance(
    client_for, board_set, lead, reviewer_a, reviewer_b
):
    _, (first, second) = answer_with_claims(board_set, 2)
    s1, s2 = {"passage": 1, "start": 0, "end": 20}, {"passage": 1, "start": 21, "end": 41}
    ClaimCheck.objects.create(
        claim=first, matcher_version="t", label="likely", highlights=[{**s1, "score": 0.9}]
    )
    # The runner-up is far below the best: reviewers were never shown it.
    ClaimCheck.objects.create(
        claim=second,
        matcher_version="t",
        label="likely",
        highlights=[{**s2, "score": 0.8}, {**s1, "score": 0.1}],
    )
    submitted_sheet(first, reviewer_a, YES, evidence=[{**s1, "text": "x"}])
    submitted_sheet(first, reviewer_b, YES, evidence=[{**s1, "text": "x"}, {**s2, "text": "y"}])
    submitted_sheet(second, reviewer_a, NO)
    submitted_sheet(second, reviewer_b, NO)

    board = _dashboard(client_for(lead), board_set).context["board"]

    # Jaccard 1/2 on the first claim, 1 on the second (both found nothing to cite).
    assert board.evidence_jaccard == 0.75
    m = board.matcher
    assert (m.sheets, m.highlighted, m.kept, m.chosen, m.novel) == (4, 4, 2, 3, 1)
    assert (m.acceptance, m.novel_share) == (0.5, 1 / 3)


def test_span_level_evidence_and_unsupported_agreement_beside_the_jaccard(
    client_for, board_set, lead, reviewer_a, reviewer_b
):
    # "The first sentence." whole against its last two words; "Claim 0" vs "Claim".
    _, (first, second) = answer_with_claims(board_set, 2)
    whole = {"passage": 1, "start": 0, "end": 19, "text": "The first sentence."}
    trimmed = {"passage": 1, "start": 4, "end": 18, "text": "first sentence"}
    claim_0 = {"text": "Claim 0", "start": 0, "end": 7, "note": "a"}
    claim = {"text": "Claim", "start": 0, "end": 5, "note": "b"}
    submitted_sheet(first, reviewer_a, YES, evidence=[whole], unsupported_assertions=[claim_0])
    submitted_sheet(first, reviewer_b, YES, evidence=[trimmed], unsupported_assertions=[claim])
    submitted_sheet(second, reviewer_a, NO)
    submitted_sheet(second, reviewer_b, NO)

    response = _dashboard(client_for(lead), board_set)

    board = response.context["board"]
    body = response.content.decode()
    # First claim: spans differ (Jaccard 0), words 2 of 3 and 2 (F1 0.8), claim words 1 of 2
    # and 1 (F1 2/3); second claim: nothing chosen or marked by either, agreement 1.
    assert board.evidence_jaccard == 0.5
    assert board.evidence_f1 == pytest.approx((0.8 + 1) / 2)
    assert board.unsupported_f1 == pytest.approx((2 / 3 + 1) / 2)
    assert '<dd id="evidence-f1">0.900</dd>' in body
    assert '<dd id="unsupported-f1">0.833</dd>' in body
    assert "Two sheets that mark no unsupported words agree completely (F1 1.0)" in body
    pair = f"{reviewer_a.pk}-{reviewer_b.pk}"
    paired = _dashboard(client_for(lead), board_set, pair=pair).context["board"]
    assert paired.pair is not None
    assert (paired.evidence_f1, paired.unsupported_f1) == (board.evidence_f1, board.unsupported_f1)


def test_system_and_pair_filters(client_for, board_set, lead, reviewer_a, reviewer_b):
    carol = UserFactory(username="carol", role="reviewer")
    _two_by_two(board_set, reviewer_a, reviewer_b, {(YES, YES): 2}, system="sys-1")
    _two_by_two(board_set, reviewer_a, carol, {(YES, NO): 3}, system="sys-2")
    client = client_for(lead)

    only_2 = _dashboard(client, board_set, system="sys-2").context["board"]
    pair = _dashboard(client, board_set, pair=f"{carol.pk}-{reviewer_a.pk}").context
    unknown = _dashboard(client, board_set, pair="999-1000").context["board"]

    assert (only_2.sheets, [(p.rater_a, p.rater_b) for p in only_2.full.pairs]) == (
        6,
        [("carol", "rev_a")],
    )
    board = pair["board"]
    assert [(p.rater_a, p.rater_b, p.n_items) for p in board.full.pairs] == [("carol", "rev_a", 3)]
    # Rows are the pair's first reviewer: carol said "not supported" where rev_a said yes.
    assert (board.confusion.rows, board.confusion.cols) == ("carol", "rev_a")
    assert board.confusion.counts == ((0, 0), (3, 0))
    assert pair["heatmaps"][0][1]["rows_name"] == "carol"
    assert [label for _, label in pair["form"].fields["pair"].choices] == [
        "all reviewers",
        "carol × rev_a",
        "carol × rev_b",
        "rev_a × rev_b",
    ]
    assert unknown.sheets == 10  # an unknown pair is ignored, not an error
    # The pair's cell lists carol's "not supported" against rev_a's "supported", whichever
    # of the two sheets came first.
    listed = client.get(
        reverse("audit:agreement-claims", args=[board_set.pk]),
        {"pair": f"{carol.pk}-{reviewer_a.pk}", "row": NO, "col": YES},
    )
    assert len(listed.context["rows"]) == 3
    assert {c.answer.system for c in listed.context["rows"]} == {"sys-2"}


def test_raters_against_gold_with_the_claims_where_they_differ(
    client_for, board_set, lead, reviewer_a, reviewer_b
):
    _, claims = answer_with_claims(board_set, 6, external_id="ans-1")
    gold = [YES, YES, NO, NO, CONTRADICTED, YES]
    for claim, judgment in zip(claims, gold, strict=True):
        Adjudication.objects.create(claim=claim, judgment=judgment, source="edited", lead=lead)
    judge = Rater.objects.create(name="nli-v1", kind=Rater.Kind.AUTOMATIC)
    for claim, judgment in zip(claims, [YES, NO, NO, NO, NO, ""], strict=True):
        RaterLabel.objects.create(rater=judge, claim=claim, judgment=judgment)
    client = client_for(lead)

    response = _dashboard(client, board_set)

    [row] = response.context["raters"]
    report = row["score"].full
    assert (report.n, report.accuracy, report.differing) == (5, 0.6, 2)
    assert report.kappa == pytest.approx(1 / 3, abs=1e-12)
    assert report.per_label == {
        SUPPORTED: LabelScore(precision=1.0, recall=0.5, support=2),
        NOT_SUPPORTED: LabelScore(precision=0.5, recall=1.0, support=2),
        CONTRADICTED: LabelScore(precision=None, recall=0.0, support=1),
    }
    assert row["score"].binary.accuracy == 0.8
    assert row["heatmap"]["rows_name"] == "Gold"
    assert row["differ_url"] == (
        f"/sets/{board_set.pk}/agreement/claims/?which=rater-{judge.pk}&differ=1"
    )
    body = response.content.decode()
    assert "2 claims where nli-v1 differs from gold</a>" in body

    listed = client.get(row["differ_url"])
    assert [c.pk for c in listed.context["rows"]] == [claims[1].pk, claims[4].pk]
    assert [c.gold_label for c in listed.context["rows"]] == ["Supported", "Contradicted"]
    # Collapsed, only claim 1 differs: contradicted and not supported are both "not".
    binary = client.get(row["differ_url"] + "&scale=binary")
    assert [c.pk for c in binary.context["rows"]] == [claims[1].pk]
    cell = client.get(
        reverse("audit:agreement-claims", args=[board_set.pk]),
        {"which": f"rater-{judge.pk}", "scale": "binary", "row": "not", "col": "not"},
    )
    assert [c.pk for c in cell.context["rows"]] == [claims[2].pk, claims[3].pk, claims[4].pk]


def test_dashboard_reads_facts_not_sheets_and_shows_a_change_at_once(
    client_for, board_set, lead, reviewer_a, reviewer_b
):
    claims = _two_by_two(board_set, reviewer_a, reviewer_b, {(YES, YES): 2, (YES, NO): 2})
    client = client_for(lead)

    with CaptureQueriesContext(connection) as first:
        before = _dashboard(client, board_set).context["board"]
    _, (extra,) = answer_with_claims(board_set, 1)
    submitted_sheet(extra, reviewer_a, NO)
    submitted_sheet(extra, reviewer_b, NO)
    after = _dashboard(client, board_set).context["board"]
    Adjudication.objects.create(claim=extra, judgment=NO, source="unanimous")
    with_gold = _dashboard(client, board_set).context["board"]

    sql = " ".join(q["sql"] for q in first.captured_queries)
    assert '"audit_auditsheet"' not in sql
    assert '"audit_claimcheck"' not in sql
    assert (before.sheets, after.sheets) == (8, 10)
    assert after.full.pairs[0].n_items == len(claims) + 1
    assert (with_gold.gold, with_gold.sheets) == (1, 10)


def test_reviewers_never_see_agreement_pages(client_for, board_set, reviewer_a):
    client = client_for(reviewer_a)
    urls = [
        reverse("audit:agreement", args=[board_set.pk]),
        reverse("audit:agreement-claims", args=[board_set.pk]),
        reverse("audit:verdicts-upload", args=[board_set.pk]),
    ]

    assert [client.get(url).status_code for url in urls] == [403, 403, 403]


def test_verdict_upload_page_imports_and_reports_errors(client_for, handmade, lead):
    client = client_for(lead)
    url = reverse("audit:verdicts-upload", args=[handmade.pk])
    good = json.dumps(
        {"judge": "llm-a", "answer_id": "hm-1-a", "claim_index": 0, "judgment": "supported"}
    )
    bad = json.dumps(
        {"judge": "llm-a", "answer_id": "hm-1-a", "claim_index": 7, "judgment": "supported"}
    )

    ok = client.post(url, {"file": SimpleUploadedFile("v.jsonl", good.encode())})
    refused = client.post(url, {"file": SimpleUploadedFile("w.jsonl", f"{good}\n{bad}".encode())})

    assert ok.status_code == 200
    assert (ok.context["summary"].created, ok.context["raters"]) == (
        1,
        [{"rater__name": "llm-a", "rater__kind": "automatic", "n": 1}],
    )
    assert refused.status_code == 400
    assert refused.context["error"] == (
        "w.jsonl: line 2: claim_index: answer 'hm-1-a' has 4 claims, numbered from 0; "
        "there is no claim 7"
    )
    assert RaterLabel.objects.count() == 1
