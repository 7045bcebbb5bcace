"""Checks e2e/throttling_proxy.py, the "origin" the admission and fan-out tests measure, against a
small loopback upstream: what passes through must arrive unchanged, and the caps and counters the
feature's tests rely on must hold. The proxy runs as a subprocess, as the scripts run it.

    .venv/bin/python -m pytest -q tests/e2e/test_throttling_proxy.py
"""

import http.client
import http.server
import importlib.util
import json
import random
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

PROXY = Path(__file__).resolve().parents[2] / "e2e" / "throttling_proxy.py"
MIB = 1 << 20
# Random rather than a short repeating pattern, so a body shifted by any offset cannot match.
OBJECT = random.Random(20240607).randbytes(8 * MIB)
OBJECT_PATH = "/bucket/object"
CHUNKED_PATH = "/bucket/chunked"
CHUNKED_PIECES = [OBJECT[:1], OBJECT[1:70000], OBJECT[70000:300000]]
NOT_FOUND_BODY = b"<Error><Code>NoSuchKey</Code></Error>"


class Upstream:
    """The S3 server's part: one object with Range support, a chunked answer, a PUT recorder."""

    def __init__(self):
        self.puts = []
        self.open_connections = 0
        self._lock = threading.Lock()
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                with upstream._lock:
                    upstream.open_connections += 1

            def finish(self):
                with upstream._lock:
                    upstream.open_connections -= 1
                try:
                    super().finish()
                except OSError:
                    pass

            def log_message(self, format, *args):
                pass

            def do_HEAD(self):
                self.do_GET(head=True)

            def do_GET(self, head=False):
                if self.path == CHUNKED_PATH:
                    self.send_response(200)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for piece in CHUNKED_PIECES:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.write(b"0\r\n\r\n")
                    return
                if self.path != OBJECT_PATH:
                    self.send_response(404)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(NOT_FOUND_BODY)))
                    self.end_headers()
                    if not head:
                        self.wfile.write(NOT_FOUND_BODY)
                    return
                start, end = 0, len(OBJECT) - 1
                match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
                if match:
                    start = int(match.group(1))
                    end = min(end, int(match.group(2))) if match.group(2) else end
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{end}/{len(OBJECT)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(end + 1 - start))
                self.send_header("ETag", '"object-etag"')
                self.end_headers()
                if head:
                    return
                for offset in range(start, end + 1, 256 << 10):
                    self.wfile.write(OBJECT[offset:min(end + 1, offset + (256 << 10))])

            def do_PUT(self):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    body = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0], 16)
                        body += self.rfile.read(size)
                        self.rfile.readline()
                        if size == 0:
                            break
                else:
                    body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with upstream._lock:
                    upstream.puts.append({"host": self.headers.get("Host"), "body": body,
                                          "headers": dict(self.headers.items())})
                self.send_response(200)
                self.send_header("ETag", '"put-etag"')
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Proxy:
    def __init__(self, process, port):
        self.process = process
        self.port = port

    def connection(self, timeout=10):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def control(self, method, path):
        connection = self.connection()
        try:
            connection.request(method, "/__proxy/" + path)
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    def stats(self):
        status, document = self.control("GET", "stats")
        assert status == 200
        return document


@pytest.fixture(scope="module")
def upstream():
    server = Upstream()
    yield server
    server.close()


@pytest.fixture
def start_proxy(upstream):
    processes = []

    def start(*flags, upstream_url=None):
        process = subprocess.Popen(
            [sys.executable, str(PROXY), "--listen", "127.0.0.1:0",
             "--upstream", upstream_url or upstream.url, *flags],
            stdout=subprocess.PIPE, text=True)
        processes.append(process)
        ready, _, _ = select.select([process.stdout], [], [], 10)
        assert ready, "the proxy printed no listening line within 10 s"
        line = process.stdout.readline()
        match = re.fullmatch(r"listening 127\.0\.0\.1:(\d+)\n", line)
        assert match, f"unexpected first line {line!r}"
        return Proxy(process, int(match.group(1)))

    yield start
    for process in processes:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.stdout.close()


def get(connection, path, headers=None, method="GET"):
    connection.request(method, path, headers=headers or {})
    response = connection.getresponse()
    return response, response.read()


