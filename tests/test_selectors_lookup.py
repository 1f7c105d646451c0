"""Selectors answer "not found" in domain terms; only the views turn that into a 404."""

from __future__ import annotations

import pytest

from audit import selectors
from tests.factories import AuditSetFactory

pytestmark = pytest.mark.django_db


def test_set_for_user_returns_none_for_a_set_the_reviewer_is_not_in(reviewer_a):
    other = AuditSetFactory()
    assert selectors.set_for_user(user=reviewer_a, pk=other.pk) is None


def test_set_for_user_returns_none_for_a_missing_set(lead):
    assert selectors.set_for_user(user=lead, pk=999_999) is None


def test_answer_for_user_returns_none_for_a_missing_answer(lead):
    assert selectors.answer_for_user(user=lead, pk=999_999) is None


def test_an_unknown_run_is_a_lookup_error_not_a_404(audit_set):
    with pytest.raises(selectors.UnknownRun) as raised:
        selectors.run_question_ids(audit_set=audit_set, run="nonsense:1")
    assert isinstance(raised.value, LookupError)
    with pytest.raises(selectors.UnknownRun):
        selectors.run_claims(audit_set=audit_set, run="import:x")


def test_no_selector_module_imports_http404():
    import pathlib

    import audit.selectors as package

    folder = pathlib.Path(package.__file__).parent
    offenders = [p.name for p in sorted(folder.glob("*.py")) if "Http404" in p.read_text()]
    assert offenders == []
