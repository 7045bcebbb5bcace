"""The test Hub's ModelScope API: what the real `modelscope` client calls to download a model,
served from the same RepoStore as the Hugging Face routes (the same repositories and commits),
on the same origin (the paths do not overlap: everything here is under /api/v1/).

Read from the client pinned in requirements-test.txt (modelscope 1.40.2, whose hub code now lives
in modelscope_hub 0.5.1: _legacy_api.py, _download.py, config.py, errors.py). Facts marked
"third-party" come from other clients' notes of the live service, not from ModelScope.

Endpoint and token (client side)
- The base URL is `endpoint=` or MODELSCOPE_ENDPOINT; MODELSCOPE_DOMAIN is the deprecated spelling.
  http://127.0.0.1:PORT is used as given (only a bare host gets https://), and a configured
  endpoint is trusted without probing (unset, the client probes modelscope.cn, then .ai).
  model_file_download(revision=None) looks the default revision up with a HubApi built without
  `endpoint=`, so a local test must set MODELSCOPE_ENDPOINT or pass the revision.
- The token (`token=`, MODELSCOPE_API_TOKEN, else ~/.modelscope/credentials) travels both as
  `Authorization: Bearer <token>` and as cookie `m_session_id=<token>` (jar bound to the
  endpoint's host). requests drops Authorization on a redirect to another host and the jar keeps
  the cookie to its host, so neither reaches the CDN host; the request log shows it. Either one
  opens a private repository here.

The envelope: JSON answers are {"Code": 200, "Data": ..., "Message": "success",
"RequestId": "<hex>", "Success": true}. Errors are HTTP 4xx with {"Code": 10010205001,
"Data": null, "Message": "...", "RequestId": ..., "Success": false}; the client maps the HTTP
status (401 AuthenticationError, 403 PermissionDeniedError, 404 NotExistError, 429 RateLimitError
with Retry-After, 5xx ServerError, which it retries) unless Code is one of the few business codes it
knows. 10010205001 is the code the service was seen giving for a missing model (third-party bug
report); which codes it gives elsewhere is not known, so every error here uses it. Branch on the
status, not the code.

Endpoints ({owner}/{name} in the path; query names are case-sensitive, values form-encoded)
- GET /api/v1/models/{owner}/{name}/repo/files?Revision=R&Recursive=True&Root=DIR
  The listing, not paged: Data {"Files": [...]}, each entry Path, Name, Type ("blob" or "tree"),
  Size, Sha256 (of the content, for every file, LFS or not, as the service lists it; absent for
  trees), IsLFS, Mode ("33188" file, "16384" folder), Revision, CommittedDate (Unix seconds) and
  InCheck (false). Recursive absent means false here; Root absent means the top. The service
  silently truncates a listing at 3000 entries (the client then lists per Root); not here.
  A revision that does not exist answers 200 with "Files": null, not an error (third-party,
  measured on modelscope.cn), and the 1.40.2 client reads that as an empty repository:
  snapshot_download returns an empty folder. A Root that does not exist answers 404.
- GET|HEAD /api/v1/models/{owner}/{name}/repo?Revision=R&FilePath=P
  One file. Small files: 200 with the bytes, 206 for a Range. LFS files (at or above the store's
  threshold): 302 to a signed, expiring URL on the CDN origin, which the client follows (requests'
  default) and which honours Range. A missing file and a missing revision give the same 404.
  The client takes the listing's Sha256 and Size and checks both after the download (size also
  from Content-Length / Content-Range); it resumes a cut transfer with Range, fetches files over
  MODELSCOPE_DOWNLOAD_PARALLEL_THRESHOLD_MB (default 500) in ranges when
  MODELSCOPE_DOWNLOAD_PARALLEL_WORKERS > 1, and retries a 503 from the CDN (after 1 s, up to
  MODELSCOPE_DOWNLOAD_MAX_RETRIES = 5 times) by asking this endpoint again.
  Where this differs: the client's comments say the service ignores Range on files it serves
  without a redirect (a 200 with the whole file); here they honour it, so a client's fallback
  for a 200 to a Range request is not exercised by this server.
- GET /api/v1/models/{owner}/{name}/revisions[?EndTime=T]
  Data {"RevisionMap": {"Branches": [{"Revision": name, "CommitId": commit, "CreatedAt": secs}],
  "Tags": []}}. The store does not tell tags from branches, so every ref is listed as a branch;
  EndTime (which selects tags) is accepted and ignored. CommitId is what third-party clients read
  for a branch's commit; the modelscope client reads only Revision and CreatedAt.
- GET /api/v1/models/{owner}/{name}
  Model info: Data {"Id", "Name", "Path" (the owner), "Visibility": 5 public, 1 private}. The
  client calls it only to tell a missing Root from a missing model.
Any other /api/v1/ path answers the 404 envelope (the client probes
/api/v1/repos/internalAccelerationInfo for its cloud region with a 0.2 s timeout first).

What a commit is: a git commit id, 40 hex digits. Revision takes a branch, a tag or a commit id
(the client documents "Branch, tag or commit SHA"); 1.40.2 sends snapshot_download(revision=ID)
as is (older clients checked it against branches and tags and refused a commit id: modelscope
issue 1386) and caches under snapshots/<revision as given>. Third-party: a listing pinned to a
commit id served its files, and an older commit id of the same repository later listed none, so
on the service a commit may stop being served; here every commit stays served. Absent, Revision
means "master", ModelScope's default branch ("main" is the Hub's; on the service Revision=main
is an unknown revision, third-party). A repository made for the Hugging Face side needs a
"master" ref to be found here without a revision. An entry's Revision is, on the service, the
last commit that changed that file (entries of one listing differ); here it is the listed
commit, because the store keeps snapshots, not history. Do not read it as the snapshot's
commit: ask /revisions for CommitId.

Private repositories (repo.json has a token): without that token, by header or cookie, every
endpoint answers the 404 of a missing repository. The service's answer is not documented; a
wrong token is answered as no token (third-party), and the client's message for a refused
request without a token (modelscope/hub/errors.py) is "may not exist or may be private".
"""

