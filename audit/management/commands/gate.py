"""`manage.py gate --set NAME --system S`: the release gate on the server itself. Exits 0
(pass), 1 (fail), 2 (provisional) or 3 (no such set or system), printing the reasons."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandParser

from audit import selectors
from audit.gate import ERROR, describe, exit_code
from audit.models import AuditSet


class Command(BaseCommand):
    help = "Exit 0 if a system passes its set's release criteria, 1 if it fails, 2 if provisional."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--set", required=True, dest="set_name", help="the set's name or id")
        parser.add_argument("--system", required=True, help="the system (run) to decide")
        parser.add_argument(
            "--with-judge",
            action="store_true",
            help="let the set's accepted automatic judge stand for claims no human judged",
        )

    def handle(self, *args, set_name: str, system: str, with_judge: bool, **options) -> None:
        audit_set = AuditSet.objects.filter(name=set_name).first()
        if audit_set is None and set_name.isdigit():
            audit_set = AuditSet.objects.filter(pk=int(set_name)).first()
        if audit_set is None:
            self.stderr.write(f"gate: no set named {set_name!r}")
            sys.exit(ERROR)
        if system not in selectors.set_systems(audit_set=audit_set):
            self.stderr.write(f"gate: no system {system!r} in set {audit_set.name!r}")
            sys.exit(ERROR)
        # The command line sees everything, as its exports do: no viewer, nobody blind.
        decision = selectors.decision_report(
            audit_set=audit_set, system=system, viewer=None, with_judge=with_judge
        )
        self.stdout.write(describe(decision))
        sys.exit(exit_code(decision))
