"""Indexes for the API's claims list walked in key order: a label's claims by their
checks, a status's claims by key."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0025_judge_run_controls"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="claimcheck", name="claimcheck_label_idx"),
        migrations.AddIndex(
            model_name="claimcheck",
            index=models.Index(fields=["label", "claim"], name="claimcheck_label_claim_idx"),
        ),
        migrations.AddIndex(
            model_name="claim",
            index=models.Index(fields=["review_status", "id"], name="claim_status_id_idx"),
        ),
    ]
