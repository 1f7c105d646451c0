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
