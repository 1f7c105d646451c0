"""A trigram index for the claims list's text filter on PostgreSQL (icontains compares
UPPER(text) with LIKE '%...%', which no b-tree serves): a word nobody wrote was a scan of
every claim, 130 ms at 100k claims, and is an index probe with it. SQLite has no such index
and keeps scanning. Without the rights to create pg_trgm the index is left out, not the
migration: the filter still works, only slower."""

from django.db import migrations, transaction


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    try:
        with transaction.atomic(using=schema_editor.connection.alias):
            schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except Exception:  # noqa: BLE001 - a missing right or package: go on without the index
        return
    schema_editor.execute(
        "CREATE INDEX IF NOT EXISTS claim_text_trgm_idx "
        "ON audit_claim USING gin (UPPER(text) gin_trgm_ops)"
    )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS claim_text_trgm_idx")


class Migration(migrations.Migration):
    dependencies = [("audit", "0014_release_facts")]

    operations = [migrations.RunPython(create, drop)]
