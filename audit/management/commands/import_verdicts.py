"""python manage.py import_verdicts PATH --set NAME

Machine verdicts (JSONL, see audit/formats/verdicts.py) on the claims of an existing set,
stored as labels of automatic raters. All or nothing.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from audit import services
from audit.formats import FormatError
from audit.management.workspaces import add_workspace_argument, set_by_name


class Command(BaseCommand):
    help = "Import an automatic judge's verdicts on the claims of a set. All or nothing."

    def add_arguments(self, parser) -> None:
        parser.add_argument("path")
        parser.add_argument("--set", required=True, dest="set_name")
        add_workspace_argument(parser)

    def handle(self, path: str, set_name: str, **options) -> None:
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        audit_set = set_by_name(
            set_name, options.get("workspace"), missing="No audit set named “{name}”."
        )
        size = file.stat().st_size
        if size > settings.IMPORT_MAX_WHOLE_BYTES:
            raise CommandError(
                f"{file.name}: {size:,} bytes is over the import limit of "
                f"{settings.IMPORT_MAX_WHOLE_BYTES:,} bytes"
            )
        try:
            summary = services.verdicts_import(
                audit_set=audit_set,
                data=file.read_bytes(),
                filename=file.name,
                max_bytes=settings.IMPORT_MAX_WHOLE_BYTES,
            )
        except FormatError as error:
            # One line, no traceback: the error names the file, line and field.
            raise CommandError(f"{error} (nothing was imported)") from None
        self.stdout.write(
            f"{file.name} into “{set_name}”: verdicts of {', '.join(summary.judges)}: "
            f"{summary.created} new, {summary.replaced} replaced"
        )
