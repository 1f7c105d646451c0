"""The derived rows an import writes for the claims it creates (services.derived.NewClaims)
are exactly what the general refresh writes: every import below is followed by a
set_changed rebuild, and no derived row may differ."""

from __future__ import annotations

import hashlib
import io
import itertools

import pytest
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit import services
from audit.formats import parse_file
from audit.metrics import RELEASE_FLAGS
from audit.models import (
    Answer,
    AuditSet,
    Claim,
    ClaimFact,
    PairFact,
    ReleaseFact,
    ReleaseTally,
    ReviewerTally,
    SheetFact,
)
from audit.services.derived import set_changed
from audit.services.release import release_tallies_rebuild
from tests.conftest import FIXTURES, import_file
from tests.factories import default_workspace
from tests.test_import_fuzz import IMPORTS, SAMPLES, _lines, _native

pytestmark = pytest.mark.django_db


def _derived(audit_set: AuditSet) -> dict[str, list]:
    """Every derived row of the set, keyed by what it describes, not by its own id."""
    claims = Claim.objects.filter(answer__audit_set=audit_set)
    return {
        "claims": list(
            claims.order_by("pk").values_list("pk", "severity", "evidence_jaccard", "review_status")
        ),
        "answers": list(
            Answer.objects.filter(audit_set=audit_set)
            .order_by("pk")
            .values_list("pk", "no_citation_verifies")
        ),
        "release facts": list(
            ReleaseFact.objects.filter(audit_set=audit_set)
            .order_by("claim_id")
            .values_list("claim_id", "audit_set_id", "system", "topics", *RELEASE_FLAGS)
        ),
        "release tallies": list(
            ReleaseTally.objects.filter(audit_set=audit_set)
            .order_by("key")
            .values_list("key", "system", "topics", "claims", *RELEASE_FLAGS)
        ),
        "agreement facts": [
            list(model.objects.filter(claim__in=claims).values_list("pk"))
            for model in (SheetFact, PairFact, ClaimFact)
        ],
        "reviewer tallies": list(
            ReviewerTally.objects.filter(audit_set=audit_set).values_list(
                "reviewer_id", "assigned", "submitted"
            )
        ),
    }


def _assert_as_rebuilt(audit_set: AuditSet) -> dict[str, list]:
    imported = _derived(audit_set)

    set_changed(audit_set_id=audit_set.pk)
    assert _derived(audit_set) == imported
    release_tallies_rebuild(audit_set_id=audit_set.pk)
    assert _derived(audit_set) == imported
    return imported


def _import_bytes(audit_set: AuditSet, name: str, data: bytes) -> None:
    services.answers_import(
        audit_set=audit_set,
        parsed=parse_file(data, name),
        filename=name,
        sha256=hashlib.sha256(data).hexdigest(),
    )


@pytest.mark.parametrize("path", [*SAMPLES, FIXTURES / "demo" / "handmade.jsonl"], ids=str)
def test_imported_derived_rows_equal_a_rebuild(path):
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="set")

    import_file(audit_set, path)

    derived = _assert_as_rebuilt(audit_set)
    assert len(derived["release facts"]) == Claim.objects.count()
    assert sum(row[3] for row in derived["release tallies"]) == Claim.objects.count()


@pytest.mark.parametrize("case", sorted(IMPORTS))
def test_hostile_imports_derive_what_a_rebuild_derives(case):
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="set")

    _import_bytes(audit_set, f"{case}.jsonl", IMPORTS[case])

    _assert_as_rebuilt(audit_set)


