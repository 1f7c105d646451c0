"""The layout of the templates a newcomer reads: a fragment used by one page lives in it."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
INCLUDE = re.compile(r"""\{%\s*include\s+["'](audit/_[^"']+)["']""")


def test_no_include_is_used_by_only_one_template() -> None:
    includers: dict[str, set[str]] = defaultdict(set)
    for template in TEMPLATES.rglob("*.html"):
        for name in INCLUDE.findall(template.read_text(encoding="utf-8")):
            includers[name].add(template.relative_to(TEMPLATES).as_posix())

    # One page's fragment is a {% partialdef %} in that page, not a file of its own.
    assert {name: pages for name, pages in includers.items() if len(pages) == 1} == {}