import http.cookies
import urllib.parse
import uuid

MISSING_CODE = 10010205001  # the service's code for a missing model (see the module docstring)
DEFAULT_REVISION = "master"
_FILE_MODE, _FOLDER_MODE = "33188", "16384"  # git's 100644 and 040000, written in decimal


class ModelScopeError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def envelope(data, *, code: int = 200, message: str = "success") -> dict:
    return {"Code": code, "Data": data, "Message": message, "RequestId": uuid.uuid4().hex,
            "Success": code == 200}


class ModelScopeApi:
    """The ModelScope endpoints for one request of a hub_handler.HubHandler: reads its query,
    headers and server (store, CDN), answers through it."""

    def __init__(self, handler):
        self.request = handler
        self.store = handler.server.store

    def route(self, segments: list[str]):
        """(kind, route) for a path under /api/v1/, or None for any other path."""
        if segments[:2] != ["api", "v1"]:
            return None
        routes = {(): ("modelscope_model", self._model),
                  ("revisions",): ("modelscope_revisions", self._revisions),
                  ("repo", "files"): ("modelscope_files", self._files),
                  ("repo",): ("modelscope_file", self._file)}
        found = (routes.get(tuple(segments[5:]))
                 if segments[2:3] == ["models"] and len(segments) >= 5 else None)
        kind, route = found or ("modelscope_other", None)

        def answer(_segments) -> None:
            try:
                if route is None:
                    raise ModelScopeError(404, "not found")
                route(self._repo_id(segments[3], segments[4]))
            except ModelScopeError as error:
                self.request.send_json(error.status, envelope(None, code=MISSING_CODE,
                                                              message=str(error)))
        return kind, answer

    # ---- the endpoints ----

    def _files(self, repo_id: str) -> None:
        store = self.store
        commit = store.resolve(repo_id, self._param("Revision", DEFAULT_REVISION))
        if commit is None:
            self.request.send_json(200, envelope({"Files": None}))  # the service's, not an error
            return
        root = self._param("Root", "").strip("/")
        if not store.is_directory(repo_id, commit, root):
            raise ModelScopeError(404, f"{root} does not exist in {repo_id}")
        recursive = self._param("Recursive", "false").lower() == "true"
        committed = int(store.commit_time(repo_id, commit))
        files = [self._entry(repo_id, commit, path, is_directory, committed)
                 for path, is_directory in store.listing(repo_id, commit, root, recursive)]
        self.request.send_json(200, envelope({"Files": files}))

    def _file(self, repo_id: str) -> None:
        store = self.store
        path = self._param("FilePath", "")
        commit = store.resolve(repo_id, self._param("Revision", DEFAULT_REVISION))
        if commit is None or store.file_path(repo_id, commit, path) is None:
            raise ModelScopeError(404, f"{path} not found in {repo_id}")  # the same for both
        if store.entry(repo_id, commit, path).sha256 is not None:
            server = self.request.server
            location = server.cdn.signed_url(repo_id, commit, path, server.url_ttl_s)
            self.request.send_plain(302, f"Found. Redirecting to {location}",
                                    {"Location": location})
            return
        with open(store.file_path(repo_id, commit, path), "rb") as content:
            self.request.send_bytes(content.read(), {})

    def _revisions(self, repo_id: str) -> None:
        store = self.store
        branches = [{"Revision": ref, "CommitId": commit,
                     "CreatedAt": int(store.commit_time(repo_id, commit))}
                    for ref, commit in sorted(store.refs(repo_id).items())]
        self.request.send_json(200, envelope({"RevisionMap": {"Branches": branches,
                                                              "Tags": []}}))

    def _model(self, repo_id: str) -> None:
        owner, name = repo_id.split("/")
        private = self.store.private_token(repo_id) is not None
        # A stable number: the service's Id is an integer, and a client may key on it.
        model_id = int(uuid.uuid5(uuid.NAMESPACE_URL, repo_id).hex[:8], 16)
        self.request.send_json(200, envelope({"Id": model_id, "Name": name, "Path": owner,
                                              "Visibility": 1 if private else 5}))

    # ---- checks shared by the endpoints ----

    def _repo_id(self, owner: str, name: str) -> str:
        """The repository a request names, after the access check: a private one without its
        token is as missing as one that does not exist."""
        store = self.store
        repo_id = f"{urllib.parse.unquote(owner)}/{urllib.parse.unquote(name)}"
        if not store.repo_exists(repo_id):
            raise ModelScopeError(404, f"model {repo_id} not found")
        token = store.private_token(repo_id)
        if token is not None and token not in self._tokens_sent():
            raise ModelScopeError(404, f"model {repo_id} not found")
        return repo_id

    def _tokens_sent(self) -> set[str]:
        sent = set()
        authorization = self.request.headers.get("Authorization", "")
        if authorization.startswith("Bearer "):
            sent.add(authorization[len("Bearer "):])
        cookies = http.cookies.SimpleCookie()
        try:
            cookies.load(self.request.headers.get("Cookie", ""))
        except http.cookies.CookieError:
            pass  # an unreadable cookie header sends no token
        if "m_session_id" in cookies:
            sent.add(cookies["m_session_id"].value)
        return sent

    def _param(self, name: str, default: str) -> str:
        return self.request.query.get(name, [default])[-1]

    def _entry(self, repo_id: str, commit: str, path: str, is_directory: bool,
               committed: int) -> dict:
        described = {"Name": path.rsplit("/", 1)[-1], "Path": path, "Revision": commit,
                     "CommittedDate": committed, "InCheck": False}
        if is_directory:
            return described | {"Type": "tree", "Size": 0, "IsLFS": False, "Mode": _FOLDER_MODE}
        store = self.store
        entry = store.entry(repo_id, commit, path)
        return described | {"Type": "blob", "Size": entry.size, "IsLFS": entry.sha256 is not None,
                            "Mode": _FILE_MODE,
                            "Sha256": store.content_sha256(repo_id, commit, path)}
