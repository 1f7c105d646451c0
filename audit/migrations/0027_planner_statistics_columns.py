"""No planner statistics for long text and JSON columns that no query filters or joins on:
ANALYZE after an import sorted and compared a sample of every passage's text, every
answer's text and metadata and every check's highlights and numbers, for statistics the
planner never reads. At 10k tasks ANALYZE of the six tables an import writes took 585 ms
with them and 270 ms without, and ANALYZE runs at the end of the import, on one core.
PostgreSQL only: SQLite's ANALYZE reads only indexes.

Kept: claim and question text (the claims list's and set page's text filters), and every
column that is filtered, joined or tested for null (wrong_citation)."""

from django.db import migrations

COLUMNS = {
    "audit_passage": ("title", "url", "text"),
    "audit_answer": ("text", "metadata"),
    "audit_claimcheck": ("highlights", "numbers"),
}


def set_target(target: int):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        quote = schema_editor.quote_name
        for table, columns in COLUMNS.items():
            changes = ", ".join(
                f"ALTER COLUMN {quote(column)} SET STATISTICS {target}" for column in columns
            )
            schema_editor.execute(f"ALTER TABLE {quote(table)} {changes}")

    return apply


class Migration(migrations.Migration):
    dependencies = [("audit", "0026_api_list_indexes")]

    # -1: back to default_statistics_target.
    operations = [migrations.RunPython(set_target(0), set_target(-1))]
