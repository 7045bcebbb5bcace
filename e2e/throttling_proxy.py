#!/usr/bin/env python3
"""A bandwidth-capped, request-rate-limited HTTP reverse proxy in front of an S3 server (MinIO),
standing in for "the origin" in the admission and fan-out tests and benchmarks (stdlib only).

The feature under test promises that a fleet of node agents reads from the object store no faster
than a cap, backs off when the store answers 503 SlowDown (as S3 does per prefix when the request
rate spikes), and fetches each byte from the origin as few times as it can. MinIO on loopback has
none of those limits and counts nothing, so the tests point the agents at this proxy instead and
read its counters: the proxy's response body bytes are the origin bytes.

    e2e/throttling_proxy.py --listen 127.0.0.1:0 --upstream http://127.0.0.1:9000 \\
        [--bytes-per-second N] [--max-requests-per-second R] [--max-concurrent C] \\
        [--stats-file PATH] [--verbose]

It prints `listening 127.0.0.1:PORT` on stdout once it accepts connections (port 0 picks a free
one), and logs one key=value event a line on stderr. 0 or an absent flag means no such limit.

- N: response body bytes a second over all connections together (one token bucket, bursts of at
  most 50 ms worth, so every 1-second window stays within 1.05x N).
- R: requests admitted in any rolling 1-second window; above it a request gets 503 SlowDown.
- C: requests in flight; above it a request gets 503 SlowDown.

Request bodies (uploads) are neither capped nor counted as origin bytes: the feature is about
reads, and the tests upload their checkpoint before they measure.

Control and counters live on the same port under /__proxy/, which S3 never uses (a bucket name
cannot start with an underscore); those requests are not forwarded, limited or counted:

    GET  /__proxy/stats     the counters as JSON
    POST /__proxy/down      every later request (not /__proxy/) gets its connection closed
                            unanswered, as from a dead origin; ?abort_in_flight=1 also cuts the
                            response bodies being sent
    POST /__proxy/up        forwards again
    POST /__proxy/reset     zeroes the counters and restarts the per-second series
    POST /__proxy/config?bytes_per_second=N&max_requests_per_second=R&max_concurrent=C
                            changes the limits live (each parameter optional)

The stats: bytes_served (response body bytes written to clients: the origin bytes),
bytes_per_second (element i holds whole second i since start or reset, the last one still running;
bytes_per_second_offset names the second of element 0 once an hour has been dropped),
max_bytes_in_any_1s_window, bytes_by_status_class, requests_forwarded (answered by the upstream)
and responses_by_status_class, requests_refused (503 SlowDown) and requests_refused_by_reason,
requests_dropped_while_down, responses_aborted_by_down, upstream_failures (502s and bodies the
upstream cut off), client_aborts, in_flight, in_flight_peak, request_body_bytes, limits, down.

With --stats-file the same JSON is written there (temporary file, then rename) every 0.5 s and
once more on SIGTERM or SIGINT before the proxy exits.

Requests pass through unchanged, Host included: S3 clients sign requests with AWS SigV4, which
covers Host. Only the hop-by-hop headers of RFC 9110 section 7.6.1 are dropped on each side.
"""

import argparse
import collections
import http.client
import http.server
import json
import os
import re
import secrets
import signal
import socketserver
import sys
import threading
import time
import traceback
import urllib.parse
from xml.sax.saxutils import escape as xml_escape

