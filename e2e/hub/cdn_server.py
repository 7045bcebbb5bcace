"""The test Hub's "CDN": a second origin that serves LFS files behind signed, expiring URLs.

The Hub's resolve (and ModelScope's file endpoint) answers 302 to a URL made here. Like the
real CDN it trusts only the signature in the query, never a token, so a test can assert the
client sent no Authorization header to it (every request's headers are recorded). It can also
answer a burst of 503s, the real CDN's throttling answer, for tests of a client's backoff.
"""

import hashlib
import hmac
import secrets
import threading
import time
import urllib.parse

from loopback_http import BoundedHandler, LoopbackServer
from repo_store import RepoStore

DEFAULT_URL_TTL_S = 3600


class CdnServer(LoopbackServer):
    origin = "cdn"

    def __init__(self, host: str, port: int, store: RepoStore, clock=time.time, log=None,
                 request_log=None):
        super().__init__(host, port, CdnHandler, log, request_log)
        self.store = store
        self.clock = clock
        self._key = secrets.token_bytes(32)  # per instance: a URL from another run is forged
        self._failures_left = 0
        self._failures_lock = threading.Lock()

    def signed_url(self, repo_id: str, commit: str, path: str,
                   ttl_s: float = DEFAULT_URL_TTL_S) -> str:
        resource = f"/{repo_id}/{commit}/{urllib.parse.quote(path)}"
        expires = int(self.clock() + ttl_s)
        query = urllib.parse.urlencode({"expires": expires,
                                        "signature": self._signature(resource, expires)})
        return f"{self.url}{resource}?{query}"

    def fail_next(self, count: int) -> None:
        """The next `count` requests answer 503 with Retry-After, as a throttled CDN does."""
        with self._failures_lock:
            self._failures_left = max(count, 0)

    def take_failure(self) -> bool:
        with self._failures_lock:
            if self._failures_left == 0:
                return False
            self._failures_left -= 1
            return True

    def signature_valid(self, resource: str, expires: str, signature: str) -> bool:
        if not expires.isdigit() or int(expires) < self.clock():
            return False
        return hmac.compare_digest(self._signature(resource, int(expires)), signature)

    def _signature(self, resource: str, expires: int) -> str:
        return hmac.new(self._key, f"{resource}\n{expires}".encode(), hashlib.sha256).hexdigest()


class CdnHandler(BoundedHandler):
    server: CdnServer

    request_kind = "cdn"

    def do_GET(self):
        try:
            self._serve()
        finally:
            self.finish_request_log("cdn")

    do_HEAD = do_GET

    def _serve(self) -> None:
        if self.refuse_body():
            return
        if self.server.take_failure():
            self.send_plain(503, "slow down", {"Retry-After": "1"})
            return
        resource, _, query = self.path.partition("?")
        params = urllib.parse.parse_qs(query)
        expires = params.get("expires", [""])[0]
        signature = params.get("signature", [""])[0]
        if not self.server.signature_valid(resource, expires, signature):
            self.send_plain(403, "expired or forged signature")
            return
        parts = urllib.parse.unquote(resource).lstrip("/").split("/", 3)
        if len(parts) != 4:
            self.send_plain(404, "not found")
            return
        org, name, commit, path = parts
        store = self.server.store
        repo_id = f"{org}/{name}"
        disk_path = store.file_path(repo_id, commit, path) if store.repo_exists(repo_id) else None
        if disk_path is None:
            self.send_plain(404, "not found")
            return
        entry = store.entry(repo_id, commit, path)
        with open(disk_path, "rb") as content:
            data = content.read()
        # Like the real CDN: the ETag is the content's sha256, the name is in Content-Disposition.
        self.send_bytes(data, {
            "ETag": f'"{entry.sha256 or entry.git_oid}"',
            "Content-Disposition": f'inline; filename="{path.rsplit("/", 1)[-1]}"',
        })
