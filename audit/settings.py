"""Settings for Citeaudit: one module, driven by environment variables.

DATABASE_URL picks the database (SQLite file by default); DJANGO_PRODUCTION=1 turns on the
hardened cookie, HSTS and SSL settings that `check --deploy` asks for.
"""

from __future__ import annotations

import ipaddress
import os
import warnings
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent
# django-ninja's Swagger UI, served from our static files (no CDN) by the API's docs page
# (audit.api.base.LocalSwagger). Found without importing ninja: listed as an app, it
# was imported with pydantic when any process started (0.14 s), though only the API uses it.
NINJA_DIR = Path(find_spec("ninja").submodule_search_locations[0])


def _env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


PRODUCTION = _env_flag("DJANGO_PRODUCTION")
DEBUG = _env_flag("DJANGO_DEBUG", default=not PRODUCTION)

# Public, so only good for a development machine; `manage.py serve` refuses it (and DEBUG)
# unless it is given --dev.
DEVELOPMENT_SECRET_KEY = "dev-only-insecure-key-citeaudit-not-for-production-use-0123456789"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if PRODUCTION:
        raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_PRODUCTION=1")
    SECRET_KEY = DEVELOPMENT_SECRET_KEY

ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",")
    if h.strip()
]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "django_tables2",
    "django_filters",
    "simple_history",
    "axes",
    "django_tasks_db",
    "audit",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "audit.middleware.RefusalMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into a clear 429 page.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Five wrong passwords for one username from one address lock that pair for 15 minutes.
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = 0.25
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"

ROOT_URLCONF = "audit.urls"
WSGI_APPLICATION = "audit.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates", NINJA_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "audit.context_processors.roles",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # PostgreSQL's JIT compiler spends 100-300 ms on the review page's and the claims
    # table's queries, more than running them takes (bench/bench_scale.py).
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c jit=off"
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several gunicorn workers write one file. A deferred transaction that reads, then
    # writes, fails at once with "database is locked" when another writer got there first
    # (waiting could deadlock, so SQLite does not wait); an IMMEDIATE one takes the write
    # lock at BEGIN and waits up to `timeout` seconds for it, so writers queue instead.
    # WAL lets pages be read while a save is being written; synchronous=NORMAL is still
    # durable across a crash of the server process in WAL mode, only not an OS crash.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": int(os.environ.get("SQLITE_BUSY_TIMEOUT", "20")),
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "audit:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static", NINJA_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# Without DEBUG (as the demo runs), whitenoise would serve only collected files; outside
# production it reads the app's static folders directly, so runserver needs no collectstatic.
WHITENOISE_USE_FINDERS = not PRODUCTION
if not PRODUCTION:
    # ...so the collected folder is not expected either; whitenoise would warn at every start
    # (the demo's first lines) that it is missing.
    warnings.filterwarnings("ignore", message="No directory at: ")

