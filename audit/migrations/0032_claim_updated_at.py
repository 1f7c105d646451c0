# Existing claims take the time of the migration as their last change.

import django.db.models.functions.datetime
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0031_answer_runs_idempotency'),
    ]

    operations = [
        migrations.AddField(
            model_name='claim',
            name='updated_at',
            field=models.DateTimeField(db_default=django.db.models.functions.datetime.Now(), default=django.utils.timezone.now),
        ),
    ]
