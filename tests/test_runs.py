"""Runs of a system: a push of a named run replaces the run's answers by answer id, keeps
what did not change and archives what did; another run of the system stays beside it."""

from __future__ import annotations

import hashlib
import io

import pytest
from django.core.management import call_command

from audit import selectors, services
from audit.formats import FormatError, parse_file
from audit.metrics import label_counts
from audit.models import Adjudication, Answer, AuditSheet, Claim, ImportBatch
from audit.runs import RunChanges, changes_of, retired_of, run_key, run_system
from tests.factories import submit_sheet
from tests.formats.helpers import jsonl, native_line

pytestmark = pytest.mark.django_db

SYSTEM = "rag"


def _line(answer_id: str, text: str, question: str = "q1") -> dict:
    return native_line(
        question_id=question,
        answer_id=answer_id,
        system="ignored: the push names the system",
        answer=text,
    )


def _push(audit_set, *lines: dict, run: str = "v1", system: str = SYSTEM):
    data = jsonl(*lines)
    return services.answers_import(
        audit_set=audit_set,
        parsed=parse_file(data, "run.jsonl"),
        filename="run.jsonl",
        sha256=hashlib.sha256(data).hexdigest(),
        system=system,
        run=run,
    )


def _current(audit_set, external_id: str, key: str = "rag@v1") -> Answer:
    return Answer.objects.get(
        audit_set=audit_set, system=key, external_id=external_id, replaced_at__isnull=True
    )


def _first_run(audit_set):
    return _push(
        audit_set,
        _line("a1", "The warranty lasts two years [1]."),
        _line("a2", "The warranty covers parts [1]."),
        _line("a3", "Returns take thirty days [1].", question="q2"),
    )


# ----------------------------------------------------------------------------- pure core


def test_run_key_is_the_system_name_for_the_default_run():
    assert run_key("rag", "") == "rag"
    assert run_key("rag", "v2") == "rag@v2"
    assert run_system("rag@v2", "v2") == "rag"
    assert run_system("rag", "") == "rag"


def test_changes_sort_pushed_answers_against_the_held_ones():
    changes = RunChanges()
    write = changes_of(
        held={"a": "h1", "b": "h2", "c": "h3"},
        pushed=[("a", "h1"), ("b", "new"), ("d", "h4")],
        changes=changes,
    )
    changes.retired = retired_of(held=["a", "b", "c"], pushed={"a", "b", "d"})

    assert write == ["b", "d"]
    assert changes.as_dict() == {
        "added": 1,
        "changed": 1,
        "unchanged": 1,
        "retired": 1,
        "ids": {"added": ["d"], "changed": ["b"], "unchanged": ["a"], "retired": ["c"]},
    }


# ----------------------------------------------------------------------------- service


def test_first_push_of_a_run_adds_every_answer_under_the_run_key(audit_set):
    summary = _first_run(audit_set)

    assert summary.changes["added"] == 3
    assert summary.changes["ids"]["added"] == ["a1", "a2", "a3"]
    assert sorted(
        Answer.objects.filter(audit_set=audit_set).values_list("system", "run", "external_id")
    ) == [("rag@v1", "v1", "a1"), ("rag@v1", "v1", "a2"), ("rag@v1", "v1", "a3")]
    batch = ImportBatch.objects.get(pk=summary.batch_id)
    assert (batch.system, batch.run, batch.changes["added"]) == (SYSTEM, "v1", 3)


def test_push_again_keeps_unchanged_replaces_changed_adds_new_and_retires_missing(
    audit_set, reviewer_a, reviewer_b, lead
):
    _first_run(audit_set)
    kept = _current(audit_set, "a1")
    kept_claims = list(kept.claims.values_list("pk", flat=True))
    old = _current(audit_set, "a2")
    old_claim = old.claims.get(order=0)
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    submit_sheet(reviewer_a, old_claim, "not_supported")
    retired = _current(audit_set, "a3")

    summary = _push(
        audit_set,
        _line("a1", "The warranty lasts two years [1]."),
        _line("a2", "The warranty covers parts and labour [1]."),
        _line("a4", "Shipping is free [1].", question="q3"),
    )

    assert {k: summary.changes[k] for k in ("added", "changed", "unchanged", "retired")} == {
        "added": 1,
        "changed": 1,
        "unchanged": 1,
        "retired": 1,
    }
    assert summary.changes["ids"] == {
        "added": ["a4"],
        "changed": ["a2"],
        "unchanged": ["a1"],
        "retired": ["a3"],
    }
    assert _current(audit_set, "a1").pk == kept.pk
    assert list(kept.claims.values_list("pk", flat=True)) == kept_claims
    new = _current(audit_set, "a2")
    old.refresh_from_db()
    retired.refresh_from_db()
    assert old.replaced_by_id == new.pk
    assert old.replaced_at is not None
    assert (retired.replaced_at is not None, retired.replaced_by_id) == (True, None)
    # The old version's review stays on record.
    assert AuditSheet.objects.filter(claim=old_claim, reviewer=reviewer_a).count() == 1
    assert new.text == "The warranty covers parts and labour [1]."
    assert ImportBatch.objects.get(pk=summary.batch_id).changes == summary.changes


