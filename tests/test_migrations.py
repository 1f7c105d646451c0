"""Migrations stand on their own: a data migration freezes the code it needs."""

from __future__ import annotations

import ast
from pathlib import Path

import audit.migrations

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