# A native JSON Lines answer file is streamed, a line at a time, so it may be large; every
# other file (a JSON document, the other JSON Lines formats, verdicts) is read whole into
# memory, which bounds it far lower. Anything over gets a message naming both sizes.
IMPORT_MAX_BYTES = int(os.environ.get("CITEAUDIT_IMPORT_MAX_BYTES", str(500 * 1024 * 1024)))
IMPORT_MAX_WHOLE_BYTES = int(
    os.environ.get("CITEAUDIT_IMPORT_MAX_WHOLE_BYTES", str(50 * 1024 * 1024))
)
# Machine verdicts are one row each and still imported within the request.
WEB_IMPORT_MAX_VERDICTS = int(os.environ.get("CITEAUDIT_WEB_IMPORT_MAX_VERDICTS", "20000"))
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Bigger uploads go to a temporary file as they arrive, never into memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# Long actions (imports) run as jobs in a separate worker process (`manage.py db_worker`),
# queued in the database, so any number of web and worker processes can share them.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
# Processes that locate and match claims while a job's import writes: one per core (none
# on a single core, where they would only add pickling).
IMPORT_WORKERS = int(
    os.environ.get(
        "CITEAUDIT_IMPORT_WORKERS",
        str(min(4, os.cpu_count() or 1) if (os.cpu_count() or 1) > 1 else 0),
    )
)
# Where an uploaded file waits for its job. Every worker must see it: on several machines,
# a shared volume.
JOBS_DIR = Path(os.environ.get("CITEAUDIT_JOBS_DIR", str(BASE_DIR / "var" / "jobs")))
# A running job whose worker said nothing (no heartbeat, no progress) for longer than
# this lost its worker (killed, or its machine gone): it is failed, naming the worker, and
# may be run again.
JOB_STALE_SECONDS = int(os.environ.get("CITEAUDIT_JOB_STALE_SECONDS", "120"))
# A set with more answers than this is exported, and compared again after a change of its
# adjudication settings, by a job rather than within the request.
WEB_DIRECT_MAX_ANSWERS = int(os.environ.get("CITEAUDIT_WEB_DIRECT_MAX_ANSWERS", "2000"))
# A verdict file larger than this is imported by a job, with no bound on its verdicts.
WEB_DIRECT_MAX_VERDICT_BYTES = int(
    os.environ.get("CITEAUDIT_WEB_DIRECT_MAX_VERDICT_BYTES", str(1024 * 1024))
)
# A suggestions push of more claims than this (an API body), or a suggestions file larger
# than WEB_DIRECT_MAX_VERDICT_BYTES, is stored by a job rather than within the request.
WEB_DIRECT_MAX_SUGGESTIONS = int(os.environ.get("CITEAUDIT_WEB_DIRECT_MAX_SUGGESTIONS", "2000"))
# How long a finished export's download link works; its file is removed after that.
EXPORT_LINK_HOURS = int(os.environ.get("CITEAUDIT_EXPORT_LINK_HOURS", "24"))
# How long a push's Idempotency-Key holds: a retry within it gets the first request's job;
# after it the key is free again (a nightly script may reuse a fixed key each night).
IDEMPOTENCY_KEY_HOURS = int(os.environ.get("CITEAUDIT_IDEMPOTENCY_KEY_HOURS", "24"))

# Webhooks: each delivery is tried up to this many times, waiting RETRY_SECONDS after the
# first failure and twice as long after each next one (30 s, 1, 2, 4 min by default).
WEBHOOK_MAX_ATTEMPTS = int(os.environ.get("CITEAUDIT_WEBHOOK_MAX_ATTEMPTS", "5"))
WEBHOOK_RETRY_SECONDS = int(os.environ.get("CITEAUDIT_WEBHOOK_RETRY_SECONDS", "30"))
WEBHOOK_TIMEOUT_SECONDS = int(os.environ.get("CITEAUDIT_WEBHOOK_TIMEOUT_SECONDS", "10"))

# API request budgets per token and window, counted in the cache below (shared by every
# process): over a budget a request gets 429 with Retry-After. Reads and writes apart, so a
# client pulling data does not starve its own pushes.
API_RATE_WINDOW_SECONDS = int(os.environ.get("CITEAUDIT_API_RATE_WINDOW_SECONDS", "60"))
API_RATE_LIMIT_READS = int(os.environ.get("CITEAUDIT_API_RATE_LIMIT_READS", "6000"))
API_RATE_LIMIT_WRITES = int(os.environ.get("CITEAUDIT_API_RATE_LIMIT_WRITES", "1200"))

# A job's progress and cancel requests pass between processes through the cache, since an
# import's own writes stay invisible until it commits (and SQLite takes one writer at a
# time). Redis when REDIS_URL is set (several machines); otherwise files on this machine.
if os.environ.get("REDIS_URL"):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": os.environ.get("CITEAUDIT_CACHE_DIR", str(BASE_DIR / "var" / "cache")),
        }
    }

# Scripts come only from this origin: no inline script, no eval, nothing from a CDN.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "object-src": [CSP.NONE],
}

