"""What the test Hub and its CDN share: a loopback-only threading HTTP server whose stop waits
for its handlers, bounded requests, request records and byte serving with Range."""

import collections
import http.server
import ipaddress
import json
import re
import socket
import sys
import threading

MAX_HEADER_BYTES = 16 * 1024
MAX_BODY_BYTES = 4 * 1024  # only the /_test/ admin paths take a body, a small JSON object
IDLE_TIMEOUT_S = 10  # a kept-alive connection that says nothing this long is closed
RECORDED_REQUESTS = 10_000  # per server; enough for any test, bounded for a long-running process

_RANGE_PATTERN = re.compile(r"^bytes=(\d*)-(\d*)$")


def require_loopback(host: str) -> None:
    if not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"the test Hub serves loopback only, not {host}")


class LoopbackServer(http.server.ThreadingHTTPServer):
    """Accepts loopback clients only; `stop` ends the accept loop, wakes handlers blocked on
    kept-alive connections and waits for every one of them."""

    daemon_threads = False
    block_on_close = True
    origin = "loopback"  # the name a request log gives this server's lines ("hub", "cdn")

    def __init__(self, host: str, port: int, handler_class, log=None, request_log=None):
        require_loopback(host)
        super().__init__((host, port), handler_class)
        self.log = log or (lambda line: None)
        self.request_log = request_log  # a request_log.RequestLog, or None
        self.records = collections.deque(maxlen=RECORDED_REQUESTS)
        self.counts: collections.Counter = collections.Counter()
        self.lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def verify_request(self, request, client_address) -> bool:
        return ipaddress.ip_address(client_address[0]).is_loopback

    def process_request(self, request, client_address):
        with self.lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self.lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request, client_address) -> None:
        # A client that resets a kept-alive connection (seen with the modelscope client) is no
        # server error: one line, not socketserver's traceback on stderr.
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            self.log(f"event=connection_dropped server={self.url} client={client_address[0]} "
                     f"error={type(error).__name__}")
            return
        super().handle_error(request, client_address)

    def start(self) -> None:
        # A short poll interval: `stop` waits for the accept loop to notice it.
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,),
                                        name=f"serve {self.url}")
        self._thread.start()

    def stop(self) -> None:
        self.shutdown()
        if self._thread is not None:
            self._thread.join()
        with self.lock:
            for connection in self._open:
                try:
                    connection.shutdown(socket.SHUT_RDWR)  # unblocks a handler waiting to read
                except OSError:
                    pass
        self.server_close()  # joins the handler threads (block_on_close)

    def record(self, kind: str, status: int, method: str, path: str, headers) -> None:
        # Lower-case names: HTTP header names are case-insensitive, a dict's keys are not.
        lowered = {name.lower(): value for name, value in headers.items()}
        with self.lock:
            self.counts[kind] += 1
            self.counts[f"{kind} {status}"] += 1
            self.records.append({"kind": kind, "status": status, "method": method, "path": path,
                                 "headers": lowered})
        if self.request_log is not None:
            self.request_log.write(self.origin, method, path, status, lowered)

    def snapshot(self) -> dict:
        with self.lock:
            return {"counts": dict(self.counts), "requests": list(self.records)}


class BoundedHandler(http.server.BaseHTTPRequestHandler):
    """HTTP/1.1 with a deadline on every read, bounded headers and bodies, and one structured
    log line per request."""

    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S
    server: LoopbackServer
    request_kind = "request"  # what the records file this request under; the handler sets it

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        header_bytes = sum(len(name) + len(value) + 4 for name, value in self.headers.items())
        if header_bytes > MAX_HEADER_BYTES:
            self.send_error(431, "Request Header Fields Too Large")
            return False
        return True

    def read_body(self) -> bytes | None:
        """The request body, or None after answering 413 when it is over the bound."""
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True  # the unread body would be taken for the next request
            self.send_plain(413, "body too large")
            return None
        return self.rfile.read(length)

    def refuse_body(self) -> bool:
        """GET and HEAD carry no body here; one that does ends the connection."""
        if int(self.headers.get("Content-Length") or 0) != 0:
            self.close_connection = True
            self.send_plain(413, "no body expected")
            return True
        return False

    def send(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
        """One complete answer; a HEAD gets the same headers, Content-Length included, and no
        body."""
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(body)))
        # Recorded (and logged) before the answer leaves, so a client that has its answer finds
        # the request in the records and in the request log, even from another process.
        self.answered = status
        self.server.record(self.request_kind, status, self.command, self.path, self.headers)
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def send_plain(self, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        self.send(status, {"Content-Type": "text/plain; charset=utf-8", **(headers or {})},
                  text.encode())

    def send_json(self, status: int, value, headers: dict[str, str] | None = None) -> None:
        self.send(status, {"Content-Type": "application/json", **(headers or {})},
                  json.dumps(value).encode())

    def send_bytes(self, data: bytes, headers: dict[str, str]) -> None:
        """File content with single-range support: 206 with Content-Range, 416 when the range
        starts past the end, the whole file when the Range header is absent or not understood."""
        size = len(data)
        match = _RANGE_PATTERN.match(self.headers.get("Range", "").strip())
        base = {"Accept-Ranges": "bytes", "Content-Type": "application/octet-stream", **headers}
        if not match or match.groups() == ("", ""):
            self.send(200, base, data)
            return
        first, last = match.groups()
        if first == "":  # a suffix range: the last N bytes
            start, end = max(size - int(last), 0), size - 1
        else:
            start, end = int(first), min(int(last), size - 1) if last else size - 1
        if start >= size or start > end:
            self.send(416, {**base, "Content-Range": f"bytes */{size}"})
            return
        self.send(206, {**base, "Content-Range": f"bytes {start}-{end}/{size}"},
                  data[start:end + 1])

    def log_message(self, format, *args):  # noqa: A002 (the base class's signature)
        pass  # replaced by the one structured line per request in `finish_request_log`

    def finish_request_log(self, kind: str) -> None:
        """Ends a request: one log line, and a record with status 0 when no answer went out."""
        status = getattr(self, "answered", 0)
        if status == 0:
            self.server.record(kind, status, self.command, self.path, self.headers)
        self.server.log(f"event=request_served server={self.server.url} kind={kind} "
                        f"method={self.command} status={status} path={self.path}")
        self.answered = 0