CHUNK_BYTES = 1 << 20  # the most body bytes held in memory per connection at once
MAX_HEADER_BYTES = 64 << 10  # request line and headers together
MAX_DISCARD_BYTES = 16 << 20  # a refused request body larger than this closes the connection
MAX_CHUNK_LINE_BYTES = 4096  # one chunk-size line or trailer line of a chunked request body
MAX_TRAILER_LINES = 100
MAX_SERIES_SECONDS = 3600  # per-second byte series kept; older seconds are dropped
BURST_SECONDS = 0.05  # token bucket depth: 1 s windows then carry at most 5% over the cap
STATS_FILE_PERIOD_SECONDS = 0.5
CONTROL_PREFIX = "/__proxy/"
DIGITS = re.compile(r"[0-9]{1,19}")
HEX_DIGITS = re.compile(rb"[0-9A-Fa-f]{1,15}")
# Connection-level headers: they describe one hop, so the proxy must not pass them on.
# Transfer-Encoding is not here: a chunked request body is relayed with its framing as it came.
HOP_BY_HOP_HEADERS = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"})
SLOW_DOWN_BODY = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
                  "<Message>Please reduce your request rate.</Message>"
                  "<Resource>{resource}</Resource><RequestId>{request_id}</RequestId></Error>")


def log_event(event, **fields):
    """One event a line, key=value; values with spaces, quotes or '=' are JSON-quoted."""
    parts = [f"event={event}"]
    for key, value in fields.items():
        text = str(value)
        if not text or any(character in text for character in ' "='):
            text = json.dumps(text)
        parts.append(f"{key}={text}")
    sys.stderr.write(" ".join(parts) + "\n")
    sys.stderr.flush()


class Limits:
    """The three limits; 0 means none."""

    def __init__(self, bytes_per_second=0, max_requests_per_second=0, max_concurrent=0):
        self.bytes_per_second = bytes_per_second
        self.max_requests_per_second = max_requests_per_second
        self.max_concurrent = max_concurrent

    def as_dict(self):
        return {"bytes_per_second": self.bytes_per_second,
                "max_requests_per_second": self.max_requests_per_second,
                "max_concurrent": self.max_concurrent}


class TokenBucket:
    """The shared byte budget of all connections. Thread-safe; take() blocks.

    The bucket holds at most BURST_SECONDS worth of tokens, and writers ask for at most that many
    at once (slice_bytes), so the bytes granted in any interval of length L are at most
    rate * (L + BURST_SECONDS). A rate of 0 grants everything at once.
    """

    def __init__(self, rate, clock=time.monotonic):
        self._clock = clock
        self._condition = threading.Condition()
        self._rate = 0
        self._capacity = 1.0
        self._level = 0.0
        self._updated = clock()
        self.set_rate(rate)

    def set_rate(self, rate):
        with self._condition:
            now = self._clock()
            self._refill(now)
            was_unlimited = self._rate == 0
            self._rate = rate
            self._capacity = max(1.0, rate * BURST_SECONDS)
            self._level = self._capacity if was_unlimited else min(self._level, self._capacity)
            # Waiters computed their sleep from the old rate.
            self._condition.notify_all()

    def slice_bytes(self):
        with self._condition:
            return CHUNK_BYTES if self._rate == 0 else max(1, int(self._capacity))

    def take(self, count):
        """Waits for count tokens; returns the clock's time when they were granted."""
        with self._condition:
            while True:
                now = self._clock()
                wait = self.try_take(count, now)
                if wait <= 0:
                    return now
                self._condition.wait(wait)

    def try_take(self, count, now):
        """Takes count tokens and returns 0, or returns the seconds to wait before asking again.

        A request above the capacity (a slice sized before the rate was lowered) is granted once
        the bucket is full and leaves it in debt, so the long-run rate still holds.
        """
        with self._condition:
            if self._rate == 0:
                return 0.0
            self._refill(now)
            needed = min(float(count), self._capacity)
            # The tolerance and the shortest wait keep float rounding of the refill from
            # leaving a writer a few ULPs short, asking forever to wait ever less.
            if self._level >= needed - 1e-6:
                self._level -= count
                return 0.0
            return max(1e-6, (needed - self._level) / self._rate)

    def _refill(self, now):
        if self._rate:
            self._level = min(self._capacity, self._level + (now - self._updated) * self._rate)
        self._updated = now


