"""python manage.py serve: migrate, collect static files, then run gunicorn (production).

It refuses to serve with DEBUG on or the public development secret key (the settings'
defaults without DJANGO_PRODUCTION=1) unless given --dev, and then only on loopback: a
debug page lists settings and code, and a known key lets anyone forge a session.
"""

from __future__ import annotations

import os
import shutil
import sys

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Apply migrations, collect static files and serve with gunicorn + whitenoise."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--bind", default=os.environ.get("BIND", "127.0.0.1:8000"))
        # Requests are short and partly wait on the database: 2 × cores + 1 workers, each
        # with a second thread so an htmx autosave never queues behind a slow page. More
        # threads only contend for the GIL: bench/load_test.py's p95 was 143-147 ms with 2
        # threads and 131-224 ms with 4 (README, "Load and fault tests").
        parser.add_argument(
            "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "0")) or None
        )
        parser.add_argument("--threads", type=int, default=2)
        parser.add_argument("--no-migrate", action="store_true")
        parser.add_argument(
            "--dev",
            action="store_true",
            help="allow DEBUG and the development secret key, on a loopback address only",
        )

    def handle(
        self, bind: str, workers: int | None, threads: int, no_migrate: bool, dev: bool, **_
    ) -> None:
        _refuse_unsafe_settings(bind=bind, dev=dev)
        if not no_migrate:
            call_command("migrate", interactive=False, verbosity=1)
        call_command("collectstatic", interactive=False, verbosity=0)
        gunicorn = shutil.which("gunicorn", path=os.path.dirname(sys.executable)) or shutil.which(
            "gunicorn"
        )
        if gunicorn is None:
            raise CommandError("gunicorn is not installed in this environment")
        workers = workers or 2 * (os.cpu_count() or 1) + 1
        args = [
            gunicorn,
            "audit.wsgi:application",
            f"--bind={bind}",
            f"--workers={workers}",
            f"--threads={threads}",
            "--timeout=30",
            "--graceful-timeout=20",
            # No --max-requests: a recycling worker closes its idle keep-alive connections,
            # and a client that reuses one at that moment gets a connection error (an htmx
            # autosave is a POST, which nothing retries). No leak needs it: the export
            # benchmarks show memory flat per request.
            # Longer than a reviewer's pause between actions: gthread's default of 2 s closes
            # idle connections just as the next autosave is sent on them.
            "--keep-alive=75",
            "--access-logfile=-",
            # Invitation and password-reset links carry their token in the address: masked
            # in the access log (request line and Referer) and the error log.
            "--logger-class=audit.log_redaction.RedactingGunicornLogger",
        ]
        self.stdout.write(f"gunicorn on {bind}: {workers} workers × {threads} threads")
        sys.stdout.flush()
        os.execv(gunicorn, args)


LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}


def _refuse_unsafe_settings(*, bind: str, dev: bool) -> None:
    unsafe = []
    if settings.DEBUG:
        unsafe.append("DEBUG is on")
    if settings.SECRET_KEY == settings.DEVELOPMENT_SECRET_KEY:
        unsafe.append("the secret key is the public development key")
    if not unsafe:
        return
    if not dev:
        raise CommandError(
            f"Refusing to serve: {' and '.join(unsafe)}. For production set "
            "DJANGO_PRODUCTION=1 and DJANGO_SECRET_KEY (and DJANGO_DEBUG unset); to try it "
            "out on this machine, pass --dev."
        )
    host = bind.rpartition(":")[0] if not bind.startswith("unix:") else "localhost"
    if host not in LOOPBACK_HOSTS:
        raise CommandError(
            f"Refusing to serve on {bind} with --dev ({' and '.join(unsafe)}): the "
            "development settings are only for a loopback address such as 127.0.0.1:8000."
        )
