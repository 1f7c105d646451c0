"""Plain inserts of many new rows, for imports: ids reserved up front, rows written with
executemany (SQLite) or COPY (PostgreSQL), no model instances and no signals.

Only for models whose saves do nothing besides writing the row (no history, no signal
receivers): Django's bulk_create sends no signals either, but it builds an instance and
compiles an INSERT of every row, which cost more than the matching of an import.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection, models

# (table, primary key column) -> the name of its id sequence on PostgreSQL.
_SEQUENCES: dict[tuple[str, str], str] = {}


def reserve_ids(model: type[models.Model], count: int) -> list[int]:
    """count new primary keys for model, in increasing order, none of them used again.

    The caller must be inside a transaction that holds the write lock on SQLite
    (transaction_mode IMMEDIATE), so no other writer can take the same ids.
    """
    if count == 0:
        return []
    table = model._meta.db_table
    pk = model._meta.pk.column
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            sequence = _SEQUENCES.get((table, pk))
            if sequence is None:
                cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, pk])
                sequence = _SEQUENCES[table, pk] = cursor.fetchone()[0]
            # The sequence by name, not pg_get_serial_sequence inside nextval: that was
            # looked up again for every id, and cost 0.42 s instead of 0.07 s per 60,000.
            cursor.execute(
                "SELECT nextval(%s::regclass) FROM generate_series(1, %s)", [sequence, count]
            )
            return sorted(row[0] for row in cursor.fetchall())
        # AUTOINCREMENT tables never reuse an id: start past both the sequence and the rows.
        # An explicit id above the sequence moves the sequence along with it.
        quoted = connection.ops.quote_name(table)
        cursor.execute(
            f"SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = %s), 0), "
            f"coalesce((SELECT max({connection.ops.quote_name(pk)}) FROM {quoted}), 0))",
            [table],
        )
        first = cursor.fetchone()[0] + 1
    return list(range(first, first + count))


@contextmanager
def foreign_keys_checked_per_statement() -> Iterator[None]:
    """On PostgreSQL, inside a transaction: check foreign keys at the end of each statement
    while the block runs, instead of at commit.

    Django makes every foreign key DEFERRABLE INITIALLY DEFERRED, so the checks of a bulk
    import's rows queued up and ran at COMMIT, on one core, after the matching workers were
    done: 4-6 s of a 50k-task import with the other core idle. Checked per statement, the
    same checks run while the workers match. The rows must then be written parents first,
    as the import writes them. SQLite is left as it is: it checks each row as it is written
    and only counts, to the commit, the violations a deferred key may still mend.

    Not restored on an error: the transaction or savepoint that rolls back restores the
    mode with it.
    """
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    yield
    with connection.cursor() as cursor:
        # Every deferrable constraint of the schema is initially deferred (Django's).
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def insert_rows(
    model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Insert rows into model's table: values in the order of columns (attnames, the
    primary key among them), already as the database takes them (JSON as text, timestamps
    through db_value). Every other column gets its field's default, as a save would."""
    fields = [
        f
        for f in model._meta.concrete_fields
        if f.attname not in columns and not f.generated and not f.primary_key
    ]
    defaults = tuple(f.get_db_prep_save(f.get_default(), connection) for f in fields)
    names = [*columns, *(f.attname for f in fields)]
    if defaults:
        rows = (tuple(row) + defaults for row in rows)
    table = connection.ops.quote_name(model._meta.db_table)
    quoted = ", ".join(connection.ops.quote_name(model._meta.get_field(n).column) for n in names)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # COPY goes through psycopg's own cursor: its errors are made Django's here, as
            # the cursor wrapper would (a foreign key refused per statement, for one).
            with (
                connection.wrap_database_errors,
                cursor.cursor.copy(f"COPY {table} ({quoted}) FROM STDIN") as copy,
            ):
                for row in rows:
                    copy.write_row(row)
            return
        marks = ", ".join(["%s"] * len(names))
        cursor.executemany(f"INSERT INTO {table} ({quoted}) VALUES ({marks})", list(rows))


def db_value(model: type[models.Model], field: str, value: Any) -> Any:
    """value as a save of field would send it to the database (for values computed once
    per insert, such as a timestamp)."""
    return model._meta.get_field(field).get_db_prep_save(value, connection)
