"""Workspaces: every existing set moves into one "Default" workspace, and the two global
auth groups become roles there (lead group: lead, reviewer group: reviewer). The groups
are then removed: roles live on memberships only."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

ROLE_CHOICES = [("owner", "Owner"), ("lead", "Lead"), ("reviewer", "Reviewer")]


def into_default_workspace(apps, schema_editor):
    Workspace = apps.get_model("audit", "Workspace")
    Membership = apps.get_model("audit", "Membership")
    AuditSet = apps.get_model("audit", "AuditSet")
    Job = apps.get_model("audit", "Job")
    Group = apps.get_model("auth", "Group")
    default, _ = Workspace.objects.get_or_create(slug="default", defaults={"name": "Default"})
    AuditSet.objects.filter(workspace__isnull=True).update(workspace=default)
    Job.objects.filter(workspace__isnull=True).update(workspace=default)
    # A user in both groups was a lead who also reviews: lead wins (a lead may still be
    # chosen as a reviewer of a set).
    for group_name, role in (("reviewer", "reviewer"), ("lead", "lead")):
        group = Group.objects.filter(name=group_name).first()
        if group is None:
            continue
        for user in group.user_set.all():
            Membership.objects.update_or_create(
                workspace=default, user=user, defaults={"role": role}
            )
        group.delete()
    if schema_editor.connection.vendor == "postgresql":
        # Fire the deferred foreign-key checks of these updates now: PostgreSQL refuses to
        # alter a table with pending trigger events, and the next operation alters one.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        schema_editor.execute("SET CONSTRAINTS ALL DEFERRED")


def back_to_groups(apps, schema_editor):
    Membership = apps.get_model("audit", "Membership")
    Group = apps.get_model("auth", "Group")
    groups = {name: Group.objects.get_or_create(name=name)[0] for name in ("reviewer", "lead")}
    for membership in Membership.objects.filter(workspace__slug="default", is_active=True):
        name = "reviewer" if membership.role == "reviewer" else "lead"
        groups[name].user_set.add(membership.user_id)


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0022_calibration"),
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Workspace",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100, unique=True)),
                ("slug", models.SlugField(max_length=100, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={"ordering": ["name"]},
        ),
        migrations.CreateModel(
            name="Membership",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "role",
                    models.CharField(choices=ROLE_CHOICES, default="reviewer", max_length=10),
                ),
                ("is_active", models.BooleanField(default=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memberships",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "workspace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memberships",
                        to="audit.workspace",
                    ),
                ),
            ],
            options={
                "ordering": ["workspace", "user__username"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("workspace", "user"), name="one_membership_per_user"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="Invitation",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("email", models.EmailField(max_length=254)),
                (
                    "role",
                    models.CharField(choices=ROLE_CHOICES, default="reviewer", max_length=10),
                ),
                ("token_hash", models.CharField(max_length=64, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("expires_at", models.DateTimeField()),
                ("accepted_at", models.DateTimeField(blank=True, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "accepted_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "invited_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "workspace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="invitations",
                        to="audit.workspace",
                    ),
                ),
            ],
            options={"ordering": ["-created_at"]},
        ),
        migrations.AddField(
            model_name="auditset",
            name="workspace",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="sets",
                to="audit.workspace",
            ),
        ),
        migrations.AddField(
            model_name="job",
            name="workspace",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="jobs",
                to="audit.workspace",
            ),
        ),
        migrations.RunPython(into_default_workspace, back_to_groups),
        migrations.AlterField(
            model_name="auditset",
            name="workspace",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="sets",
                to="audit.workspace",
            ),
        ),
        migrations.AlterField(
            model_name="auditset",
            name="name",
            field=models.CharField(max_length=200),
        ),
        migrations.AddConstraint(
            model_name="auditset",
            constraint=models.UniqueConstraint(
                fields=("workspace", "name"), name="set_name_per_workspace"
            ),
        ),
    ]
