"""python manage.py export_labels --set NAME [--workspace SLUG]
    --format jsonl|audit-sheets|csv|evidence [--out PATH]

Streams the set's labelled data to PATH, or to stdout without --out.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from audit.management.workspaces import add_workspace_argument, set_by_name
from audit.services.exports import EXPORT_FORMATS, export_answer_count, export_stream


class Command(BaseCommand):
    help = (
        "Export a set's labelled data: jsonl (everything, re-importable), audit-sheets "
        "(JSON array of sheets and gold), csv (one row per claim), evidence (CSV)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--set", required=True, dest="set_name")
        parser.add_argument("--format", required=True, choices=list(EXPORT_FORMATS))
        parser.add_argument("--out", help="File to write; stdout when left out.")
        add_workspace_argument(parser)

    def handle(self, set_name: str, format: str, out: str | None, **options) -> None:
        audit_set = set_by_name(set_name, options.get("workspace"))
        with tqdm(
            total=export_answer_count(audit_set=audit_set),
            unit="answer",
            disable=not sys.stderr.isatty(),
            file=sys.stderr,
        ) as bar:
            pieces = export_stream(audit_set=audit_set, fmt=format, progress=bar.update)
            if out is None:
                for piece in pieces:
                    self.stdout.write(piece, ending="")
                return
            target = Path(out)
            # Written beside the target and renamed at the end, so a failed export never
            # leaves a truncated file under the name a reader expects.
            partial = target.with_name(f".{target.name}.part")
            try:
                with partial.open("w", encoding="utf-8", newline="") as file:
                    for piece in pieces:
                        file.write(piece)
                os.replace(partial, target)
            except OSError as error:
                partial.unlink(missing_ok=True)
                raise CommandError(f"{out}: {error.strerror or error}") from None
            except BaseException:
                partial.unlink(missing_ok=True)
                raise
        self.stdout.write(f"Wrote the {format} export of “{set_name}” to {out}.")
