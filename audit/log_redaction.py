"""Masks the secrets that travel in addresses (invitation links, password-reset links)
wherever a log line is written: gunicorn's access and error logs and Django's own logs."""

from __future__ import annotations

import logging
import re

from gunicorn.glogging import Logger as GunicornLogger

MASK = "[redacted]"

# An invitation link's token: /invitations/<token>/. A workspace's numbered invitation
# pages (/workspaces/<slug>/invitations/<pk>/revoke/) carry no secret and stay readable.
_INVITATION = re.compile(r"(/invitations/)(?!\d+/revoke)[^/\s\"'?#]+")
# A reset link: /password/reset/<uidb64>/<token>/, and Django's redirect to
# /password/reset/<uidb64>/set-password/; .../sent/ and .../done/ carry nothing.
_RESET = re.compile(r"(/password/reset/)(?!sent/|done/)([^/\s\"'?#]+)/([^/\s\"'?#]+)")


def _reset(match: re.Match) -> str:
    token = match.group(3)
    return f"{match.group(1)}{MASK}/{token if token == 'set-password' else MASK}"


def redact(text: str) -> str:
    """The text with every invitation and reset token in it masked."""
    if "/invitations/" not in text and "/password/reset/" not in text:
        return text
    return _RESET.sub(_reset, _INVITATION.sub(rf"\g<1>{MASK}", text))


class TokenFilter(logging.Filter):
    """Formats the record's message and masks tokens in it (the request line, the path in
    "Not Found: /invitations/…", a Referer that held a link). Put on a handler, it covers
    every logger whose records reach that handler."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot format is left as it is
            return True
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, ()
        return True


class RedactingGunicornLogger(GunicornLogger):
    """gunicorn's logger with tokens masked in its access log (request line, Referer and
    every other atom) and its error log (which names the address of a failed request).
    `manage.py serve` passes it as --logger-class."""

    def setup(self, cfg) -> None:  # noqa: ANN001 - gunicorn's Config
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            log.addFilter(TokenFilter())
