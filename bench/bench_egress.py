"""The outgoing-request guard under a hostile receiver on this machine: N judge requests at
once each answered with a huge reply (declared length, then chunked), and a webhook and a
judge whose receiver trickles a byte every 50 ms. Prints wall time, peak RSS of this process
(the receiver runs in a child process) and how many bytes the receiver got out.

    .venv/bin/python bench/bench_egress.py [--requests 32] [--megabytes 300]
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def serve(mode: str, megabytes: int, port_file: str, sent_file: str) -> None:
    """The receiver (a child process): answers every request per `mode`, counting body bytes
    it got out into `sent_file` when stopped."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=256)
    Path(port_file).write_text(str(listener.getsockname()[1]))
    sent = [0]
    lock = threading.Lock()

    def handle(conn: socket.socket) -> None:
        with conn:
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                piece = b"x" * (1 << 20)
                if mode == "trickle":
                    # Headers that never end: a webhook reads no body, a judge waits for it.
                    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                    for _ in range(100000):
                        conn.sendall(b"a")
                        time.sleep(0.05)
                    return
                chunked = mode == "chunked"
                head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                head += (
                    b"Transfer-Encoding: chunked\r\n\r\n"
                    if chunked
                    else b"Content-Length: %d\r\n\r\n" % (megabytes << 20)
                )
                conn.sendall(head)
                for _ in range(megabytes):
                    conn.sendall(b"100000\r\n" + piece + b"\r\n" if chunked else piece)
                    with lock:
                        sent[0] += len(piece)
                        Path(sent_file).write_text(str(sent[0]))
            except OSError:
                pass

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def start_receiver(mode: str, megabytes: int, tmp: Path) -> tuple[subprocess.Popen, int, Path]:
    port_file, sent_file = tmp / f"{mode}.port", tmp / f"{mode}.sent"
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", mode, str(megabytes), str(port_file), str(sent_file)]
    )
    for _ in range(200):
        if port_file.exists() and port_file.read_text():
            return child, int(port_file.read_text()), sent_file
        time.sleep(0.05)
    child.kill()
    raise SystemExit("the receiver did not start")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--megabytes", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp / 'bench.sqlite3'}"
        os.environ["CITEAUDIT_CACHE_DIR"] = str(tmp / "cache")
        os.environ["CITEAUDIT_EGRESS_ALLOW"] = "127.0.0.1"
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        import openai

        from audit.judge_prompt import DEFAULT_TEMPLATE, ClaimPrompt
        from audit.models import Judge, JudgeVersion, Webhook
        from audit.services import judges, webhooks

        version = JudgeVersion(template=DEFAULT_TEMPLATE, model="m", temperature=0.0)
        prompt = ClaimPrompt(
            guidelines="",
            question="q",
            answer="a claim.",
            claim="a claim.",
            claim_start=0,
            claim_end=8,
            passages=(),
        )

        def judge_client(port: int, timeout: float) -> openai.OpenAI:
            url = f"http://127.0.0.1:{port}/v1"
            judge = Judge(base_url=url, timeout_seconds=timeout)
            return openai.OpenAI(
                base_url=url,
                api_key="none",
                max_retries=0,
                timeout=timeout,
                http_client=judges._guarded_http_client(judge),
            )

        now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        print(f"{now}, load {os.getloadavg()[0]:.1f}")
        base_rss = rss_mb()
        for mode in ("declared", "chunked"):
            child, port, sent_file = start_receiver(mode, args.megabytes, tmp)
            try:
                client = judge_client(port, 60.0)
                started = time.monotonic()
                with ThreadPoolExecutor(max_workers=args.requests) as pool:
                    outcomes = list(
                        pool.map(
                            judges.ask_judge,
                            [client] * args.requests,
                            [version] * args.requests,
                            [prompt] * args.requests,
                        )
                    )
                took = time.monotonic() - started
                time.sleep(0.5)
                sent = int(sent_file.read_text() or 0) if sent_file.exists() else 0
            finally:
                child.kill()
                child.wait()
            errors = {o.error for o in outcomes}
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"{args.requests} x {args.megabytes} MB judge replies ({mode} length): "
                f"{took:.2f} s, RSS {base_rss:.0f} MB before, {rss_mb():.0f} MB after, "
                f"peak {peak:.0f} MB; receiver got {sent / 2**20:.0f} MB out of "
                f"{args.requests * args.megabytes} MB; errors: {sorted(errors)}"
            )

        child, port, _sent = start_receiver("trickle", 0, tmp)
        try:
            hook = Webhook(url=f"http://127.0.0.1:{port}/hook", secret="x")
            started = time.monotonic()
            code, error = webhooks._post(hook, "set.reviewed", b"{}")
            print(f"webhook to a trickling receiver: {time.monotonic() - started:.2f} s, {error}")
            client = judge_client(port, 10.0)
            started = time.monotonic()
            outcome = judges.ask_judge(client, version, prompt)
            print(
                f"judge (timeout 10 s) at a trickling receiver: "
                f"{time.monotonic() - started:.2f} s, {outcome.error}"
            )
        finally:
            child.kill()
            child.wait()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    else:
        main()
