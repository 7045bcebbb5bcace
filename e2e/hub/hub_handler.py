"""The test Hub's routes: revision, tree, resolve, resolve-cache, the /_test/ hooks, and the
ModelScope API under /api/v1/ (modelscope_handler.py).

Status codes and headers are the ones huggingface_hub (the version pinned in
requirements-test.txt) reads: get_hf_file_metadata in its file_download.py, hf_raise_for_status
and the backoff in utils/_http.py, the pagination in utils/_pagination.py.
"""

import base64
import json
import time
import urllib.parse

from loopback_http import BoundedHandler
from modelscope_handler import ModelScopeApi
from repo_store import FileEntry

INVALID_TOKEN_MESSAGE = "Invalid credentials in Authorization header"  # the client matches it


class HubError(Exception):
    """An error answer; raised inside a route so every check reads as one line."""

    def __init__(self, status: int, message: str, code: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.headers = status, code, headers or {}


class HubHandler(BoundedHandler):
    server: "hub_server.HubServer"  # noqa: F821 (a name for readers; no import cycle)

    def do_GET(self):
        self._dispatch()

    do_HEAD = do_GET

    def do_POST(self):
        self._dispatch()

    # ---- routing ----

    def _dispatch(self) -> None:
        raw_path, _, query = self.path.partition("?")
        segments = raw_path.split("/")[1:]  # split before unquoting: a revision may hold %2F
        self.query = urllib.parse.parse_qs(query)
        kind, route = self._route(segments)
        self.request_kind = kind
        try:
            if self.command == "POST" and kind != "admin":
                self.close_connection = True  # its body stays unread
                raise HubError(405, "method not allowed")
            if self.command != "POST" and self.refuse_body():
                return
            route(segments)
        except HubError as error:
            headers = dict(error.headers)
            if error.code:
                headers["X-Error-Code"] = error.code
            headers["X-Error-Message"] = str(error)
            self.send_json(error.status, {"error": str(error)}, headers)
        finally:
            self.finish_request_log(kind)

    def _route(self, segments: list[str]):
        modelscope = ModelScopeApi(self).route(segments)
        if modelscope is not None:
            return modelscope
        if segments[:2] == ["api", "models"] and len(segments) >= 6:
            if segments[4] == "revision":
                return "revision", self._revision
            if segments[4] == "tree":
                return "tree", self._tree
        if segments[:3] == ["api", "resolve-cache", "models"] and len(segments) >= 7:
            return "resolve_cache", self._resolve_cache
        if len(segments) >= 5 and segments[2] == "resolve":
            return "resolve", self._resolve
        if segments[:1] == ["_test"]:
            return "admin", self._admin
        return "other", self._not_found

    def _not_found(self, segments) -> None:
        raise HubError(404, "not found")

    # ---- the Hub's API ----

    def _revision(self, segments: list[str]) -> None:
        repo_id, commit = self._open(segments[2], segments[3], "/".join(segments[5:]))
        store = self.server.store
        files = store.files(repo_id, commit)
        with_blobs = self.query.get("blobs", [""])[0].lower() == "true"
        siblings = [self._sibling(store.entry(repo_id, commit, path), with_blobs) for path in files]
        modified = time.strftime("%Y-%m-%dT%H:%M:%S.000Z",
                                 time.gmtime(store.commit_time(repo_id, commit)))
        self.send_json(200, {
            "_id": commit[:24], "id": repo_id, "modelId": repo_id, "author": repo_id.split("/")[0],
            "sha": commit, "lastModified": modified, "createdAt": modified,
            "private": store.private_token(repo_id) is not None, "gated": False, "disabled": False,
            "downloads": 0, "likes": 0, "tags": [], "siblings": siblings,
        })

    def _tree(self, segments: list[str]) -> None:
        repo_id, commit = self._open(segments[2], segments[3], segments[5])
        store = self.server.store
        directory = urllib.parse.unquote("/".join(segments[6:])).strip("/")
        if not store.is_directory(repo_id, commit, directory):
            raise HubError(404, f"{directory} does not exist on {commit}", "EntryNotFound",
                           {"X-Repo-Commit": commit})
        recursive = self.query.get("recursive", [""])[0].lower() == "true"
        entries = self._tree_entries(repo_id, commit, directory, recursive)
        start = self._cursor_offset()
        page_size = self.server.tree_page_size
        headers = {}
        if start + page_size < len(entries):
            # The Hub's form: an absolute URL with the same query and an opaque cursor.
            query = {key: values[-1] for key, values in self.query.items() if key != "cursor"}
            query["cursor"] = base64.urlsafe_b64encode(str(start + page_size).encode()).decode()
            route = self.path.partition("?")[0]
            next_url = f"{self.server.url}{route}?{urllib.parse.urlencode(query)}"
            headers["Link"] = f'<{next_url}>; rel="next"'
        self.send_json(200, entries[start:start + page_size], headers)

    def _resolve(self, segments: list[str]) -> None:
        headers = self._admit_resolve()
        repo_id, commit = self._open(segments[0], segments[1], segments[3])
        path = urllib.parse.unquote("/".join(segments[4:]))
        entry = self._entry(repo_id, commit, path)
        headers |= {"X-Repo-Commit": commit, "ETag": f'"{entry.git_oid}"'}
        if entry.sha256 is None:
            # Small files: a relative redirect on the same origin, which the client follows.
            location = (f"/api/resolve-cache/models/{repo_id}/{commit}/"
                        f"{urllib.parse.quote(path)}")
            self.send_plain(307, f"Temporary Redirect. Redirecting to {location}",
                            headers | {"Location": location})
            return
        location = self.server.cdn.signed_url(repo_id, commit, path, self.server.url_ttl_s)
        self.send_plain(302, f"Found. Redirecting to {location}", headers | {
            "Location": location,
            "X-Linked-Etag": f'"{entry.sha256}"',
            "X-Linked-Size": str(entry.size),
        })

    def _resolve_cache(self, segments: list[str]) -> None:
        repo_id, commit = self._open(segments[3], segments[4], segments[5])
        path = urllib.parse.unquote("/".join(segments[6:]))
        entry = self._entry(repo_id, commit, path)
        with open(self.server.store.file_path(repo_id, commit, path), "rb") as content:
            data = content.read()
        self.send_bytes(data, {"ETag": f'"{entry.git_oid}"', "X-Repo-Commit": commit})

    # ---- checks shared by the routes ----

    def _open(self, org: str, name: str, revision: str) -> tuple[str, str]:
        """The repository id and the commit a request names, after the access check."""
        store = self.server.store
        repo_id = f"{urllib.parse.unquote(org)}/{urllib.parse.unquote(name)}"
        if not store.repo_exists(repo_id):
            raise HubError(404, "Repository not found", "RepoNotFound")
        token = store.private_token(repo_id)
        if token is not None:
            sent = self.headers.get("Authorization")
            if sent is None:
                # The Hub's answer to an anonymous request for a private repository carries no
                # error code: it does not say whether the repository exists.
                raise HubError(401, "Invalid username or password.")
            if sent != f"Bearer {token}":
                raise HubError(401, INVALID_TOKEN_MESSAGE)
        revision = urllib.parse.unquote(revision)
        commit = store.resolve(repo_id, revision)
        if commit is None:
            raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return repo_id, commit

    def _entry(self, repo_id: str, commit: str, path: str) -> FileEntry:
        if self.server.store.file_path(repo_id, commit, path) is None:
            raise HubError(404, "Entry not found", "EntryNotFound", {"X-Repo-Commit": commit})
        return self.server.store.entry(repo_id, commit, path)

    def _admit_resolve(self) -> dict[str, str]:
        """The rate-limit headers for this resolve; raises the 429 once the window is full."""
        limit = self.server.resolve_limit
        if limit is None:
            return {}
        admitted, remaining, reset_s = limit.admit()
        headers = limit.headers(remaining, reset_s)
        if not admitted:
            raise HubError(429, "You have exceeded the rate limit for resolvers",
                           headers=headers | {"Retry-After": str(reset_s)})
        return headers

    def _cursor_offset(self) -> int:
        cursor = self.query.get("cursor", [""])[0]
        if not cursor:
            return 0
        try:
            offset = int(base64.urlsafe_b64decode(cursor.encode()).decode())
        except ValueError:
            offset = -1
        if offset < 0:
            raise HubError(400, "invalid cursor")
        return offset

    def _tree_entries(self, repo_id: str, commit: str, directory: str, recursive: bool) -> list:
        store = self.server.store
        entries = []
        for path, is_directory in store.listing(repo_id, commit, directory, recursive):
            if is_directory:
                entries.append({"type": "directory", "oid": store.tree_id(repo_id, commit, path),
                                "size": 0, "path": path})
            else:
                entries.append(self._file_entry(store.entry(repo_id, commit, path)))
        return entries

    @staticmethod
    def _file_entry(entry: FileEntry) -> dict:
        described = {"type": "file", "oid": entry.git_oid, "size": entry.size, "path": entry.path}
        if entry.sha256 is not None:
            described["lfs"] = {"oid": entry.sha256, "size": entry.size,
                                "pointerSize": entry.pointer_size}
        return described

    @staticmethod
    def _sibling(entry: FileEntry, with_blobs: bool) -> dict:
        if not with_blobs:
            return {"rfilename": entry.path}
        sibling = {"rfilename": entry.path, "size": entry.size, "blobId": entry.git_oid}
        if entry.sha256 is not None:
            sibling["lfs"] = {"sha256": entry.sha256, "size": entry.size,
                              "pointerSize": entry.pointer_size}
        return sibling

    # ---- test hooks ----

    def _admin(self, segments: list[str]) -> None:
        action = "/".join(segments[1:])
        if action == "stats" and self.command in ("GET", "HEAD"):
            self.send_json(200, self.server.stats())
            return
        if self.command != "POST" or action not in ("move-ref", "cdn-503"):
            raise HubError(404, "no such test hook")
        body = self.read_body()
        if body is None:
            return
        try:
            request = json.loads(body or b"{}")
            if action == "move-ref":
                self.server.store.set_ref(request["repo"], request["ref"], request["commit"])
            else:
                self.server.cdn.fail_next(int(request["count"]))
        except (ValueError, KeyError, TypeError) as error:
            raise HubError(400, f"bad test hook request: {error}") from None
        self.send_json(200, {"ok": True})
