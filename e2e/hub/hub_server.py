#!/usr/bin/env python3
"""A local Hugging Face Hub for tests: model repositories from a directory, served the way the
real Hub serves them to huggingface_hub (revision, paged tree, resolve with redirects, errors,
rate limits), with LFS files behind a second origin that plays the CDN. The same origin also
serves the same repositories the way ModelScope serves them to its `modelscope` client
(modelscope_handler.py: /api/v1/...; pass the hub URL as its endpoint).

In a test:

    hub = LocalHub(tmp_path, lfs_threshold=4096, tree_page_size=3)
    commit = hub.store.add_commit("org/model", {"config.json": b"{}", "w.bin": big})
    with hub:
        snapshot_download("org/model", endpoint=hub.url, cache_dir=...)

As a process (prints {"hub": URL, "cdn": URL} as one line, runs until SIGTERM):

    python3 e2e/hub/hub_server.py --root DIR --port 0 --lfs-threshold 4096 \\
        --request-log FILE --resolve-limit 2 --resolve-window 5 --cdn-fail 3

--request-log appends one JSON line per request either origin answered (request_log.py: origin,
method, path with query, status, whether Authorization and Cookie came, Range), each line
written before its answer leaves;
--cdn-fail N makes the CDN's first N requests answer 503 (POST /_test/cdn-503 does it later).

Standard library only. Serves loopback only. The repository layout is in repo_store.py.
"""

import argparse
import json
import os
import signal
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # siblings, also when imported

from cdn_server import DEFAULT_URL_TTL_S, CdnServer  # noqa: E402
from hub_handler import HubHandler  # noqa: E402
from loopback_http import LoopbackServer  # noqa: E402
from rate_limit import FixedWindowLimit  # noqa: E402
from repo_store import RepoStore  # noqa: E402
from request_log import RequestLog  # noqa: E402

DEFAULT_LFS_THRESHOLD = 10 * 1024 * 1024  # git-lfs as the Hub configures it: binaries over 10 MB
DEFAULT_TREE_PAGE_SIZE = 1000  # the Hub's page size for a tree listing without expand
SECOND_LOOPBACK_HOST = "127.0.0.2"  # another host, not just another port, when the OS allows


class HubServer(LoopbackServer):
    """The Hub's origin; HubHandler reads its configuration from here."""

    origin = "hub"

    def __init__(self, host: str, port: int, store: RepoStore, cdn: CdnServer,
                 tree_page_size: int, resolve_limit: FixedWindowLimit | None, url_ttl_s: float,
                 log=None, request_log: RequestLog | None = None):
        super().__init__(host, port, HubHandler, log, request_log)
        self.store = store
        self.cdn = cdn
        self.tree_page_size = tree_page_size
        self.resolve_limit = resolve_limit
        self.url_ttl_s = url_ttl_s

    def stats(self) -> dict:
        """Request counts per kind ("tree", "resolve", "tree 200", ...) on both origins, and how
        many requests carried Authorization: the CDN's count must stay 0."""
        hub, cdn = self.snapshot(), self.cdn.snapshot()

        def with_authorization(requests):
            return sum(1 for request in requests if "authorization" in request["headers"])

        return {"hub": hub["counts"], "cdn": cdn["counts"],
                "hub_requests_with_authorization": with_authorization(hub["requests"]),
                "cdn_requests_with_authorization": with_authorization(cdn["requests"])}


