"""The three binaries, told to stop (SIGTERM) while the API server throttles them, exit within a
second instead of waiting out Retry-After (up to a minute, three times over).

A loopback HTTP server plays the API server: in "storm" every request gets 429 with
Retry-After: 50; in "after-connect" /version answers, so the binary gets past start-up, and
every other request gets the 429. Each binary runs as it ships (its config file, its flags),
with the build directory given by MODELPLANE_BINARY_DIR.

    MODELPLANE_BINARY_DIR=build/dev .venv/bin/python -m pytest -q tests/e2e/test_stop_during_throttling.py
"""

import http.server
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

BINARY_DIR = Path(os.environ.get("MODELPLANE_BINARY_DIR", "build/dev"))
BINARIES = {
    "operator": BINARY_DIR / "operator" / "modelplane-operator",
    "scheduler-extender": BINARY_DIR / "scheduler-extender" / "modelplane-scheduler-extender",
    "node-agent": BINARY_DIR / "node-agent" / "modelplane-node-agent",
}
# What "at once" means here: the stop to the process's exit, on a loaded two-core machine with
# sanitizers. The wait it replaces is 50 s.
EXIT_WITHIN_SECONDS = 1.0
THROTTLED = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "reason": "TooManyRequests", "message": "too many requests",
                        "code": 429}).encode()


class ThrottlingApiServer:
    def __init__(self, answer_version):
        self.throttled = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                if answer_version and self.path == "/version":
                    body = json.dumps({"gitVersion": "v1.35.4"}).encode()
                    self.send_response(200)
                else:
                    with owner._lock:
                        owner.throttled += 1
                    body = THROTTLED
                    self.send_response(429)
                    self.send_header("Retry-After", "50")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def write_configs(directory, server_url):
    kubeconfig = directory / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        "clusters: [{name: c, cluster: {server: '%s'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
        "current-context: x\n" % server_url)
    common = ("admin: {address: 127.0.0.1, port: 0}\n"
              "kubernetes: {kubeconfig: %s}\n" % kubeconfig)
    configs = {
        "operator": common + "leaderElection: {namespace: default}\n",
        "scheduler-extender": common + "server: {address: 127.0.0.1, port: 0}\n",
        "node-agent": common + "nodeName: node-a\ncacheRoot: %s\npeers: {enabled: false}\n"
                               % (directory / "cache"),
    }
    paths = {}
    for component, text in configs.items():
        path = directory / (component + ".yaml")
        path.write_text(text)
        paths[component] = path
    return paths


@pytest.mark.parametrize("answer_version", [False, True], ids=["storm", "after-connect"])
@pytest.mark.parametrize("component", sorted(BINARIES))
def test_stops_within_a_second_while_throttled(tmp_path, component, answer_version):
    binary = BINARIES[component]
    if not binary.exists():
        pytest.skip("%s not built" % binary)
    server = ThrottlingApiServer(answer_version)
    try:
        configs = write_configs(tmp_path, server.url)
        log_path = tmp_path / (component + ".log")
        with open(log_path, "wb") as log:
            process = subprocess.Popen([str(binary), "--config", str(configs[component])],
                                       stdout=log, stderr=subprocess.STDOUT)
        try:
            # Throttled at least once: the binary is now in a Retry-After wait (or about to be).
            deadline = time.monotonic() + 30
            while server.throttled == 0 and time.monotonic() < deadline:
                assert process.poll() is None, log_path.read_text()
                time.sleep(0.01)
            assert server.throttled > 0, "never asked the API server: " + log_path.read_text()
            time.sleep(0.2)  # into the wait
            assert process.poll() is None, log_path.read_text()
            stopped_at = time.monotonic()
            process.send_signal(signal.SIGTERM)
            try:
                code = process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                code = None
            took = time.monotonic() - stopped_at
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        log = log_path.read_text()
        print("%s %s: exited %.3f s after SIGTERM" % (component, "after-connect" if answer_version
                                                    else "storm", took))
        assert code is not None, "still running 30 s after SIGTERM:\n" + log
        assert took <= EXIT_WITHIN_SECONDS, "exited %.2f s after SIGTERM:\n%s" % (took, log)
        assert code == 0, "exit code %s after a stop it was told to make:\n%s" % (code, log)
    finally:
        server.close()
