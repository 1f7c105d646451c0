"""Planner statistics after bulk writes, so the pages right after them are planned on what is
there: PostgreSQL until autovacuum gets to the tables, SQLite ever (it never analyses by
itself). Without them SQLite drove the claims list's label and reviewer filters from their
indexes as if they were selective, then sorted every claim of the set (66 ms and 51 ms for
page 1 at 100k claims, when every claim matched); PostgreSQL exported a freshly loaded set
in 50-80 s instead of 13-29 s.
"""

from __future__ import annotations

from django.db import connection

from audit.models import (
    Adjudication,
    Answer,
    Assignment,
    AuditSheet,
    Claim,
    ClaimCheck,
    Passage,
    Question,
    RaterLabel,
)

# Rows a write must add before the tables are analysed again: ANALYZE reads a sample of
# each table (a fraction of a second at 100k claims), which small writes do not need.
AFTER_ROWS = 5000
# Every table a restore fills and an export reads a chunk at a time: without statistics,
# PostgreSQL expected each chunk's `claim_id IN (...)` to match the whole table and read
# citations, gold and gold's sheets in full for every chunk.
TABLES = (
    Answer,
    Passage,
    Claim,
    Claim.citations.through,
    ClaimCheck,
    Question,
    Assignment,
    AuditSheet,
    Adjudication,
    Adjudication.sheets.through,
    RaterLabel,
)


def planner_statistics_refresh(*, rows: int) -> bool:
    """ANALYZE the app's big tables when a write added `rows` ≥ AFTER_ROWS rows, inside the
    caller's transaction (the statistics commit with the rows); returns whether it did.

    Every table, not only those the write touched: PostgreSQL plans a table that was never
    analysed (the review tables right after a first import) as if it held ten pages of
    rows, and empty tables cost ANALYZE next to nothing."""
    if rows < AFTER_ROWS:
        return False
    with connection.cursor() as cursor:
        for model in TABLES:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
    return True
