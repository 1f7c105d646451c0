from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _backfill_release_facts(sender, **kwargs) -> None:
    # Live code after the schema is current: a data migration may not import it
    # (tests/test_migrations.py), and the facts are the services' own derived rows.
    from audit.services.release import release_facts_backfill

    release_facts_backfill()


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Citeaudit"

    def ready(self) -> None:
        from django.tasks.signals import task_finished, task_started

        # What each kind of job runs registers itself with the job queue on import.
        import audit.services.job_runners  # noqa: F401
        from audit.services.locks import task_write_lock_wait_end, task_write_lock_wait_start

        post_migrate.connect(_backfill_release_facts, sender=self)
        # A worker's tasks wait for SQLite's write lock as long as an import may hold it.
        task_started.connect(task_write_lock_wait_start)
        task_finished.connect(task_write_lock_wait_end)