def test_the_decision_counts_only_the_current_version(audit_set, lead):
    _first_run(audit_set)
    # Gold says the first version of a2 is not supported: the run fails on it.
    for claim in Claim.objects.filter(answer__audit_set=audit_set):
        Adjudication.objects.create(
            claim=claim,
            judgment="not_supported" if claim.answer.external_id == "a2" else "supported",
            source="edited",
            lead=lead,
        )
    services.claims_changed(
        audit_set_id=audit_set.pk,
        claim_ids=Claim.objects.filter(answer__audit_set=audit_set).values_list("pk", flat=True),
    )
    before = selectors.release_counts_by_system(audit_set=audit_set)["rag@v1"]

    _push(
        audit_set,
        _line("a1", "The warranty lasts two years [1]."),
        _line("a2", "The warranty covers parts and labour [1]."),
        _line("a3", "Returns take thirty days [1].", question="q2"),
    )

    after = selectors.release_counts_by_system(audit_set=audit_set)["rag@v1"]
    live = [
        label
        for label in selectors.claim_labels(audit_set=audit_set, viewer=lead)
        if label.system == "rag@v1"
    ]
    assert after == label_counts(live)
    current = Claim.objects.filter(
        answer__audit_set=audit_set, answer__replaced_at__isnull=True, parent__isnull=True
    ).count()
    assert after.claims == current == before.claims
    # The replaced claim's "not supported" left; the new one is not judged yet.
    assert after.supported == before.supported
    assert after.provisional == before.provisional + 1


def test_pushing_the_same_run_again_changes_nothing_but_is_recorded(audit_set):
    _first_run(audit_set)
    answers = sorted(Answer.objects.values_list("pk", "replaced_at"))

    summary = _first_run(audit_set)

    assert summary.changes["unchanged"] == 3
    assert summary.answers == 0
    assert sorted(Answer.objects.values_list("pk", "replaced_at")) == answers
    assert ImportBatch.objects.filter(pk=summary.batch_id).exists()


def test_a_text_changed_back_comes_back_as_a_new_current_answer(audit_set):
    _first_run(audit_set)
    first = _current(audit_set, "a1")
    _push(audit_set, _line("a1", "Changed [1]."))

    summary = _push(audit_set, _line("a1", "The warranty lasts two years [1]."))

    assert summary.changes["ids"]["changed"] == ["a1"]
    again = _current(audit_set, "a1")
    assert again.pk != first.pk
    assert again.content_hash == first.content_hash


def test_a_new_run_keeps_the_old_one_and_becomes_the_default(audit_set):
    _first_run(audit_set)
    _push(audit_set, _line("a1", "The warranty lasts three years [1]."), run="v2")

    assert selectors.release_counts_by_system(audit_set=audit_set).keys() == {"rag@v1", "rag@v2"}
    assert selectors.decision_key(audit_set=audit_set, system=SYSTEM) == "rag@v2"
    assert selectors.decision_key(audit_set=audit_set, system=SYSTEM, run="v1") == "rag@v1"
    assert selectors.decision_key(audit_set=audit_set, system=SYSTEM, run="v9") is None
    assert [run.run for run in selectors.system_runs(audit_set=audit_set)] == ["v2", "v1"]

    # Pushed again, even unchanged, the first run is the latest.
    _first_run(audit_set)
    assert selectors.decision_key(audit_set=audit_set, system=SYSTEM) == "rag@v1"


def test_a_file_without_a_run_imports_as_it_always_did(audit_set):
    data = jsonl(_line("a1", "The warranty lasts two years [1]."))
    for _ in range(2):
        summary = services.answers_import(
            audit_set=audit_set,
            parsed=parse_file(data, "plain.jsonl"),
            filename="plain.jsonl",
            sha256=hashlib.sha256(data).hexdigest(),
        )

    assert (summary.answers, summary.skipped, summary.batch_id, summary.changes) == (
        0,
        1,
        None,
        None,
    )
    assert list(Answer.objects.values_list("system", "run")) == [
        ("ignored: the push names the system", "")
    ]
    assert (
        selectors.decision_key(audit_set=audit_set, system="ignored: the push names the system")
        == "ignored: the push names the system"
    )


