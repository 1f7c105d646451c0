"""Browser tests: Playwright driving Debian's chromium against pytest-django's live server."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from tests.factories import default_workspace

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls are
# still plain synchronous code, so Django's async-safety guard does not apply to them.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(autouse=True)
def role_groups(request):
    # A transactional test flushes every table on teardown, the default workspace a data
    # migration made included; the next browser test needs it back before it creates users.
    if "transactional_db" in request.fixturenames or "live_server" in request.fixturenames:
        request.getfixturevalue("transactional_db")
        default_workspace()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (bash .ci/test does)")
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-background-networking", "--disable-gpu"],
        )
        yield browser
        browser.close()


@pytest.fixture
def new_page(browser, live_server):
    """Open a page logged in as `user` in its own browser context (its own cookies)."""
    contexts = []

    def open_as(user, password: str = "pw-for-tests"):
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.goto(f"{live_server.url}/login/")
        page.fill("input[name=username]", user.username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_load_state("networkidle")
        return page

    yield open_as
    for context in contexts:
        context.close()


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def watch_errors(page) -> list[str]:
    """Console errors and uncaught exceptions of the page, collected as they happen."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


def shown(page, url: str) -> None:
    """Wait until `url` is the page in the window with its scripts run: loaded, or shown
    in place of the page before it (the next claim, held ahead)."""
    page.wait_for_url(url)
    page.wait_for_selector("html[data-scripts=ready]", state="attached")


def saved(page) -> None:
    """Wait until the review page says its draft is saved."""
    page.wait_for_selector("#save-status[data-state=saved]")


def watch_bodies(page) -> list[str]:
    """Every HTML document and htmx fragment the page receives, for blindness checks."""
    bodies: list[str] = []

    def keep(response) -> None:
        if "text/html" in (response.headers.get("content-type") or ""):
            # A redirect has no body to keep.
            with contextlib.suppress(PlaywrightError):
                bodies.append(response.text())

    page.on("response", keep)
    return bodies
