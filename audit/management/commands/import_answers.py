"""python manage.py import_answers PATH --set NAME [--format auto|FORMAT]

FORMAT is native, alce, ragas, expertqa or citeaudit (an export_labels jsonl file).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from tqdm import tqdm

from audit import services
from audit.formats import FORMATS, FormatError, parse_file
from audit.models import AuditSet


class Command(BaseCommand):
    help = "Import an answer file into an audit set (created if missing). All or nothing."

    def add_arguments(self, parser) -> None:
        parser.add_argument("path")
        parser.add_argument("--set", required=True, dest="set_name")
        parser.add_argument("--format", default="auto", choices=["auto", *FORMATS])

    def handle(self, path: str, set_name: str, format: str, **options) -> None:
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        size = file.stat().st_size
        if size > settings.IMPORT_MAX_BYTES:
            raise CommandError(
                f"{file.name}: {size:,} bytes is over the import limit of "
                f"{settings.IMPORT_MAX_BYTES:,} bytes"
            )
        data = file.read_bytes()
        try:
            parsed = parse_file(data, file.name, fmt=format, max_bytes=settings.IMPORT_MAX_BYTES)
            with (
                transaction.atomic(),
                tqdm(
                    total=len(parsed.records),
                    unit="answer",
                    disable=not sys.stderr.isatty(),
                    file=sys.stderr,
                ) as bar,
            ):
                audit_set, _ = AuditSet.objects.get_or_create(name=set_name)
                summary = services.answers_import(
                    audit_set=audit_set,
                    parsed=parsed,
                    filename=file.name,
                    sha256=hashlib.sha256(data).hexdigest(),
                    progress=bar.update,
                )
        except FormatError as error:
            # One line, no traceback: the error names the file, line and field.
            raise CommandError(f"{error} (nothing was imported)") from None
        restored = f", {summary.sheets} sheets, {summary.gold} gold records"
        self.stdout.write(
            f"{file.name} ({summary.format}) into “{set_name}”: {summary.answers} answers "
            f"({summary.skipped} already present), {summary.claims} claims, "
            f"{summary.uncited} uncited, {summary.cited_unknown} cited-unknown markers, "
            f"{summary.not_located} claims not located"
            f"{restored if summary.format == 'citeaudit' else ''}"
        )