SESSION_COOKIE_AGE = 60 * 60 * 12
SESSION_COOKIE_HTTPONLY = True
# The CSRF secret lives in the session, not in a cookie of its own: a token is valid only in
# the session it was issued to, so a cookie + token pair taken from one user (or planted by
# a sibling subdomain) is refused in another's. Pages carry the token in the body's
# hx-headers and in their forms; the review page fetches a fresh one after a new login.
CSRF_USE_SESSIONS = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = _env_flag("DJANGO_SSL_REDIRECT", default=True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = 60 * 60 * 24 * 365
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

DJANGO_TABLES2_TEMPLATE = "django_tables2/table.html"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

# An automatic judge's endpoint that answers 429 is asked again once after its Retry-After,
# if that is at most this many seconds; a longer wait is stored as the claim's error.
JUDGE_MAX_RETRY_AFTER = float(os.environ.get("CITEAUDIT_JUDGE_MAX_RETRY_AFTER", "30"))

# ------------------------------------------------------------------------------ accounts
# Invitation links and password-reset mails go through the default mailer. The console
# backend (the default) prints them where the server logs; EMAIL_BACKEND=smtp sends them
# through EMAIL_HOST (EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS).
# A production server sends mail unless told otherwise; elsewhere it goes to the console.
if os.environ.get("EMAIL_BACKEND", "smtp" if PRODUCTION else "console") == "smtp":
    MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {
                "host": os.environ.get("EMAIL_HOST", "localhost"),
                "port": int(os.environ.get("EMAIL_PORT", "25")),
                "username": os.environ.get("EMAIL_HOST_USER", ""),
                "password": os.environ.get("EMAIL_HOST_PASSWORD", ""),
                "use_tls": _env_flag("EMAIL_USE_TLS", default=False),
            },
        }
    }
else:
    MAILERS = {"default": {"BACKEND": "django.core.mail.backends.console.EmailBackend"}}
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "citeaudit@localhost")
# How long an invitation link may be used (seconds); a password-reset link lives as long.
INVITATION_MAX_AGE = int(os.environ.get("INVITATION_MAX_AGE", str(7 * 24 * 3600)))
PASSWORD_RESET_TIMEOUT = INVITATION_MAX_AGE

# ------------------------------------------------------------------ single sign-on (OIDC)
# Off unless OIDC_SERVER_URL and OIDC_CLIENT_ID are set: then django-allauth's OpenID
# Connect provider adds a "Sign in with …" button to the login page. Someone signing in
# this way for the first time gets an account with no workspace: an owner's invitation,
# opened while signed in, gives them one. Passwords and invitations keep working alongside.
OIDC_ENABLED = bool(os.environ.get("OIDC_SERVER_URL") and os.environ.get("OIDC_CLIENT_ID"))
OIDC_NAME = os.environ.get("OIDC_NAME", "single sign-on")
if OIDC_ENABLED:
    INSTALLED_APPS += [
        "allauth",
        "allauth.account",
        "allauth.socialaccount",
        "allauth.socialaccount.providers.openid_connect",
    ]
    MIDDLEWARE.insert(
        MIDDLEWARE.index("django.contrib.messages.middleware.MessageMiddleware") + 1,
        "allauth.account.middleware.AccountMiddleware",
    )
    AUTHENTICATION_BACKENDS += ["allauth.account.auth_backends.AuthenticationBackend"]
    # Only the provider's flow: the app's own login page stays the one for passwords.
    SOCIALACCOUNT_ONLY = True
    ACCOUNT_EMAIL_VERIFICATION = "none"
    SOCIALACCOUNT_LOGIN_ON_GET = False
    SOCIALACCOUNT_PROVIDERS = {
        "openid_connect": {
            "APPS": [
                {
                    "provider_id": "sso",
                    "name": OIDC_NAME,
                    "client_id": os.environ["OIDC_CLIENT_ID"],
                    "secret": os.environ.get("OIDC_CLIENT_SECRET", ""),
                    "settings": {"server_url": os.environ["OIDC_SERVER_URL"]},
                }
            ]
        }
    }

# ------------------------------------------------------- request refusals, proxies, logs
# A NUL character in a request's address, query or body is refused first, with a 400 that
# says where (audit.middleware.NulRefusalMiddleware); a failed database is a 503 with
# Retry-After (audit.views.errors.server_error).
MIDDLEWARE.insert(
    MIDDLEWARE.index("whitenoise.middleware.WhiteNoiseMiddleware") + 1,
    "audit.middleware.NulRefusalMiddleware",
)