def test_a_run_s_answer_without_an_id_is_refused_naming_the_field(audit_set):
    line = native_line(question_id="q1", answer="No id [1].")

    with pytest.raises(FormatError) as refused:
        _push(audit_set, line)

    assert refused.value.field == "answer_id"
    assert Answer.objects.count() == 0
    assert ImportBatch.objects.count() == 0


def test_verdicts_name_the_current_version_of_a_replaced_answer(audit_set):
    _first_run(audit_set)
    _push(audit_set, _line("a1", "The warranty lasts three years [1]."))
    new = _current(audit_set, "a1")
    verdicts = jsonl(
        {"judge": "j", "answer_id": "a1", "claim_index": 0, "judgment": "not_supported"}
    )

    summary = services.verdicts_import(
        audit_set=audit_set, data=verdicts, filename="v.jsonl", max_bytes=10_000
    )

    assert summary.created == 1
    assert new.claims.get(order=0).rater_labels.get().judgment == "not_supported"


# ----------------------------------------------------------------------------- pages


def test_the_set_page_shows_runs_and_marks_replaced_answers(client_for, audit_set, lead):
    _first_run(audit_set)
    _push(audit_set, _line("a1", "Changed <b>text</b> [1]."))
    old = Answer.objects.get(external_id="a1", replaced_at__isnull=False)
    new = _current(audit_set, "a1")
    client = client_for(lead)

    page = client.get(f"/sets/{audit_set.pk}/").content.decode()
    replaced_only = client.get(f"/sets/{audit_set.pk}/", {"replaced": "true"}).content.decode()

    # a1's old version replaced; a2 and a3, left out, retired.
    assert page.count('class="flag replaced"') == 3
    assert 'rag@v1 <span class="muted">(0 added, 1 changed, 0 unchanged, 2 retired)' in page
    assert f'href="/answers/{old.pk}/"' in replaced_only
    assert f'href="/answers/{new.pk}/"' not in replaced_only


def test_a_replaced_answer_s_page_links_its_current_version_and_back(client_for, audit_set, lead):
    _first_run(audit_set)
    _push(audit_set, _line("a1", "Changed [1]."))
    old = Answer.objects.get(external_id="a1", replaced_at__isnull=False)
    new = _current(audit_set, "a1")
    client = client_for(lead)

    old_page = client.get(old.get_absolute_url()).content.decode()
    new_page = client.get(new.get_absolute_url()).content.decode()

    assert "see the current version</a>" in old_page
    assert f'href="/answers/{new.pk}/"' in old_page
    assert f'href="/answers/{old.pk}/"' in new_page
    assert "(run v1)" in new_page


def test_the_import_command_pushes_a_run_and_reports_what_changed(audit_set, tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(jsonl(_line("a1", "One [1]."), _line("a2", "Two [1].")))
    call_command(
        "import_answers",
        str(path),
        "--set",
        audit_set.name,
        "--system",
        "rag",
        "--run",
        "v1",
        "--workers",
        "0",
    )
    path.write_bytes(jsonl(_line("a1", "One, again [1].")))
    out = io.StringIO()

    call_command(
        "import_answers",
        str(path),
        "--set",
        audit_set.name,
        "--system",
        "rag",
        "--run",
        "v1",
        "--workers",
        "0",
        stdout=out,
    )

    assert out.getvalue().splitlines()[-1] == (
        "run rag@v1: 0 added, 1 changed, 0 unchanged, 1 retired"
    )
    assert _current(audit_set, "a1").text == "One, again [1]."


def test_a_run_without_a_system_is_refused_by_the_service_too(audit_set):
    with pytest.raises(FormatError) as refused:
        _push(audit_set, _line("a1", "One [1]."), system="")

    assert refused.value.field == "system"
    assert Answer.objects.count() == 0


def test_reviewers_are_given_only_the_current_versions_claims(
    audit_set, reviewer_a, reviewer_b, lead
):
    _first_run(audit_set)
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    old = _current(audit_set, "a2")
    old_claims = set(old.claims.values_list("pk", flat=True))
    _push(
        audit_set,
        _line("a1", "The warranty lasts two years [1]."),
        _line("a2", "The warranty covers parts and labour [1]."),
    )
    new_claims = set(_current(audit_set, "a2").claims.values_list("pk", flat=True))
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )

    seen = set()
    after = None
    while (
        claim_id := selectors.next_claim_id(reviewer=reviewer_a, audit_set=audit_set, after=after)
    ) is not None and claim_id not in seen:
        seen.add(claim_id)
        after = Claim.objects.get(pk=claim_id)
    assert seen & old_claims == set()
    assert new_claims <= seen
