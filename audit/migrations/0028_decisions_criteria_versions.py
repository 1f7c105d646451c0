"""Criteria versions: every change of a set's criteria is numbered (1, 2, … per set) and may
carry the reason it was made; changes already recorded are numbered in the order made."""

from django.db import migrations, models


def number_changes(apps, schema_editor):
    CriteriaChange = apps.get_model("audit", "CriteriaChange")
    counters: dict[int, int] = {}
    for change in CriteriaChange.objects.order_by("audit_set_id", "at", "pk").iterator():
        counters[change.audit_set_id] = counters.get(change.audit_set_id, 0) + 1
        change.version = counters[change.audit_set_id]
        change.save(update_fields=["version"])


class Migration(migrations.Migration):
    dependencies = [("audit", "0027_planner_statistics_columns")]

    operations = [
        migrations.AddField(
            model_name="criteriachange",
            name="version",
            field=models.PositiveIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="criteriachange",
            name="reason",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.RunPython(number_changes, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="criteriachange",
            name="version",
            field=models.PositiveIntegerField(),
        ),
        migrations.AddConstraint(
            model_name="criteriachange",
            constraint=models.UniqueConstraint(
                fields=("audit_set", "version"), name="one_criteria_change_per_version"
            ),
        ),
    ]
