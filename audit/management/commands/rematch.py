"""python manage.py rematch --set NAME: recompute the matcher's checks for a set."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand
from tqdm import tqdm

from audit import matching, services
from audit.management.workspaces import add_workspace_argument, set_by_name


class Command(BaseCommand):
    help = "Recompute the automatic matcher's checks for every claim of a set (idempotent)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--set", required=True, dest="set_name")
        add_workspace_argument(parser)

    def handle(self, set_name: str, **options) -> None:
        audit_set = set_by_name(set_name, options.get("workspace"))
        with tqdm(
            total=audit_set.answers.count(),
            unit="answer",
            disable=not sys.stderr.isatty(),
            file=sys.stderr,
        ) as bar:
            count = services.claim_checks_recompute(audit_set=audit_set, progress=bar.update)
        self.stdout.write(f"Checked {count} claims with matcher {matching.MATCHER_VERSION}.")
