"""Request budgets per API token, counted in Django's cache so every process and machine
sharing that cache (Redis in production) counts against the same budget.

A fixed window: each token has one counter for reads and one for writes per window of
`API_RATE_WINDOW_SECONDS`; a request over the budget is refused with 429 and the seconds
until the window ends.
"""

from __future__ import annotations

import math
import time

from django.conf import settings
from django.core.cache import cache

KEY = "api-rate:{kind}:{token}:{window}"


class RateLimited(Exception):
    """Over budget; `retry_after` is the whole seconds until the next window opens."""

    def __init__(self, *, kind: str, retry_after: int) -> None:
        super().__init__(f"Too many {kind}s with this token: retry after {retry_after} s.")
        self.kind = kind
        self.retry_after = retry_after


def rate_count(*, token_id: int, write: bool, now: float | None = None) -> None:
    """Count one request of the token; RateLimited when its window's budget is spent."""
    kind = "write" if write else "read"
    limit = settings.API_RATE_LIMIT_WRITES if write else settings.API_RATE_LIMIT_READS
    window = max(1, int(settings.API_RATE_WINDOW_SECONDS))
    now = time.time() if now is None else now
    index = int(now // window)
    key = KEY.format(kind=kind, token=token_id, window=index)
    # add() then incr(): atomic in Redis, so two processes never both take the last request.
    cache.add(key, 0, timeout=window + 1)
    try:
        count = cache.incr(key)
    except ValueError:
        # The key expired between add() and incr(): this request opens the count again.
        cache.set(key, 1, timeout=window + 1)
        count = 1
    if count > limit:
        retry_after = max(1, math.ceil((index + 1) * window - now))
        raise RateLimited(kind=kind, retry_after=retry_after)
