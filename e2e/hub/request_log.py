"""The request log of the test Hub's process mode: one JSON object per line for every request the
hub origin or the CDN origin answered, written and flushed before the answer leaves, so a test in
another process (bash, C++) that has seen an answer finds its line (status 0: the handler failed
and no answer went out; that line comes after).

    {"origin": "cdn", "method": "GET", "path": "/org/name/<commit>/w.bin?expires=...",
     "status": 206, "authorization": false, "cookie": false, "range": "bytes=0-99"}

`authorization` and `cookie` say only whether the header came, never its value: the log exists to
prove a token never reached the CDN host (the ModelScope client sends its token in both), and a
log must not become the leak it checks for.
"""

import json
import threading


class RequestLog:
    """Appends to FILE; thread-safe (both servers' handler threads write to it). `close` waits for
    a write in progress."""

    def __init__(self, path: str):
        # Line-buffered text: each line reaches the file whole, never a half line a reader sees.
        self._file = open(path, "a", buffering=1, encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, origin: str, method: str, path: str, status: int, headers) -> None:
        line = json.dumps({
            "origin": origin, "method": method, "path": path, "status": status,
            "authorization": "authorization" in headers, "cookie": "cookie" in headers,
            "range": headers.get("range"),
        })
        with self._lock:
            if not self._file.closed:
                self._file.write(line + "\n")
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()
