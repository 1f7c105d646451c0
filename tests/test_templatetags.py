import pytest

from audit.templatetags.audit_tags import http_url


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://example.org/a?b=1", "https://example.org/a?b=1"),
        ("http://example.org", "http://example.org"),
        ("javascript:alert(1)", ""),
        ("JaVaScRiPt:alert(1)", ""),
        (" javascript:alert(1)", ""),
        ("java\tscript:alert(1)", ""),
        ("data:text/html,<script>alert(1)</script>", ""),
        ('https://x.org/"onmouseover=alert(1)', ""),
        ("//evil.example.org", ""),
        ("example.org/page", ""),
        ("", ""),
    ],
)
def test_only_plain_http_urls_become_links(value, expected):
    assert http_url(value) == expected
