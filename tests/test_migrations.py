"""Migrations stand on their own: a data migration freezes the code it needs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.db import connection

import audit.migrations
from audit.models import Claim

MIGRATIONS = Path(audit.migrations.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_migration_imports_the_apps_own_code():
    offending = {
        path.name: sorted(m for m in _imported_modules(path) if m.split(".")[0] == "audit")
        for path in sorted(MIGRATIONS.glob("0*.py"))
    }

    assert {name: modules for name, modules in offending.items() if modules} == {}


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL index")
def test_the_claims_text_filter_is_served_by_a_trigram_index():
    claims = Claim.objects.filter(text__icontains="nobody wrote this").order_by()
    with connection.cursor() as cursor:
        # An empty table is cheaper to scan: ask whether the index can serve it at all (a
        # b-tree cannot; only a bitmap scan of the trigram index is left).
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")

    assert "claim_text_trgm_idx" in claims.explain()


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner statistics")
def test_long_text_and_json_columns_no_query_filters_on_get_no_planner_statistics():
    # ANALYZE at the end of an import sampled them for nothing; the filtered ones keep theirs.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attrelid::regclass::text || '.' || attname, attstattarget FROM pg_attribute "
            "WHERE attrelid IN ('audit_passage'::regclass, 'audit_answer'::regclass, "
            "'audit_claimcheck'::regclass, 'audit_claim'::regclass, 'audit_question'::regclass) "
            "AND attname IN ('text', 'title', 'metadata', 'highlights', 'numbers', "
            "'wrong_citation', 'label')"
        )
        targets = dict(cursor.fetchall())

    assert targets == {
        "audit_passage.title": 0,
        "audit_passage.text": 0,
        "audit_answer.text": 0,
        "audit_answer.metadata": 0,
        "audit_claimcheck.highlights": 0,
        "audit_claimcheck.numbers": 0,
        "audit_claimcheck.wrong_citation": -1,
        "audit_claimcheck.label": -1,
        "audit_claim.text": -1,
        "audit_question.text": -1,
    }