# Behind a reverse proxy every request comes from the proxy's address: login lock-out and
# the password-reset limit would count the whole site as one client. CITEAUDIT_TRUSTED_PROXIES
# is either the number of proxies in front of the app (each appends to X-Forwarded-For), or
# their addresses or networks separated by commas; unset, X-Forwarded-For is ignored
# (audit.client_address). See docs/operations-proxies.md.
_trusted_proxies = os.environ.get("CITEAUDIT_TRUSTED_PROXIES", "").strip()
CITEAUDIT_TRUSTED_PROXIES: int | list[str] = (
    int(_trusted_proxies)
    if _trusted_proxies.isdigit()
    else [entry.strip() for entry in _trusted_proxies.split(",") if entry.strip()]
)
if isinstance(CITEAUDIT_TRUSTED_PROXIES, list):
    for _entry in CITEAUDIT_TRUSTED_PROXIES:
        try:
            ipaddress.ip_network(_entry, strict=False)
        except ValueError as _error:
            raise ImproperlyConfigured(
                f"CITEAUDIT_TRUSTED_PROXIES: {_error}. Give the number of proxies in front of "
                "the app, or their addresses or networks separated by commas."
            ) from _error
AXES_CLIENT_IP_CALLABLE = "audit.client_address.client_address"

# Invitation and password-reset tokens travel in addresses: every log handler masks them
# (audit.log_redaction), runserver's request log included; gunicorn gets the same filter
# through `manage.py serve`.
LOGGING["filters"] = {"redact_tokens": {"()": "audit.log_redaction.TokenFilter"}}
LOGGING["handlers"]["console"]["filters"] = ["redact_tokens"]
LOGGING["formatters"] = {
    "django.server": {
        "()": "django.utils.log.ServerFormatter",
        "format": "[{server_time}] {message}",
        "style": "{",
    }
}
LOGGING["handlers"]["django.server"] = {
    "class": "logging.StreamHandler",
    "formatter": "django.server",
    "filters": ["redact_tokens"],
}
LOGGING["loggers"] = {
    "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False},
    # Django's own console handler (DEBUG only) would write the same lines unmasked: its
    # records go to the root's masked handler instead.
    "django": {"handlers": [], "level": "INFO"},
}

# ------------------------------------------------------------------------------ egress
# Outgoing requests (judges, webhooks) go only to public addresses; these host names and
# ranges (comma-separated, e.g. "localhost,127.0.0.1,::1" for a model server on this
# machine, or "10.0.8.0/24") are let through as well.
EGRESS_ALLOW = [
    entry.strip()
    for entry in os.environ.get("CITEAUDIT_EGRESS_ALLOW", "").split(",")
    if entry.strip()
]
# An entry that is neither a host name nor a range stops the start, not a later request.
import_module("audit.egress").Allow.parse(EGRESS_ALLOW)
# A judge's reply is read up to this size; a larger one is refused, not read whole.
JUDGE_MAX_REPLY_BYTES = int(os.environ.get("CITEAUDIT_JUDGE_MAX_REPLY_BYTES", str(2 * 1024 * 1024)))
# A judge may send only a key the operator put in an environment variable named
# CITEAUDIT_JUDGE_KEY_<NAME>, and only to the hosts named for it here: comma-separated
# "CITEAUDIT_JUDGE_KEY_<NAME>=host" entries (one per host), e.g.
# "CITEAUDIT_JUDGE_KEY_OPENAI=api.openai.com".
JUDGE_KEY_HOSTS = [
    entry.strip()
    for entry in os.environ.get("CITEAUDIT_JUDGE_KEY_HOSTS", "").split(",")
    if entry.strip()
]

# ------------------------------------------------------------------ judge acceptance
# The fewest gold claims a judge's acceptance threshold may ask for: a lead writes at least
# this many before the first run, and no judge is accepted on fewer.
JUDGE_MIN_GOLD_FLOOR = int(os.environ.get("CITEAUDIT_JUDGE_MIN_GOLD_FLOOR", "30"))

# ---------------------------------------------------------------------------- jobs
# A running job writes a heartbeat to the cache this often, from a thread of its own, so a
# job busy on one long step still shows its worker is alive. Keep it well below
# JOB_STALE_SECONDS: a running job with no heartbeat for that long is failed as lost (its
# worker killed or its machine gone) when a job page, the API's job list or a worker next
# looks.
JOB_HEARTBEAT_SECONDS = float(os.environ.get("CITEAUDIT_JOB_HEARTBEAT_SECONDS", "5"))

# ---------------------------------------------------------------- imports pushed at once
# How long a worker's job (or `manage.py import_answers`) waits for SQLite's one write lock
# while another import holds it, in seconds; a web request waits SQLITE_BUSY_TIMEOUT.
JOB_SQLITE_BUSY_TIMEOUT = int(os.environ.get("SQLITE_JOB_BUSY_TIMEOUT", "3600"))
