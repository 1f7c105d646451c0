"""WSGI entry point, served by gunicorn in production."""

import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
application = get_wsgi_application()

# Load every view module now rather than on the first request, then move all these
# long-lived objects out of the cyclic collector's reach. A full collection over them added
# 100-150 ms to about one request in ten (the p95 of bench/bench_scale.py); gc.freeze is
# meant for processes that load once and then serve.
get_resolver().url_patterns  # noqa: B018
gc.freeze()
