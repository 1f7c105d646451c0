"""`manage.py gate --set NAME --system S [--run R]`: the release gate on the server itself. Exits 0
(pass), 1 (fail), 2 (provisional) or 3 (no such set or system, or a crash), printing the
reasons."""

from __future__ import annotations

import sys
import traceback

from django.core.management.base import BaseCommand, CommandParser

from audit import selectors
from audit.gate import ERROR, describe, exit_code
from audit.models import AuditSet


class Command(BaseCommand):
    help = "Exit 0 if a system passes its set's release criteria, 1 if it fails, 2 if provisional."
    # Set once the decision is made: only then does an exit code of 1 or 2 mean it.
    decided = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--set", required=True, dest="set_name", help="the set's name or id")
        parser.add_argument("--system", required=True, help="the system to decide")
        parser.add_argument(
            "--run", default=None, help="the system's run to decide (default: the latest)"
        )
        parser.add_argument(
            "--with-judge",
            action="store_true",
            help="let the set's accepted automatic judge stand for claims no human judged",
        )

    def run_from_argv(self, argv: list[str]) -> None:
        # From the command line only 0, 1 and 2 mean a decision: argparse's usage error (2),
        # a CommandError (1) and a crash anywhere, the system checks included (1), would
        # read as "provisional" or "fail" in CI, so each exits 3 (error).
        try:
            super().run_from_argv(argv)
        except SystemExit as exit_:
            if exit_.code in (None, 0) or self.decided:
                raise
            sys.exit(ERROR)
        except Exception:
            traceback.print_exc()
            self.stderr.write("gate: crashed; this is an error (exit 3), not a decision")
            sys.exit(ERROR)

    def handle(
        self, *args, set_name: str, system: str, run: str | None, with_judge: bool, **options
    ) -> None:
        self._gate(set_name=set_name, system=system, run=run, with_judge=with_judge)

    def _gate(self, *, set_name: str, system: str, run: str | None, with_judge: bool) -> None:
        audit_set = AuditSet.objects.filter(name=set_name).first()
        if audit_set is None and set_name.isdigit():
            audit_set = AuditSet.objects.filter(pk=int(set_name)).first()
        if audit_set is None:
            self.stderr.write(f"gate: no set named {set_name!r}")
            sys.exit(ERROR)
        key = selectors.decision_key(audit_set=audit_set, system=system, run=run)
        if key is None:
            named = f"run {run!r} of system {system!r}" if run is not None else f"system {system!r}"
            self.stderr.write(f"gate: no {named} in set {audit_set.name!r}")
            sys.exit(ERROR)
        # The command line sees everything, as its exports do: no viewer, nobody blind.
        decision = selectors.decision_report(
            audit_set=audit_set, system=key, viewer=None, with_judge=with_judge
        )
        self.stdout.write(describe(decision))
        self.decided = True
        sys.exit(exit_code(decision))
