"""Hostile import files through the real upload page: every case ends in a clear error or a
correct import, never a server error, and a refused file writes nothing."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.models import Answer, AuditSet, Claim, ClaimCheck, Passage, Question, RaterLabel
from tests.conftest import FIXTURES, run_queued_jobs

pytestmark = pytest.mark.django_db

SAMPLES = [
    FIXTURES / "samples" / "native_sample.jsonl",
    FIXTURES / "samples" / "alce_sample.json",
    FIXTURES / "samples" / "ragas_sample.jsonl",
    FIXTURES / "samples" / "ragas_sample.json",
    FIXTURES / "expertqa" / "expertqa_slice15.jsonl",
]
MODELS = (AuditSet, Question, Answer, Passage, Claim, ClaimCheck, RaterLabel)


def _counts() -> tuple[int, ...]:
    return tuple(model.objects.count() for model in MODELS)


def _upload(client, name: str, data: bytes, set_name: str = "Fuzz") -> tuple[str, str]:
    """Upload through the page and run the queued job as a worker would: how it ended
    ("succeeded" or "failed"; an internal error raises) and its error."""
    response = client.post(
        reverse("audit:import"),
        {"new_set_name": set_name, "format": "auto", "file": SimpleUploadedFile(name, data)},
    )
    if response.status_code == 400:
        return "refused", response.context["error"]
    assert response.status_code == 302
    (job,) = run_queued_jobs()
    assert client.get(response["Location"]).status_code == 200
    return job.status, job.error


def _native(**overrides) -> dict:
    line = {
        "question_id": "q1",
        "question": "What is the rate?",
        "system": "fuzz",
        "answer": "The rate is 7.5 percent [1].",
        "passages": [{"title": "t", "url": "https://example.org", "text": "The rate is 7.5%."}],
    }
    line.update(overrides)
    return line


def _lines(*objs: dict) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


HOSTILE = {
    "truncated": _lines(_native())[:-20],
    "latin-1": "caf\xe9 [1]".encode("latin-1"),
    "utf-16": _lines(_native()).decode().encode("utf-16"),
    "nul byte": _lines(_native(answer="nul \x00 inside [1]")),
    "deep nesting": b'{"question_id": ' + b"[" * 5000 + b"]" * 5000 + b"}\n",
    "duplicate ids": _lines(_native(answer_id="a"), _native(answer_id="a", system="other")),
    "huge citation number": None,  # imports: kept as a cited-unknown marker
    "zero passages": None,  # imports: every citation is cited-unknown
    "empty": b"",
    "only whitespace": b"\n\n  \n",
    "json scalar": b"42",
    "wrong types": _lines(_native(passages="not a list")),
    "null answer": _lines(_native(answer=None)),
    "label on missing claim": _lines(
        _native(labels=[{"rater": "r", "claim": 9, "judgment": "supported"}])
    ),
}
IMPORTS = {
    "huge citation number": _lines(_native(answer="Huge [99999999999].")),
    "zero passages": _lines(_native(passages=[])),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_file_gets_a_clear_answer_and_no_partial_write(client_for, lead, case):
    client = client_for(lead)
    before = _counts()

    status, error = _upload(client, f"{case}.jsonl", IMPORTS.get(case) or HOSTILE[case])

    if case in IMPORTS:
        assert status == "succeeded"
        assert Answer.objects.count() == 1
        claim = Claim.objects.get()
        assert claim.cited_unknown in ([99999999999], [1])
        assert Answer.objects.get().is_partial is True
    else:
        assert status == "failed"
        assert error.startswith(f"{case}.jsonl: ")
        assert _counts() == before


def test_enormous_field_is_refused_by_size(client_for, lead, settings):
    settings.IMPORT_MAX_BYTES = 1000
    before = _counts()

    status, error = _upload(client_for(lead), "big.jsonl", _lines(_native(answer="x " * 2000)))

    # Refused by the page itself, before any job is queued.
    assert status == "refused"
    assert error.startswith("big.jsonl: file is ") and "over the limit of 1,000 bytes" in error
    assert _counts() == before


@settings(
    max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    sample=st.sampled_from(SAMPLES),
    cut=st.floats(0, 1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=4),
)
def test_mutated_real_files_never_cause_a_server_error(client_for, lead, sample, cut, flips):
    data = bytearray(sample.read_bytes())
    for where, value in flips:
        data[int(where * (len(data) - 1))] = value
    data = bytes(data[: max(1, int(cut * len(data)))])
    before = _counts()

    # Examples share the database: two of one length must not name the same set (the
    # form refuses a taken name), so the name also counts the sets made so far.
    name = f"Fuzz {len(data)} {AuditSet.objects.count()}"
    status, error = _upload(client_for(lead), sample.name, data, set_name=name)

    assert status in ("succeeded", "failed")
    if status == "failed":
        assert error.startswith(f"{sample.name}: ")
        assert _counts() == before
