"""`bash .ci/demo` on a fresh database: the address it prints answers, on the PORT asked
for, and people using the demo get the app's own error pages with working static files."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import urllib.error
import urllib.request

import pytest

from tests.conftest import ROOT


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture
def demo(tmp_path):
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG", "DATABASE_URL")},
        "PORT": str(port),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
    }
    process = subprocess.Popen(
        ["bash", ".ci/demo"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        yield port, process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        process.stdout.close()


def _address_line(process) -> str:
    for line in process.stdout:
        if line.startswith("Citeaudit runs at"):
            return line.strip()
    raise AssertionError(f"the demo exited ({process.wait()}) without printing its address")


def test_demo_prints_its_address_on_port_once_the_server_answers(demo):
    port, process = demo

    line = _address_line(process)
    status, _ = _get(f"http://127.0.0.1:{port}/login/")

    assert line == f"Citeaudit runs at http://127.0.0.1:{port}/  (Ctrl-C stops it)"
    assert status == 200


def test_demo_shows_styled_error_pages_and_serves_static_files(demo):
    port, process = demo
    _address_line(process)

    missing_status, missing_body = _get(f"http://127.0.0.1:{port}/no-such-page/")
    css_status, css = _get(f"http://127.0.0.1:{port}/static/audit/citeaudit.css")

    assert missing_status == 404
    assert '<h1 id="refusal-title">Page not found</h1>' in missing_body
    assert "URLconf" not in missing_body
    assert css_status == 200
    assert css.startswith("/* Citeaudit: one stylesheet")
