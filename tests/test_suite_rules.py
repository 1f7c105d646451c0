"""Rules the test suite and the documents keep: no timing in tests, dated figures."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
TIMING = re.compile(r"perf_counter|monotonic\(|assert .*(elapsed|duration|seconds) *<")
ROUNDS = re.compile(r"(first|second|third|fourth)[- ]session|this session|the issue", re.IGNORECASE)


def _test_sources() -> dict[str, str]:
    return {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for path in sorted(TESTS.rglob("*.py"))
        if path.name not in {"test_suite_rules.py", "conftest.py"}
    }


def test_no_test_measures_wall_clock_time():
    timed = {name for name, text in _test_sources().items() if TIMING.search(text)}
    assert timed == set()


def test_property_tests_run_without_a_deadline():
    assert settings().deadline is None
    with_deadline = {name for name, text in _test_sources().items() if "deadline=" in text}
    assert with_deadline == set()


def test_no_test_module_carries_its_own_url_config():
    assert sorted(path.name for path in TESTS.glob("urls*.py")) == []
    assert {name for name, text in _test_sources().items() if "pytest.mark.urls" in text} == set()


def test_documents_date_their_figures_instead_of_numbering_rounds_of_work():
    documents = [ROOT / "README.md", *sorted((ROOT / "bench").glob("*.md"))]
    documents += sorted((ROOT / "docs").glob("*.md"))
    numbered = {
        str(path.relative_to(ROOT))
        for path in documents
        if ROUNDS.search(path.read_text(encoding="utf-8"))
    }
    assert numbered == set()


def test_documents_link_only_to_files_that_exist():
    link = re.compile(r"\]\(([^)#]+)(?:#[^)]*)?\)")
    documents = [ROOT / "README.md", *sorted((ROOT / "bench").glob("*.md"))]
    documents += sorted((ROOT / "docs").glob("*.md"))
    missing = {
        f"{path.relative_to(ROOT)}: {target}"
        for path in documents
        for target in link.findall(path.read_text(encoding="utf-8"))
        if not target.startswith(("http://", "https://"))
        and not (path.parent / target).resolve().exists()
    }
    assert missing == set()


def test_no_helper_is_copied_into_several_test_modules():
    # A helper shared by several modules lives once, in tests/factories.py or a conftest.
    copies: dict[str, set[str]] = defaultdict(set)
    for name, text in _test_sources().items():
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef):
                copies[ast.dump(node)].add(f"{name}::{node.name}")
    assert sorted(" ".join(sorted(where)) for where in copies.values() if len(where) > 1) == []
