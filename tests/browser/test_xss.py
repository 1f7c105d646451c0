"""Hostile text in every imported and lead-entered field never runs in the browser."""

import json

import pytest

from audit.models import Answer, AuditSet
from tests.conftest import import_file
from tests.xss_payloads import PAYLOADS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def hostile_set(tmp_path, reviewer_a, reviewer_b):
    audit_set = AuditSet.objects.create(
        name=PAYLOADS[0], description=" ".join(PAYLOADS[:10]), guidelines="\n\n".join(PAYLOADS)
    )
    audit_set.reviewers.add(reviewer_a, reviewer_b)
    for i, payload in enumerate(PAYLOADS[1:12], start=1):
        AuditSet.objects.create(name=f"{i} {payload}"[:200], guidelines=payload)
    lines = []
    for i, payload in enumerate(PAYLOADS):
        lines.append(
            {
                "question_id": f"x{i}",
                "question": payload,
                "answer_id": f"{i}-{payload}"[:150],
                "system": payload[:150],
                "answer": f"Claim {i} says {payload} [1]. Second {payload} claim [2].",
                "claims": None,
                "passages": [
                    {"title": payload, "url": payload, "text": f"Claim {i} says {payload}."},
                    {"title": payload, "url": f"https://example.org/{i}", "text": payload},
                ],
            }
        )
    path = tmp_path / "hostile.jsonl"
    path.write_text(
        "".join(
            json.dumps({k: v for k, v in line.items() if v is not None}) + "\n" for line in lines
        )
    )
    import_file(audit_set, path)
    return audit_set


def _pages(audit_set: AuditSet) -> list[str]:
    pages = ["/sets/", f"/sets/{audit_set.pk}/", f"/sets/{audit_set.pk}/labels/", "/import/"]
    pages += [a.get_absolute_url() for a in Answer.objects.filter(audit_set=audit_set)]
    return pages


def test_no_payload_runs_on_any_page(new_page, lead, live_server, hostile_set):
    page = new_page(lead)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    visited = 0
    for url in _pages(hostile_set):
        page.goto(f"{live_server.url}{url}")
        page.wait_for_load_state("load")
        visited += 1

        assert page.evaluate("window.__xss === undefined && parent.__xss === undefined"), url
        javascript_links = page.eval_on_selector_all(
            "a[href], area[href], [*|href]",
            "els => els.map(e => e.getAttribute('href') || e.getAttribute('xlink:href'))"
            ".filter(h => /^\\s*(javascript|data|vbscript):/i.test(h || ''))",
        )
        assert javascript_links == [], url

    # The payloads were really on the pages, shown as text.
    answer = Answer.objects.get(audit_set=hostile_set, external_id__startswith="2-")
    page.goto(f"{live_server.url}{answer.get_absolute_url()}")
    assert page.inner_text("h1.q") == PAYLOADS[2]
    page.goto(f"{live_server.url}/sets/")
    assert PAYLOADS[0] in page.inner_text("#results")
    assert visited == 4 + len(PAYLOADS)
    assert dialogs == []
