"""python manage.py import_answers PATH --set NAME [--workspace SLUG] [--format auto|FORMAT]

FORMAT is native, alce, ragas, expertqa or citeaudit (an export_labels jsonl file).
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from tqdm import tqdm

from audit import services
from audit.formats import FORMATS, FormatError, parse_path
from audit.import_plan import MatcherStopped
from audit.management.workspaces import add_workspace_argument, command_workspace
from audit.models import AuditSet
from audit.services.locks import write_lock_wait

# Matching is most of an import's work and this process only parses and writes, so one
# matching process per core (none on a single core, where they would only add pickling).
DEFAULT_WORKERS = min(4, os.cpu_count() or 1) if (os.cpu_count() or 1) > 1 else 0


class Command(BaseCommand):
    help = "Import an answer file into an audit set (created if missing). All or nothing."
    # The system checks load every view, table and URL (and psycopg through django-tables2,
    # whatever the database): a second of start-up for a command that uses none of them.
    # `manage.py check`, migrate and the server still run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("path")
        parser.add_argument("--set", required=True, dest="set_name")
        add_workspace_argument(parser)
        parser.add_argument("--format", default="auto", choices=["auto", *FORMATS])
        parser.add_argument(
            "--workers",
            type=int,
            default=DEFAULT_WORKERS,
            help="processes that locate and match claims while this one writes "
            f"(0: none; default {DEFAULT_WORKERS})",
        )
        parser.add_argument("--system", default="", help="the system of every answer in the file")
        parser.add_argument(
            "--run", default="", help="the file is this run of --system, replacing its last push"
        )

    def handle(
        self,
        path: str,
        set_name: str,
        format: str,
        workers: int,
        system: str = "",
        run: str = "",
        **options,
    ) -> None:
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        size = file.stat().st_size
        if size > settings.IMPORT_MAX_BYTES:
            raise CommandError(
                f"{file.name}: {size:,} bytes is over the import limit of "
                f"{settings.IMPORT_MAX_BYTES:,} bytes"
            )
        # Django and everything imported so far lives as long as the command: the garbage
        # collector need not walk it again at every full collection of the import.
        gc.freeze()
        try:
            # A native JSON Lines file is read a line at a time as it is imported; its
            # answers are counted beforehand for the progress bar.
            parsed, check = parse_path(
                file,
                file.name,
                fmt=format,
                max_bytes=settings.IMPORT_MAX_BYTES,
                max_whole_bytes=settings.IMPORT_MAX_WHOLE_BYTES,
            )
            total = len(parsed.records) if isinstance(parsed.records, tuple) else check.lines
            # No monitor thread: the matching workers are forked, and a fork should not
            # copy a thread that might hold a lock.
            tqdm.monitor_interval = 0
            with (
                # Another import may hold SQLite's write lock for minutes: wait for it.
                write_lock_wait(),
                transaction.atomic(),
                tqdm(
                    total=total,
                    unit="answer",
                    disable=not sys.stderr.isatty(),
                    file=sys.stderr,
                ) as bar,
            ):
                audit_set, _ = AuditSet.objects.get_or_create(
                    workspace=command_workspace(options.get("workspace")), name=set_name
                )
                summary = services.answers_import(
                    audit_set=audit_set,
                    parsed=parsed,
                    filename=file.name,
                    sha256=check.sha256,
                    progress=bar.update,
                    workers=max(0, workers),
                    system=system,
                    run=run,
                )
        except FormatError as error:
            # One line, no traceback: the error names the file, line and field.
            raise CommandError(f"{error} (nothing was imported)") from None
        except MatcherStopped as error:
            raise CommandError(str(error)) from None
        restored = f", {summary.sheets} sheets, {summary.gold} gold records"
        self.stdout.write(
            f"{file.name} ({summary.format}) into “{set_name}”: {summary.answers} answers "
            f"({summary.skipped} already present), {summary.claims} claims, "
            f"{summary.uncited} uncited, {summary.cited_unknown} cited-unknown markers, "
            f"{summary.not_located} claims not located"
            f"{restored if summary.format == 'citeaudit' else ''}"
        )
        if summary.changes is not None:
            self.stdout.write(
                f"run {summary.system}@{summary.run}: {summary.changes['added']} added, "
                f"{summary.changes['changed']} changed, {summary.changes['unchanged']} "
                f"unchanged, {summary.changes['retired']} retired"
            )
