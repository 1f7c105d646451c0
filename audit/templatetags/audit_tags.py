"""Template filters: untrusted URLs (only http(s) ever become links), statistics (an
undefined value shows as a dash, never as 0 or NaN) and the matcher's score."""

from __future__ import annotations

from urllib.parse import urlsplit

from django import template

from audit import judgments
from audit.views import display

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


@register.filter
def stat(value: float | None, digits: int = 3) -> str:
    """κ, α or a Jaccard index to `digits` decimals; "—" when undefined."""
    if value is None:
        return "—"
    return f"{value:.{int(digits)}f}"


@register.filter
def percent(value: float | None) -> str:
    """A share (0–1) as a percentage with one decimal; "—" when undefined."""
    if value is None:
        return "—"
    return f"{100 * value:.1f}%"


@register.filter
def judgment_label(code: str | None) -> str:
    """A judgment code's human label; "not judged" for none."""
    if not code:
        return "not judged"
    return judgments.JUDGMENT_LABELS.get(code, code)


@register.simple_tag
def match_score(check, claim) -> display.MatchScore | None:
    """The matcher's word match for a claim, as every page labels it (display.match_score)."""
    return display.match_score(check, claim)


@register.filter
def hint_label(label: str) -> str:
    """A machine label as pages name it: never "verified" (display.HINT_LABELS)."""
    return display.hint_label(label)


@register.filter
def duration(value) -> str:
    """A timedelta as "1 min 05 s" or "12.3 s": how long a job has run."""
    if value is None:
        return "—"
    seconds = value.total_seconds()
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s"