def test_answers_whose_citations_all_fail_are_flagged_as_a_rebuild_flags_them():
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="set")
    lines = [
        # Cites a passage that does not say it.
        _native(question_id="q1", answer="Zebras fly south [1].", metadata={"topics": ["HR"]}),
        # Cites a passage never supplied.
        _native(question_id="q2", answer="The rate is 7.5 percent [4]."),
        # A number the passage does not have.
        _native(question_id="q3", answer="The rate is 9.5 percent [1]."),
        # Holds up.
        _native(question_id="q4", metadata={"topics": ["hr", "Pay", 3, ["x"]]}),
        # Cites nothing.
        _native(question_id="q5", answer="The rate is 7.5 percent."),
        # The second passage says it better than the cited one.
        _native(
            question_id="q6",
            answer="Annual leave is twenty days for every employee [1].",
            passages=[
                {"text": "Salaries are paid monthly."},
                {"text": "Annual leave is twenty days for every employee."},
            ],
        ),
    ]

    _import_bytes(audit_set, "flags.jsonl", _lines(*lines))

    derived = _assert_as_rebuilt(audit_set)
    flagged = {pk for pk, flag in derived["answers"] if flag}
    questions = set(
        Answer.objects.filter(pk__in=flagged).values_list("question__external_id", flat=True)
    )
    assert {"q1", "q2", "q3"} <= questions
    assert not {"q4", "q5"} & questions
    topics = {tuple(row[3]) for row in derived["release facts"]}
    assert ("hr", "pay") in topics


def test_a_second_import_into_the_set_moves_its_tallies_as_a_rebuild_does():
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="set")
    first = [_native(question_id=f"q{i}", answer_id=f"a{i}") for i in range(4)]
    second = [
        _native(question_id=f"q{i}", answer_id=f"b{i}", answer="Zebras fly [1].") for i in range(3)
    ]

    _import_bytes(audit_set, "first.jsonl", _lines(*first))
    _import_bytes(audit_set, "second.jsonl", _lines(*first, *second))

    derived = _assert_as_rebuilt(audit_set)
    assert sum(row[3] for row in derived["release tallies"]) == 7


def test_command_with_workers_derives_what_a_rebuild_derives(tmp_path):
    path = tmp_path / "many.jsonl"
    path.write_bytes(
        _lines(
            *(
                _native(
                    question_id=f"q{i}",
                    answer=f"The rate is {i % 9} percent [{1 + i % 3}].",
                    metadata={"topics": [f"t{i % 4}"]},
                )
                for i in range(1100)
            )
        )
    )

    call_command(
        "import_answers", str(path), "--set", "many", "--workers", "2", stdout=io.StringIO()
    )

    derived = _assert_as_rebuilt(AuditSet.objects.get(name="many"))
    assert len(derived["release facts"]) == 1100


_WORDS = st.sampled_from(["rate", "leave", "Annual", "7.5", "9", "percent", "zebra", "2024", "é"])
_TEXT = st.lists(_WORDS, min_size=1, max_size=8).map(" ".join)
_MARKER = st.integers(0, 4).map(lambda n: f" [{n}]")
_SENTENCE = st.tuples(_TEXT, st.lists(_MARKER, max_size=2)).map(
    lambda t: t[0] + "".join(t[1]) + "."
)
_TOPICS = st.one_of(
    st.none(),
    st.lists(st.one_of(st.sampled_from(["HR", "hr", "Pay", "ß"]), st.integers()), max_size=3),
    st.sampled_from(["HR", 5, {"a": 1}]),
)


@st.composite
def _records(draw) -> list[dict]:
    lines = []
    for i in range(draw(st.integers(1, 6))):
        sentences = draw(st.lists(_SENTENCE, min_size=1, max_size=4))
        line = _native(
            question_id=f"q{i % 3}",
            question=f"Question {i % 3}?",
            answer_id=f"a{i}",
            answer=" ".join(sentences),
            passages=[
                {"text": draw(_TEXT) + ". " + draw(_TEXT) + "."}
                for _ in range(draw(st.integers(0, 3)))
            ],
        )
        if draw(st.booleans()):
            line["claims"] = sentences
        topics = draw(_TOPICS)
        if topics is not None:
            line["metadata"] = {"topics": topics}
        lines.append(line)
    return lines


_SET_NUMBERS = itertools.count()


@settings(
    max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(records=_records())
def test_random_imports_derive_what_a_rebuild_derives(records):
    audit_set = AuditSet.objects.create(
        workspace=default_workspace(), name=f"random {next(_SET_NUMBERS)}"
    )

    _import_bytes(audit_set, "random.jsonl", _lines(*records))

    _assert_as_rebuilt(audit_set)