def wait_for(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    return condition()


def test_bodies_ranges_and_host_pass_through_unchanged(upstream, start_proxy):
    proxy = start_proxy()
    connection = proxy.connection()

    response, body = get(connection, OBJECT_PATH)
    assert response.status == 200 and body == OBJECT
    assert response.getheader("ETag") == '"object-etag"'
    first_socket = connection.sock

    response, body = get(connection, OBJECT_PATH, {"Range": "bytes=1000-1999"})
    assert response.status == 206 and body == OBJECT[1000:2000]
    assert response.getheader("Content-Range") == f"bytes 1000-1999/{len(OBJECT)}"
    response, body = get(connection, OBJECT_PATH, {"Range": f"bytes={len(OBJECT) - 12345}-"})
    assert response.status == 206 and body == OBJECT[-12345:]

    response, body = get(connection, OBJECT_PATH, method="HEAD")
    assert response.status == 200 and body == b""
    assert response.getheader("Content-Length") == str(len(OBJECT))

    response, body = get(connection, CHUNKED_PATH)
    assert response.status == 200 and body == b"".join(CHUNKED_PIECES)

    # SigV4 signs Host, so the proxy must not put its own address there.
    signed_host = "bucket.s3.example.internal:9000"
    payload = OBJECT[:3 * MIB + 7]
    connection.request("PUT", "/bucket/uploaded", body=payload,
                       headers={"Host": signed_host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD"})
    response = connection.getresponse()
    assert response.status == 200 and response.read() == b""
    connection.request("PUT", "/bucket/uploaded-chunked", body=iter([b"abc", OBJECT[:100000]]),
                       headers={"Host": signed_host}, encode_chunked=True)
    response = connection.getresponse()
    assert response.status == 200 and response.read() == b""
    plain, chunked = upstream.puts[-2:]
    assert plain["host"] == signed_host and plain["body"] == payload
    assert plain["headers"]["x-amz-content-sha256"] == "UNSIGNED-PAYLOAD"
    assert chunked["host"] == signed_host and chunked["body"] == b"abc" + OBJECT[:100000]

    # Every request above went over one client connection: keep-alive held throughout.
    assert connection.sock is first_socket
    connection.close()


def test_byte_cap_holds_across_parallel_connections(start_proxy):
    cap = 4 * MIB
    proxy = start_proxy("--bytes-per-second", str(cap))
    part = len(OBJECT) // 4
    results = [None] * 4
    barrier = threading.Barrier(4)

    def fetch(index):
        connection = proxy.connection(timeout=20)
        barrier.wait()
        start = index * part
        _, body = get(connection, OBJECT_PATH, {"Range": f"bytes={start}-{start + part - 1}"})
        results[index] = body
        connection.close()

    threads = [threading.Thread(target=fetch, args=(index,)) for index in range(4)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    elapsed = time.monotonic() - began

    assert b"".join(results) == OBJECT
    # 8 MiB at 4 MiB/s, less the bucket's 50 ms of burst.
    assert elapsed >= 1.8, f"8 MiB took {elapsed:.2f} s under a 4 MiB/s cap"
    # The proxy counts a chunk after its write returns, so the client can hold the last bytes
    # a moment before the counter has them: wait (bounded) for the count, do not race it.
    deadline = time.monotonic() + 5
    stats = proxy.stats()
    while stats["bytes_served"] < len(OBJECT) and time.monotonic() < deadline:
        time.sleep(0.05)
        stats = proxy.stats()
    assert stats["bytes_served"] == len(OBJECT)
    assert sum(stats["bytes_per_second"]) == len(OBJECT)
    assert max(stats["bytes_per_second"]) <= 1.1 * cap, stats["bytes_per_second"]
    assert stats["max_bytes_in_any_1s_window"] <= 1.1 * cap
    assert stats["in_flight_peak"] == 4 and stats["in_flight"] == 0


SLOW_DOWN = re.compile(
    r'<\?xml version="1\.0" encoding="UTF-8"\?>\n<Error><Code>SlowDown</Code>'
    r"<Message>Please reduce your request rate\.</Message>"
    r"<Resource>/bucket/object</Resource><RequestId>[0-9A-F]{16}</RequestId></Error>")


def test_request_rate_above_limit_gets_slow_down(start_proxy):
    proxy = start_proxy("--max-requests-per-second", "5")
    connection = proxy.connection()
    statuses = []
    while 503 not in statuses and len(statuses) < 30:
        response, body = get(connection, OBJECT_PATH, {"Range": "bytes=0-0"})
        statuses.append(response.status)
    assert statuses[:5] == [206] * 5 and statuses[-1] == 503, statuses
    assert SLOW_DOWN.fullmatch(body.decode()), body
    assert response.getheader("Content-Type") == "application/xml"
    assert response.getheader("Content-Length") == str(len(body))

    # A refused upload has its body read away, so the same connection carries the next request.
    first_socket = connection.sock
    connection.request("PUT", OBJECT_PATH, body=b"x" * 100000)
    response = connection.getresponse()
    assert response.status == 503 and SLOW_DOWN.fullmatch(response.read().decode())
    time.sleep(1.1)
    response, body = get(connection, OBJECT_PATH, {"Range": "bytes=5-9"})
    assert response.status == 206 and body == OBJECT[5:10]
    assert connection.sock is first_socket

    stats = proxy.stats()
    refused = statuses.count(503) + 1
    assert stats["requests_refused"] == refused
    assert stats["requests_refused_by_reason"] == {"request_rate": refused, "concurrency": 0}
    assert stats["requests_forwarded"] == statuses.count(206) + 1
    connection.close()


def test_concurrency_above_limit_gets_slow_down(start_proxy):
    proxy = start_proxy("--max-concurrent", "1")
    status, _ = proxy.control("POST", f"config?bytes_per_second={MIB}")
    assert status == 200
    slow = proxy.connection()
    slow.request("GET", OBJECT_PATH)
    in_flight = slow.getresponse()
    assert in_flight.read(1000) == OBJECT[:1000]

    response, body = get(proxy.connection(), OBJECT_PATH, {"Range": "bytes=0-0"})
    assert response.status == 503 and SLOW_DOWN.fullmatch(body.decode())
    stats = proxy.stats()
    assert stats["requests_refused_by_reason"] == {"request_rate": 0, "concurrency": 1}
    assert stats["in_flight"] == 1
    slow.close()


def test_down_closes_connections_unanswered_until_up(start_proxy):
    proxy = start_proxy()
    status, stats = proxy.control("POST", "down")
    assert status == 200 and stats["down"]
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        get(proxy.connection(), OBJECT_PATH)
    assert proxy.stats()["requests_dropped_while_down"] == 1

    status, stats = proxy.control("POST", "up")
    assert status == 200 and not stats["down"]
    response, body = get(proxy.connection(), OBJECT_PATH, {"Range": "bytes=0-99"})
    assert response.status == 206 and body == OBJECT[:100]


def test_down_with_abort_cuts_bodies_in_flight(start_proxy):
    proxy = start_proxy("--bytes-per-second", str(MIB))
    connection = proxy.connection()
    connection.request("GET", OBJECT_PATH)
    response = connection.getresponse()
    assert response.read(100000) == OBJECT[:100000]
    status, _ = proxy.control("POST", "down?abort_in_flight=1")
    assert status == 200
    with pytest.raises(http.client.IncompleteRead):
        response.read()
    assert proxy.stats()["responses_aborted_by_down"] == 1
    proxy.control("POST", "up")


def test_stats_count_exactly_the_bytes_clients_received_and_reset_zeroes(start_proxy):
    proxy = start_proxy()
    connection = proxy.connection()
    received = {}
    for name, path, headers, method in [("full", OBJECT_PATH, {}, "GET"),
                                        ("range", OBJECT_PATH, {"Range": "bytes=7-106"}, "GET"),
                                        ("head", OBJECT_PATH, {}, "HEAD"),
                                        ("missing", "/bucket/missing", {}, "GET"),
                                        ("chunked", CHUNKED_PATH, {}, "GET")]:
        response, body = get(connection, path, headers, method)
        received[name] = (response.status, len(body))
    assert received["missing"] == (404, len(NOT_FOUND_BODY))
    total = sum(length for _, length in received.values())

    stats = proxy.stats()
    assert stats == proxy.stats() | {"seconds_since_start": stats["seconds_since_start"],
                                     "bytes_per_second": stats["bytes_per_second"]}
    assert stats["bytes_served"] == total
    assert sum(stats["bytes_per_second"]) == total
    assert stats["bytes_by_status_class"] == {"2xx": total - len(NOT_FOUND_BODY),
                                              "4xx": len(NOT_FOUND_BODY)}
    assert stats["requests_forwarded"] == 5
    assert stats["responses_by_status_class"] == {"2xx": 4, "4xx": 1}
    assert stats["requests_refused"] == 0 and stats["upstream_failures"] == 0

    status, stats = proxy.control("POST", "reset")
    assert status == 200
    assert stats["bytes_served"] == 0 and stats["requests_forwarded"] == 0
    assert sum(stats["bytes_per_second"]) == 0 and stats["max_bytes_in_any_1s_window"] == 0
    assert stats["responses_by_status_class"] == {} and stats["in_flight_peak"] == 0
    connection.close()


def test_client_gone_mid_body_leaves_proxy_serving(upstream, start_proxy):
    proxy = start_proxy("--bytes-per-second", str(2 * MIB))
    assert wait_for(lambda: upstream.open_connections == 0)
    client = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    client.sendall(f"GET {OBJECT_PATH} HTTP/1.1\r\nHost: s3\r\n\r\n".encode())
    received = b""
    while len(received) < 64 << 10:
        received += client.recv(65536)
    client.close()

    assert wait_for(lambda: proxy.stats()["client_aborts"] == 1)
    assert proxy.stats()["in_flight"] == 0
    # The upstream connection of the abandoned transfer was closed, not left half-read.
    assert wait_for(lambda: upstream.open_connections == 0)
    response, body = get(proxy.connection(), OBJECT_PATH, {"Range": "bytes=0-65535"})
    assert response.status == 206 and body == OBJECT[:65536]


def test_unreachable_upstream_gives_502(start_proxy):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    proxy = start_proxy(upstream_url=f"http://127.0.0.1:{closed_port}")
    response, body = get(proxy.connection(), OBJECT_PATH)
    assert response.status == 502 and body.startswith(b"upstream unreachable")
    assert response.getheader("Content-Type") == "text/plain"
    assert proxy.stats()["upstream_failures"] == 1


def test_control_and_header_limits_refuse_bad_input(start_proxy):
    proxy = start_proxy()
    assert proxy.control("POST", "config?bytes_per_second=-1")[0] == 400
    assert proxy.control("POST", "config?unknown_limit=1")[0] == 400
    assert proxy.control("GET", "config")[0] == 405
    assert proxy.control("GET", "nothing-here")[0] == 404
    status, stats = proxy.control("POST", "config?max_concurrent=3&bytes_per_second=1000")
    assert status == 200
    assert stats["limits"] == {"bytes_per_second": 1000, "max_requests_per_second": 0,
                               "max_concurrent": 3}

    response, _ = get(proxy.connection(), OBJECT_PATH, {"x-amz-meta-big": "x" * (70 << 10)})
    assert response.status == 431


def test_stats_file_is_written_and_rewritten_on_sigterm(start_proxy, tmp_path):
    stats_file = tmp_path / "stats.json"
    proxy = start_proxy("--stats-file", str(stats_file))
    response, body = get(proxy.connection(), OBJECT_PATH, {"Range": "bytes=0-999"})
    assert len(body) == 1000

    def file_total():
        try:
            return json.loads(stats_file.read_text())["bytes_served"] == 1000
        except (OSError, ValueError):
            return False

    assert wait_for(file_total, timeout=10)
    proxy.process.send_signal(signal.SIGTERM)
    assert proxy.process.wait(5) == 0
    assert json.loads(stats_file.read_text())["bytes_served"] == 1000
    assert [path.name for path in tmp_path.iterdir()] == ["stats.json"]


def load_proxy_module():
    spec = importlib.util.spec_from_file_location("throttling_proxy", PROXY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_token_bucket_grants_at_most_rate_plus_burst_in_any_window():
    module = load_proxy_module()
    now = [100.0]
    bucket = module.TokenBucket(1000, clock=lambda: now[0])
    assert bucket.slice_bytes() == 50
    granted = []  # times of each 50-byte grant over 10 simulated seconds of greedy takers
    while now[0] < 110.0:
        wait = bucket.try_take(50, now[0])
        if wait == 0:
            granted.append(now[0])
        else:
            now[0] += wait
    for index, start in enumerate(granted):
        in_window = sum(1 for time_granted in granted[index:] if time_granted < start + 1.0)
        assert in_window * 50 <= 1000 * 1.05 + 1e-6
    assert 10 * 1000 <= len(granted) * 50 <= 10 * 1000 + 50

    bucket.set_rate(0)
    assert bucket.try_take(10 * MIB, now[0]) == 0
