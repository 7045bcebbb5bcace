"""A fixed-window request limit, the kind the Hub applies to resolve requests ("resolvers")."""

import math
import threading
import time


class FixedWindowLimit:
    """At most `limit` requests per window of `window_s` seconds; thread-safe; the clock is
    injected so a test can step it."""

    def __init__(self, limit: int, window_s: float, clock=time.monotonic):
        self.limit = limit
        self.window_s = window_s
        self._clock = clock
        self._lock = threading.Lock()
        self._window_start: float | None = None
        self._used = 0

    def admit(self) -> tuple[bool, int, int]:
        """(admitted, requests left in this window, whole seconds until the window resets)."""
        with self._lock:
            now = self._clock()
            # A window opens with the first request after the last one closed (not on a grid),
            # so a test's burst never straddles a boundary by bad luck.
            if self._window_start is None or now >= self._window_start + self.window_s:
                self._window_start, self._used = now, 0
            # Never 0: "t=0" would tell a client to retry at once into the same full window.
            reset_s = max(math.ceil(self._window_start + self.window_s - now), 1)
            if self._used >= self.limit:
                return False, 0, reset_s
            self._used += 1
            return True, self.limit - self._used, reset_s

    def headers(self, remaining: int, reset_s: int) -> dict[str, str]:
        """The IETF draft headers the Hub sends and huggingface_hub parses."""
        return {
            "RateLimit": f'"resolvers";r={remaining};t={reset_s}',
            "RateLimit-Policy":
                f'"fixed window";"resolvers";q={self.limit};w={math.ceil(self.window_s)}',
        }