class Origin:
    """What all connections share: limits, the byte bucket, up or down, and the counters.

    Thread-safe. One lock guards admission and counters; the bucket has its own, so that a writer
    waiting for tokens holds nothing the others need.
    """

    def __init__(self, limits, clock=time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._limits = limits
        self.bucket = TokenBucket(limits.bytes_per_second, clock)
        self._down = False
        self._abort_epoch = 0
        self._in_flight = 0
        self._admitted_at = collections.deque()  # admission times within the last second
        self._reset_counters(clock())

    def _reset_counters(self, now):
        self._started = now
        self._bytes_served = 0
        self._series = []  # body bytes written in each whole second since _started
        self._series_offset = 0  # the second that _series[0] stands for
        self._recent = collections.deque()  # (millisecond, bytes) of the last second
        self._recent_bytes = 0
        self._max_window_bytes = 0
        self._request_body_bytes = 0
        self._forwarded = 0
        self._refused = {"request_rate": 0, "concurrency": 0}
        self._dropped_while_down = 0
        self._upstream_failures = 0
        self._client_aborts = 0
        self._aborted_by_down = 0
        self._responses_by_class = collections.Counter()
        self._bytes_by_class = collections.Counter()
        self._in_flight_peak = self._in_flight

    # Admission -----------------------------------------------------------------------------

    def admit(self):
        """Returns None and counts the request in flight, or the reason it is refused."""
        with self._lock:
            now = self._clock()
            while self._admitted_at and self._admitted_at[0] <= now - 1.0:
                self._admitted_at.popleft()
            limits = self._limits
            if limits.max_concurrent and self._in_flight >= limits.max_concurrent:
                reason = "concurrency"
            elif (limits.max_requests_per_second
                  and len(self._admitted_at) >= limits.max_requests_per_second):
                reason = "request_rate"
            else:
                self._admitted_at.append(now)
                self._in_flight += 1
                self._in_flight_peak = max(self._in_flight_peak, self._in_flight)
                return None
            self._refused[reason] += 1
            return reason

    def release(self):
        with self._lock:
            self._in_flight -= 1

    def is_down(self):
        with self._lock:
            return self._down

    def abort_epoch(self):
        with self._lock:
            return self._abort_epoch

    def set_down(self, down, abort_in_flight=False):
        with self._lock:
            self._down = down
            if abort_in_flight:
                self._abort_epoch += 1

    def set_limits(self, limits):
        with self._lock:
            self._limits = limits
        self.bucket.set_rate(limits.bytes_per_second)

    def limits(self):
        with self._lock:
            return self._limits

    # Counting ------------------------------------------------------------------------------

    def count_body_bytes(self, count, status, granted_at):
        """Counts bytes written, in the second their tokens were granted: a writer delayed
        between grant and write (a busy machine) must not make its bytes look like a burst."""
        with self._lock:
            at = max(granted_at, self._started)
            self._bytes_served += count
            self._bytes_by_class[status_class(status)] += count
            second = max(0, int(at - self._started) - self._series_offset)
            if second >= len(self._series):
                self._series.extend([0] * (second + 1 - len(self._series)))
            self._series[second] += count
            overflow = len(self._series) - MAX_SERIES_SECONDS
            if overflow > 0:
                del self._series[:overflow]
                self._series_offset += overflow
            # Writes are grouped by millisecond so the window stays small at any byte rate.
            millisecond = int(at * 1000)
            if self._recent and self._recent[-1][0] >= millisecond:
                # Grants from other threads may be counted out of order; the window then
                # places this one a moment late, which only errs towards a larger maximum.
                self._recent[-1][1] += count
            else:
                self._recent.append([millisecond, count])
            self._recent_bytes += count
            while self._recent[0][0] <= millisecond - 1000:
                self._recent_bytes -= self._recent.popleft()[1]
            self._max_window_bytes = max(self._max_window_bytes, self._recent_bytes)

    def count_request_body_bytes(self, count):
        with self._lock:
            self._request_body_bytes += count

    def count_response(self, status):
        with self._lock:
            self._forwarded += 1
            self._responses_by_class[status_class(status)] += 1

    def count(self, what):
        with self._lock:
            if what == "dropped_while_down":
                self._dropped_while_down += 1
            elif what == "upstream_failure":
                self._upstream_failures += 1
            elif what == "client_abort":
                self._client_aborts += 1
            elif what == "aborted_by_down":
                self._aborted_by_down += 1
            else:
                raise ValueError(what)

    def reset(self):
        with self._lock:
            self._reset_counters(self._clock())

    def snapshot(self):
        with self._lock:
            now = self._clock()
            elapsed_second = int(now - self._started) - self._series_offset
            series = self._series + [0] * max(0, elapsed_second + 1 - len(self._series))
            return {
                "seconds_since_start": round(now - self._started, 3),
                "limits": self._limits.as_dict(),
                "down": self._down,
                "bytes_served": self._bytes_served,
                "bytes_per_second": series,
                "bytes_per_second_offset": self._series_offset,
                "max_bytes_in_any_1s_window": self._max_window_bytes,
                "bytes_by_status_class": dict(sorted(self._bytes_by_class.items())),
                "request_body_bytes": self._request_body_bytes,
                "requests_forwarded": self._forwarded,
                "responses_by_status_class": dict(sorted(self._responses_by_class.items())),
                "requests_refused": sum(self._refused.values()),
                "requests_refused_by_reason": dict(self._refused),
                "requests_dropped_while_down": self._dropped_while_down,
                "responses_aborted_by_down": self._aborted_by_down,
                "upstream_failures": self._upstream_failures,
                "client_aborts": self._client_aborts,
                "in_flight": self._in_flight,
                "in_flight_peak": self._in_flight_peak,
            }


def status_class(status):
    return f"{status // 100}xx"


class ClientGone(Exception):
    """The client's socket failed; the connection cannot be answered any more."""


class UpstreamBroken(Exception):
    """The upstream failed after the response began; the client gets a cut-off body."""


class CutByDown(UpstreamBroken):
    """/__proxy/down?abort_in_flight=1 ends the response, as an origin's crash would."""


class BadRequest(Exception):
    """The request's framing is invalid; it is answered 400 and the connection closed."""


class _HeaderBudget:
    """Reads the header section for http.client.parse_headers, failing past a total size."""

    def __init__(self, raw, budget):
        self._raw = raw
        self._budget = budget

    def readline(self, limit=-1):
        wanted = self._budget + 1 if limit < 0 else min(limit, self._budget + 1)
        line = self._raw.readline(wanted)
        self._budget -= len(line)
        if self._budget < 0:
            # parse_request answers LineTooLong with 431 and closes the connection.
            raise http.client.LineTooLong(f"header section over {MAX_HEADER_BYTES} bytes")
        return line


class _UpstreamConnection(http.client.HTTPConnection):
    # A request target is relayed as received; ASCII-only encoding would refuse raw bytes that
    # the upstream may accept.
    def _encode_request(self, request):
        return request.encode("latin-1")


class ProxyServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a fleet of agents connects at once; 5 would drop SYNs

    def __init__(self, address, origin, upstream_host, upstream_port, *, timeout, max_connections,
                 verbose):
        self.origin = origin
        self.upstream_host = upstream_host
        self.upstream_port = upstream_port
        self.io_timeout = timeout
        self.max_connections = max_connections
        self.verbose = verbose
        self._connections = 0
        self._connections_lock = threading.Lock()
        super().__init__(address, ProxyHandler)

    def server_bind(self):
        # HTTPServer.server_bind resolves the host's FQDN, which can stall on a broken resolver.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def process_request(self, request, client_address):
        with self._connections_lock:
            if self._connections >= self.max_connections:
                log_event("connection_refused", reason="max_connections", client=client_address[0])
                self.shutdown_request(request)
                return
            self._connections += 1
        try:
            super().process_request(request, client_address)
        except Exception:
            with self._connections_lock:
                self._connections -= 1
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._connections_lock:
                self._connections -= 1

    def handle_error(self, request, client_address):
        # One connection's failure is logged and its socket closed; the server keeps serving.
        error = sys.exc_info()[1]
        frames = traceback.extract_tb(error.__traceback__) if error else []
        where = f"{frames[-1].name}:{frames[-1].lineno}" if frames else "-"
        log_event("connection_failed", client=client_address[0], error=repr(error), at=where)


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    """One client connection: its requests in order, over one upstream connection."""

    protocol_version = "HTTP/1.1"
    server_version = "throttling-proxy"
    sys_version = ""

    def setup(self):
        self.timeout = self.server.io_timeout
        self._upstream = None
        super().setup()

    def finish(self):
        self._close_upstream()
        try:
            super().finish()
        except OSError:
            pass

    def parse_request(self):
        raw = self.rfile
        self.rfile = _HeaderBudget(raw, MAX_HEADER_BYTES - len(self.raw_requestline))
        try:
            return super().parse_request()
        finally:
            self.rfile = raw

    def log_message(self, format, *args):
        if self.server.verbose:
            log_event("request_answered", client=self.client_address[0], line=format % args)

    def log_error(self, format, *args):
        log_event("request_failed", client=self.client_address[0], error=format % args)

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (ClientGone, ConnectionError):
            # A client that resets its connection between requests is no server error.
            self.close_connection = True

    def _dispatch(self):
        try:
            if self.path.startswith(CONTROL_PREFIX):
                self._control()
            else:
                self._proxy()
        except ClientGone:
            self.close_connection = True
        except BadRequest as error:
            self.close_connection = True
            self._answer(400, "text/plain", f"{error}\n".encode())

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_OPTIONS = do_PATCH = _dispatch

    # Proxying ------------------------------------------------------------------------------

    def _proxy(self):
        origin = self.server.origin
        if origin.is_down():
            # A dead origin answers nothing: the client sees its connection closed.
            origin.count("dropped_while_down")
            self.close_connection = True
            return
        refusal = origin.admit()
        if refusal:
            self._answer_slow_down()
            return
        try:
            self._forward()
        finally:
            origin.release()

    def _forward(self):
        origin = self.server.origin
        try:
            response = self._send_upstream()
        except ClientGone as error:
            self._close_upstream()
            origin.count("client_abort")
            log_event("client_gone", path=self.path, error=str(error))
            raise
        except BadRequest:
            self._close_upstream()
            raise
        except (OSError, http.client.HTTPException) as error:
            self._close_upstream()
            origin.count("upstream_failure")
            log_event("upstream_failed", path=self.path, error=repr(error))
            if self._request_body_framing() is not None:
                self.close_connection = True  # the body may be partly unread
            self._answer(502, "text/plain", f"upstream unreachable: {error}\n".encode())
            return
        try:
            self._relay_response(response)
        except ClientGone as error:
            self._close_upstream()
            origin.count("client_abort")
            log_event("client_gone", path=self.path, error=str(error))
            self.close_connection = True
        except UpstreamBroken as error:
            # The status line is out: the only way left to tell the client is a cut-off body.
            self._close_upstream()
            origin.count("aborted_by_down" if isinstance(error, CutByDown) else "upstream_failure")
            log_event("response_cut_off", path=self.path, reason=str(error))
            self.close_connection = True
        if response.will_close or not response.isclosed():
            self._close_upstream()

    def _send_upstream(self):
        framing = self._request_body_framing()
        # An idle upstream connection may have been closed by the upstream meanwhile; a request
        # that has sent no body yet and is safe to repeat gets one more try on a fresh one.
        for attempt in range(2):
            reused = self._upstream is not None
            if not reused:
                self._upstream = _UpstreamConnection(self.server.upstream_host,
                                                     self.server.upstream_port,
                                                     timeout=self.server.io_timeout)
            connection = self._upstream
            body_started = False
            try:
                connection.putrequest(self.command, self.path, skip_host=True,
                                      skip_accept_encoding=True)
                for name, value in self._end_to_end(self.headers.items()):
                    # Beside chunked framing a Content-Length is void (RFC 9112 6.3); passing
                    # both on would let the upstream pick the other one.
                    if framing and framing[0] == "chunked" and name.lower() == "content-length":
                        continue
                    connection.putheader(name, value)
                connection.endheaders()
                body_started = framing is not None
                self._copy_request_body(framing, connection.send)
                return connection.getresponse()
            except (OSError, http.client.HTTPException):
                self._close_upstream()
                if (attempt == 0 and reused and not body_started
                        and self.command in ("GET", "HEAD", "DELETE", "OPTIONS")):
                    continue
                raise
        raise AssertionError("unreachable")

    def _end_to_end(self, headers):
        listed = set()
        for name, value in headers:
            if name.lower() == "connection":
                listed.update(token.strip().lower() for token in value.split(","))
        return [(name, value) for name, value in headers
                if name.lower() not in HOP_BY_HOP_HEADERS and name.lower() not in listed]

    def _request_body_framing(self):
        """("chunked", None), ("length", N), or None for a request without a body."""
        encodings = self.headers.get_all("Transfer-Encoding")
        if encodings:
            # RFC 9112 6.3: with Transfer-Encoding, chunked must come last and Content-Length
            # is ignored.
            if ",".join(encodings).split(",")[-1].strip().lower() != "chunked":
                raise BadRequest("Transfer-Encoding must end in chunked")
            return ("chunked", None)
        lengths = self.headers.get_all("Content-Length") or []
        if not lengths:
            return None
        if len(set(lengths)) != 1 or not DIGITS.fullmatch(lengths[0].strip()):
            raise BadRequest("invalid Content-Length")
        length = int(lengths[0])
        return ("length", length) if length else None

    def _copy_request_body(self, framing, sink, limit=None):
        """Streams the request body to sink: chunked framing verbatim, since it is the client's.

        Returns False when limit bytes were read before the end (the rest is left unread).
        """
        if framing is None:
            return True
        kind, length = framing
        if kind == "length":
            if limit is not None and length > limit:
                return False
            remaining = length
            while remaining:
                data = self._read_client(min(remaining, CHUNK_BYTES))
                sink(data)
                self.server.origin.count_request_body_bytes(len(data))
                remaining -= len(data)
            return True
        read = 0
        while True:
            line = self._read_client_line()
            size_text = line.split(b";", 1)[0].strip()
            if not HEX_DIGITS.fullmatch(size_text):
                raise BadRequest("invalid chunk size line")
            size = int(size_text, 16)
            read += size
            if limit is not None and read > limit:
                return False
            sink(line)
            remaining = size
            while remaining:
                data = self._read_client(min(remaining, CHUNK_BYTES))
                sink(data)
                self.server.origin.count_request_body_bytes(len(data))
                remaining -= len(data)
            if size == 0:
                for _ in range(MAX_TRAILER_LINES):
                    trailer = self._read_client_line()
                    sink(trailer)
                    if trailer in (b"\r\n", b"\n"):
                        return True
                raise BadRequest("too many trailer lines")
            end = self._read_client(2)
            if end != b"\r\n":
                raise BadRequest("chunk not followed by CRLF")
            sink(end)

    def _read_client(self, count):
        try:
            data = self.rfile.read(count)
        except OSError as error:
            raise ClientGone(str(error)) from error
        if len(data) < count:
            raise ClientGone("request body cut off")
        return data

    def _read_client_line(self):
        try:
            line = self.rfile.readline(MAX_CHUNK_LINE_BYTES + 1)
        except OSError as error:
            raise ClientGone(str(error)) from error
        if not line.endswith(b"\n"):
            if len(line) > MAX_CHUNK_LINE_BYTES:
                raise BadRequest("chunk line too long")
            raise ClientGone("request body cut off")
        return line

    def _relay_response(self, response):
        origin = self.server.origin
        status = response.status
        headers = self._end_to_end(response.getheaders())
        headers = [(name, value) for name, value in headers
                   if name.lower() != "transfer-encoding"]
        has_body = not (self.command == "HEAD" or status in (204, 304) or 100 <= status < 200)
        chunked = False
        if has_body and (response.chunked or response.length is None):
            headers = [(name, value) for name, value in headers
                       if name.lower() != "content-length"]
            if self.request_version == "HTTP/1.1":
                chunked = True
                headers.append(("Transfer-Encoding", "chunked"))
            else:
                self.close_connection = True
        origin.count_response(status)
        self.log_request(status)
        self.send_response_only(status, response.reason)
        for name, value in headers:
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self._write_client(None)
        if not has_body:
            response.read()  # marks the upstream connection free for the next request
            return
        epoch = origin.abort_epoch()
        bucket = origin.bucket
        while True:
            try:
                data = response.read1(CHUNK_BYTES)
            except (OSError, http.client.HTTPException) as error:
                raise UpstreamBroken(f"response body read failed: {error!r}") from error
            if not data:
                break
            view = memoryview(data)
            while view:
                piece = view[:bucket.slice_bytes()]
                granted_at = bucket.take(len(piece))
                if origin.abort_epoch() != epoch:
                    raise CutByDown("the origin went down with abort_in_flight=1")
                if chunked:
                    self._write_client(b"%x\r\n" % len(piece) + piece + b"\r\n")
                else:
                    self._write_client(piece)
                origin.count_body_bytes(len(piece), status, granted_at)
                view = view[len(piece):]
        if not response.chunked and response.length:
            raise UpstreamBroken(f"upstream closed with {response.length} body bytes unsent")
        if chunked:
            self._write_client(b"0\r\n\r\n")

    def _write_client(self, data):
        """Writes data, or the buffered status line and headers when data is None."""
        try:
            if data is None:
                self.end_headers()
            else:
                self.wfile.write(data)
        except OSError as error:
            raise ClientGone(str(error)) from error

    def _close_upstream(self):
        if self._upstream is not None:
            self._upstream.close()
            self._upstream = None

    # Answers of the proxy's own ------------------------------------------------------------

    def _discard_request_body(self):
        """Reads the request body away so the connection can carry the next request; a body too
        large to be worth reading closes the connection after the answer instead."""
        if not self._copy_request_body(self._request_body_framing(), lambda data: None,
                                       limit=MAX_DISCARD_BYTES):
            self.close_connection = True

    def _answer_slow_down(self):
        self._discard_request_body()
        request_id = secrets.token_hex(8).upper()
        resource = xml_escape(urllib.parse.urlsplit(self.path).path)
        body = SLOW_DOWN_BODY.format(resource=resource, request_id=request_id).encode()
        self._answer(503, "application/xml", body, [("x-amz-request-id", request_id)])

    def _answer(self, status, content_type, body, extra_headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra_headers:
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self._write_client(None)
        if self.command != "HEAD":
            self._write_client(body)

    def _answer_json(self, status, document):
        self._answer(status, "application/json", (json.dumps(document) + "\n").encode())

    # Control -------------------------------------------------------------------------------

    def _control(self):
        self._discard_request_body()
        url = urllib.parse.urlsplit(self.path)
        action = url.path[len(CONTROL_PREFIX):]
        query = dict(urllib.parse.parse_qsl(url.query))
        origin = self.server.origin
        wanted = {"stats": "GET", "down": "POST", "up": "POST", "reset": "POST", "config": "POST"}
        if action not in wanted:
            self._answer_json(404, {"error": f"unknown control path {url.path}"})
            return
        if self.command != wanted[action]:
            self._answer_json(405, {"error": f"{url.path} takes {wanted[action]}"})
            return
        if action == "down":
            abort = query.get("abort_in_flight", "") in ("1", "true")
            origin.set_down(True, abort_in_flight=abort)
            log_event("origin_went_down", abort_in_flight=abort)
        elif action == "up":
            origin.set_down(False)
            log_event("origin_came_up")
        elif action == "reset":
            origin.reset()
        elif action == "config":
            try:
                limits = limits_with(origin.limits(), query)
            except ValueError as error:
                self._answer_json(400, {"error": str(error)})
                return
            origin.set_limits(limits)
            log_event("limits_changed", **limits.as_dict())
        self._answer_json(200, origin.snapshot())


def limits_with(current, changes):
    """The limits with the given query parameters applied; ValueError names a bad one."""
    values = current.as_dict()
    for name, text in changes.items():
        if name not in values:
            raise ValueError(f"unknown limit {name}")
        if not DIGITS.fullmatch(text):
            raise ValueError(f"{name} must be a whole number >= 0, got {text!r}")
        values[name] = int(text)
    return Limits(**values)


def write_stats_file(path, snapshot):
    # Readers poll the file while the proxy runs: a rename shows them a whole document or the
    # previous one, never half of one.
    temporary = f"{path}.tmp.{os.getpid()}"
    with open(temporary, "w") as handle:
        json.dump(snapshot, handle)
        handle.write("\n")
    os.replace(temporary, path)


def parse_host_port(text):
    host, separator, port = text.rpartition(":")
    if not separator or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


def parse_upstream(text):
    url = urllib.parse.urlsplit(text)
    if url.scheme != "http" or not url.hostname or url.path not in ("", "/") or url.query:
        raise argparse.ArgumentTypeError(f"expected http://HOST:PORT, got {text!r}")
    return url.hostname, url.port or 80


def non_negative(text):
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", type=parse_host_port, required=True, help="HOST:PORT")
    parser.add_argument("--upstream", type=parse_upstream, required=True, help="http://HOST:PORT")
    parser.add_argument("--bytes-per-second", type=non_negative, default=0)
    parser.add_argument("--max-requests-per-second", type=non_negative, default=0)
    parser.add_argument("--max-concurrent", type=non_negative, default=0)
    parser.add_argument("--stats-file")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds any one read or write on either side may take")
    parser.add_argument("--max-connections", type=int, default=1024)
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)

    limits = Limits(args.bytes_per_second, args.max_requests_per_second, args.max_concurrent)
    origin = Origin(limits)
    upstream_host, upstream_port = args.upstream
    try:
        server = ProxyServer(args.listen, origin, upstream_host, upstream_port,
                             timeout=args.timeout, max_connections=args.max_connections,
                             verbose=args.verbose)
    except OSError as error:
        log_event("listen_failed", address=f"{args.listen[0]}:{args.listen[1]}", error=str(error))
        return 1
    stop_signal = []
    # The handler only records the signal: the main loop below then stops the server, which
    # must not be done from inside a signal handler.
    signal.signal(signal.SIGTERM, lambda number, frame: stop_signal.append(number))
    signal.signal(signal.SIGINT, lambda number, frame: stop_signal.append(number))
    serving = threading.Thread(target=server.serve_forever, args=(0.1,), name="accept",
                               daemon=True)
    serving.start()
    host, port = server.server_address[:2]
    log_event("proxy_started", address=f"{host}:{port}",
              upstream=f"{upstream_host}:{upstream_port}", **limits.as_dict())
    print(f"listening {host}:{port}", flush=True)

    next_write = 0.0
    while not stop_signal:
        if args.stats_file and time.monotonic() >= next_write:
            try:
                write_stats_file(args.stats_file, origin.snapshot())
            except OSError as error:
                # A lost stats file must not take the origin down with it mid-benchmark.
                log_event("stats_file_write_failed", path=args.stats_file, error=str(error))
            next_write = time.monotonic() + STATS_FILE_PERIOD_SECONDS
        time.sleep(0.05)
    server.shutdown()
    if args.stats_file:
        write_stats_file(args.stats_file, origin.snapshot())
    server.server_close()
    log_event("proxy_stopped", signal=signal.Signals(stop_signal[0]).name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
