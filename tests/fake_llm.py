"""A small OpenAI-compatible chat-completions server for tests, on 127.0.0.1 in a thread:
what it answers about each claim is set by the test, never fetched from the network.

`FakeLLM.behaviour[claim_text]` is a reply dict (sent as the message's JSON content) or one
of the faults below; a list gives one entry per request about that claim, the last repeated.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Faults the server can play for a claim.
NOT_JSON = "not json"  # the message content is prose
SLOW = "slow"  # answers after `slow_seconds`, past the judge's timeout
RATE_LIMITED = "429"  # 429 with Retry-After: 0
SERVER_ERROR = "500"
USAGE = {"prompt_tokens": 100, "completion_tokens": 20}


def claim_of(prompt: str) -> str:
    """The claim in a prompt made from the default template."""
    start = prompt.index("## Claim\n") + len("## Claim\n")
    return prompt[start : prompt.index("\n\n", start)]


class FakeLLM:
    def __init__(self) -> None:
        self.behaviour: dict[str, object] = {}
        self.default: object = {"judgment": "unclear", "evidence": [], "rationale": "default"}
        self.slow_seconds = 2.0
        self.delay_seconds = 0.0  # before every reply, so a page can watch a run's progress
        self.requests: list[dict] = []
        # Called with the claim of each request as it arrives, before the reply is sent.
        self.on_request = lambda claim: None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def asked(self, claim: str) -> int:
        """How many requests were about this claim."""
        with self._lock:
            return sum(1 for r in self.requests if r["claim"] == claim)

    def _next(self, claim: str) -> object:
        with self._lock:
            n = sum(1 for r in self.requests if r["claim"] == claim)
        plan = self.behaviour.get(claim, self.default)
        if isinstance(plan, list):
            return plan[min(n - 1, len(plan) - 1)]
        return plan

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet test output
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][-1]["content"]
                claim = claim_of(prompt)
                with fake._lock:
                    fake.requests.append(
                        {"claim": claim, "body": body, "auth": self.headers.get("Authorization")}
                    )
                fake.on_request(claim)
                plan = fake._next(claim)
                time.sleep(fake.delay_seconds)
                if plan == RATE_LIMITED:
                    return self._send(
                        429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}
                    )
                if plan == SERVER_ERROR:
                    return self._send(500, {"error": {"message": "the model fell over"}})
                if plan == SLOW:
                    time.sleep(fake.slow_seconds)
                    plan = fake.default
                content = plan if isinstance(plan, str) else json.dumps(plan)
                self._send(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {**USAGE, "total_tokens": sum(USAGE.values())},
                    },
                )

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): nothing to tell it

        return Handler
