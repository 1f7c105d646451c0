"""python manage.py demo: demo accounts (an owner who leads, two reviewers) in the default
workspace, plus two demo sets (ExpertQA slice, hand-made set)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import transaction

from audit import roles, services
from audit.formats import parse_file
from audit.models import AuditSet, Membership, Workspace

DEMO_USERS = (
    # username, password, role
    ("alice", "alice-reviews", roles.REVIEWER),
    ("bob", "bob-reviews", roles.REVIEWER),
    # The owner manages the members (Members in the menu) and leads the sets.
    ("lena", "lena-leads", roles.OWNER),
)

DEMO_SETS = (
    (
        "ExpertQA calibration",
        "fixtures/expertqa/expertqa_slice15.jsonl",
        "15 real questions from ExpertQA (MIT), with several systems' answers.",
    ),
    ("Hand-made HR examples", "fixtures/demo/handmade.jsonl", "Every citation-marker form."),
)

GUIDELINES = """\
**Judge the claim only against the passages it cites.**

- *Supported*: every part of the claim is stated in the cited passages.
- *Partially supported*: some part is stated, some is missing; list what is missing.
- *Contradicted*: a cited passage says otherwise (a different figure counts).
- *Wrong citation*: not supported by its citations, but another retrieved passage supports it.
- Select the **minimal** evidence sentences: the fewest that together support the claim.
"""


class Command(BaseCommand):
    help = "Create demo accounts and import the demo sets (idempotent)."

    def handle(self, **options) -> None:
        with transaction.atomic():
            workspace, _ = Workspace.objects.get_or_create(
                slug=Workspace.DEFAULT_SLUG, defaults={"name": "Default"}
            )
            reviewers = []
            lead = None
            for username, password, role in DEMO_USERS:
                user, _ = User.objects.get_or_create(username=username)
                user.set_password(password)
                user.is_active = True
                user.save()
                Membership.objects.update_or_create(
                    workspace=workspace, user=user, defaults={"role": role, "is_active": True}
                )
                if role == roles.REVIEWER:
                    reviewers.append(user)
                else:
                    lead = user
            for name, path, description in DEMO_SETS:
                audit_set, _ = AuditSet.objects.get_or_create(
                    workspace=workspace,
                    name=name,
                    defaults={"description": description, "guidelines": GUIDELINES},
                )
                audit_set.reviewers.add(*reviewers)
                data = (Path(settings.BASE_DIR) / path).read_bytes()
                summary = services.answers_import(
                    audit_set=audit_set,
                    parsed=parse_file(data, Path(path).name),
                    filename=Path(path).name,
                    sha256=hashlib.sha256(data).hexdigest(),
                )
                self.stdout.write(
                    f"{name}: {summary.answers} answers imported "
                    f"({summary.skipped} already there), {summary.claims} claims"
                )
                # Open for blind double review so the demo reviewers can start at once;
                # running the command again only tops up missing assignments.
                opened = services.review_open(
                    audit_set=audit_set, reviewers=reviewers, overlap=2, by=lead
                )
                self.stdout.write(f"  open for review: {opened.created} new assignments")
        self.stdout.write("\nDemo accounts (username / password):")
        for username, password, role in DEMO_USERS:
            self.stdout.write(f"  {username:6} / {password:14} {role}")
