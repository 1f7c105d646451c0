"""Template filters for untrusted text: only http(s) URLs ever become links."""

from __future__ import annotations

from urllib.parse import urlsplit

from django import template

register = template.Library()


@register.filter
def http_url(value: str) -> str:
    """The URL when it is a plain http(s) address, else "" (so javascript: and data: URLs
    are shown as text, never as links)."""
    text = (value or "").strip()
    if any(ord(c) < 33 or c in "\\\"'<>`" for c in text):
        return ""
    try:
        parts = urlsplit(text)
    except ValueError:
        return ""
    if parts.scheme.lower() not in {"http", "https"} or not parts.netloc:
        return ""
    return text