class LocalHub:
    """The Hub and its CDN on ephemeral loopback ports, started and stopped together. With
    `request_log` (a file path), both write one line per request to it (request_log.py)."""

    def __init__(self, root, *, lfs_threshold: int = DEFAULT_LFS_THRESHOLD,
                 tree_page_size: int = DEFAULT_TREE_PAGE_SIZE,
                 resolve_limit: tuple[int, float] | None = None,
                 url_ttl_s: float = DEFAULT_URL_TTL_S, host: str = "127.0.0.1", port: int = 0,
                 cdn_host: str = SECOND_LOOPBACK_HOST, cdn_port: int = 0, log=None,
                 request_log: str | None = None):
        self.store = RepoStore(str(root), lfs_threshold)
        os.makedirs(self.store.root, exist_ok=True)
        self.request_log = RequestLog(request_log) if request_log else None
        try:
            try:
                self.cdn = CdnServer(cdn_host, cdn_port, self.store, log=log,
                                     request_log=self.request_log)
            except OSError:  # another port on the same host
                self.cdn = CdnServer(host, cdn_port, self.store, log=log,
                                     request_log=self.request_log)
            limit = FixedWindowLimit(*resolve_limit) if resolve_limit else None
            try:
                self.hub = HubServer(host, port, self.store, self.cdn, tree_page_size, limit,
                                     url_ttl_s, log, self.request_log)
            except BaseException:
                self.cdn.server_close()
                raise
        except BaseException:
            if self.request_log is not None:
                self.request_log.close()
            raise

    @property
    def url(self) -> str:
        return self.hub.url

    @property
    def cdn_url(self) -> str:
        return self.cdn.url

    def start(self) -> "LocalHub":
        self.cdn.start()
        self.hub.start()
        return self

    def stop(self) -> None:
        """Stops both servers and waits for every request in flight, then closes the log."""
        self.hub.stop()
        self.cdn.stop()
        if self.request_log is not None:
            self.request_log.close()

    def __enter__(self) -> "LocalHub":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def move_ref(self, repo_id: str, ref: str, commit: str) -> None:
        self.store.set_ref(repo_id, ref, commit)

    def fail_cdn(self, count: int) -> None:
        self.cdn.fail_next(count)

    def stats(self) -> dict:
        return self.hub.stats()

    def requests(self, origin: str) -> list[dict]:
        """Every recorded request to "hub" or "cdn": kind, status, method, path, headers."""
        return (self.hub if origin == "hub" else self.cdn).snapshot()["requests"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, help="the repositories (layout: repo_store.py)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: an ephemeral port")
    parser.add_argument("--cdn-host", default=SECOND_LOOPBACK_HOST)
    parser.add_argument("--cdn-port", type=int, default=0)
    parser.add_argument("--lfs-threshold", type=int, default=DEFAULT_LFS_THRESHOLD,
                        help="files of at least this many bytes are LFS files behind the CDN")
    parser.add_argument("--tree-page-size", type=int, default=DEFAULT_TREE_PAGE_SIZE)
    parser.add_argument("--resolve-limit", type=int, help="resolve requests per window")
    parser.add_argument("--resolve-window", type=float, default=300.0, help="seconds")
    parser.add_argument("--url-ttl", type=float, default=DEFAULT_URL_TTL_S,
                        help="seconds a signed CDN URL stays valid")
    parser.add_argument("--request-log", metavar="FILE",
                        help="append one JSON line per request answered (request_log.py)")
    parser.add_argument("--cdn-fail", type=int, default=0, metavar="N",
                        help="the CDN answers its first N requests with 503")
    args = parser.parse_args(argv)

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    limit = (args.resolve_limit, args.resolve_window) if args.resolve_limit is not None else None
    hub = LocalHub(args.root, lfs_threshold=args.lfs_threshold,
                   tree_page_size=args.tree_page_size, resolve_limit=limit,
                   url_ttl_s=args.url_ttl, host=args.host, port=args.port,
                   cdn_host=args.cdn_host, cdn_port=args.cdn_port, log=log,
                   request_log=args.request_log)
    hub.fail_cdn(args.cdn_fail)
    stopping = threading.Event()
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signal_number, lambda *_: stopping.set())
    hub.start()
    print(json.dumps({"hub": hub.url, "cdn": hub.cdn_url}), flush=True)
    log(f"event=hub_started hub={hub.url} cdn={hub.cdn_url} root={hub.store.root}")
    while not stopping.wait(0.1):  # a timed wait, so the signal handler gets to run
        pass
    hub.stop()
    log("event=hub_stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
