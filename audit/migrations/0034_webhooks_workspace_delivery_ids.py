import uuid

import django.db.models.deletion
from django.db import migrations, models


def _number_deliveries(apps, schema_editor):
    # Each existing delivery its own id (a column default would give them all one).
    WebhookDelivery = apps.get_model("audit", "WebhookDelivery")
    for delivery in WebhookDelivery.objects.filter(uuid__isnull=True).only("pk"):
        WebhookDelivery.objects.filter(pk=delivery.pk).update(uuid=uuid.uuid4())


class Migration(migrations.Migration):
    dependencies = [("audit", "0033_judge_answers_question")]

    operations = [
        migrations.AddField(
            model_name="webhook",
            name="workspace",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="webhooks",
                to="audit.workspace",
            ),
        ),
        migrations.AlterField(
            model_name="webhook",
            name="audit_set",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="webhooks",
                to="audit.auditset",
            ),
        ),
        migrations.AddConstraint(
            model_name="webhook",
            constraint=models.CheckConstraint(
                condition=models.Q(audit_set__isnull=False, workspace__isnull=True)
                | models.Q(audit_set__isnull=True, workspace__isnull=False),
                name="webhook_set_or_workspace",
            ),
        ),
        migrations.AddField(
            model_name="webhookdelivery",
            name="uuid",
            field=models.UUIDField(null=True, editable=False),
        ),
        migrations.RunPython(_number_deliveries, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="webhookdelivery",
            name="uuid",
            field=models.UUIDField(default=uuid.uuid4, unique=True, editable=False),
        ),
        migrations.AddField(
            model_name="webhookdelivery",
            name="claimed_until",
            field=models.DateTimeField(null=True, blank=True),
        ),
        migrations.AddField(
            model_name="webhookdelivery",
            name="redelivered_at",
            field=models.DateTimeField(null=True, blank=True),
        ),
        migrations.CreateModel(
            name="WebhookAttempt",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("at", models.DateTimeField()),
                ("response_code", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("error", models.CharField(blank=True, max_length=500)),
                ("duration_ms", models.PositiveIntegerField(default=0)),
                ("redelivery", models.BooleanField(default=False)),
                (
                    "delivery",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="attempt_log",
                        to="audit.webhookdelivery",
                    ),
                ),
            ],
            options={"ordering": ["at", "pk"]},
        ),
    ]
