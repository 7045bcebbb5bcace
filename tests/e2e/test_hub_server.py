"""e2e/hub/hub_server.py against the real huggingface_hub client (the version pinned in
requirements-test.txt): what the client downloads, which requests it makes, which errors it
raises. The test Hub is only worth as much as the client's agreement with it, so every
assertion here is about the client's behaviour or what reached the servers, never about the
server's code.
"""

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import huggingface_hub
import pytest
from huggingface_hub import HfApi, RepoFile, RepoFolder, hf_hub_download, snapshot_download
from huggingface_hub.errors import (EntryNotFoundError, HfHubHTTPError, RepositoryNotFoundError,
                                    RevisionNotFoundError)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "e2e", "hub"))
import hub_server  # noqa: E402

LFS_THRESHOLD = 4096  # small, so LFS files stay a few KiB to a MiB
TEST_DEADLINE_S = 30
REPO = "acme/tiny-model"
TOKEN = "hf_test_private_token"


def model_files(seed: int) -> dict[str, bytes]:
    """Nested folders, small files (resolve-cache) and LFS files (the CDN)."""
    def pseudo_random(size: int) -> bytes:
        return bytes((index * 131 + seed * 17 + index // 7) % 256 for index in range(size))
    return {
        "config.json": json.dumps({"seed": seed}).encode(),
        "README.md": b"# tiny model\n",
        "tokenizer/vocab.txt": b"a\nb\nc\n" * seed,
        "tokenizer/merges/merges.txt": b"a b\n",
        "weights/model-00001-of-00002.safetensors": pseudo_random(1024 * 1024),
        "weights/model-00002-of-00002.safetensors": pseudo_random(LFS_THRESHOLD + seed),
        "weights/extra/adapter.bin": pseudo_random(6000),
    }


@pytest.fixture(autouse=True)
def deadline():
    """Each test ends within seconds even if a server or the client hangs."""
    def expired(*_):
        raise TimeoutError(f"test ran past {TEST_DEADLINE_S}s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TEST_DEADLINE_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def start_hub(tmp_path):
    """Starts a LocalHub on ephemeral loopback ports; stops it (and the client's pooled
    connections to it) after the test."""
    started = []
    huggingface_hub.utils.disable_progress_bars()

    def start(**options) -> hub_server.LocalHub:
        options = {"lfs_threshold": LFS_THRESHOLD, "tree_page_size": 3, **options}
        hub = hub_server.LocalHub(tmp_path / f"repos{len(started)}", **options).start()
        started.append(hub)
        return hub
    yield start
    huggingface_hub.close_session()
    for hub in started:
        hub.stop()


def read_tree(folder) -> dict[str, bytes]:
    found = {}
    for directory, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, folder).replace(os.sep, "/")] = open(path, "rb").read()
    return found


def git_blob_id(data: bytes) -> str:
    """What `git hash-object` prints, computed here rather than by the server's code."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def head_without_redirect(url: str, headers: dict[str, str] | None = None):
    """The resolve answer itself (urllib would follow the redirect)."""
    class Keep(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None
    opener = urllib.request.build_opener(Keep)
    try:
        return opener.open(urllib.request.Request(url, method="HEAD", headers=headers or {}),
                           timeout=5)
    except urllib.error.HTTPError as answer:
        return answer


def test_snapshot_download_is_byte_identical_through_the_paged_tree(start_hub, tmp_path):
    hub = start_hub()
    files = model_files(seed=1)
    commit = hub.store.add_commit(REPO, files)
    folder = snapshot_download(REPO, revision="main", endpoint=hub.url, token=False,
                               cache_dir=tmp_path / "cache")
    assert read_tree(folder) == files
    stats = hub.stats()
    assert stats["hub"]["tree 200"] > 1  # the client followed the Link header's cursor
    assert stats["cdn"]["cdn 200"] == 3  # every LFS file came from the CDN, once
    # The client names blobs by the digest the Hub gives it: sha256 (X-Linked-Etag) for LFS
    # files, the git blob SHA-1 (ETag) for small ones.
    blobs = set(os.listdir(tmp_path / "cache" / "models--acme--tiny-model" / "blobs"))
    lfs = {name for name in blobs if len(name) == 64}
    assert len(lfs) == 3 and len(blobs - lfs) == 4
    assert os.path.basename(folder) == commit


def test_the_tree_carries_git_and_lfs_digests_as_the_hub_does(start_hub):
    hub = start_hub()
    files = model_files(seed=8)
    commit = hub.store.add_commit(REPO, files)
    api = HfApi(endpoint=hub.url, token=False)
    listed = {entry.path: entry for entry in api.list_repo_tree(REPO, revision=commit,
                                                                 recursive=True)}
    assert {path for path, entry in listed.items() if isinstance(entry, RepoFile)} == set(files)
    assert {path for path, entry in listed.items() if isinstance(entry, RepoFolder)} == {
        "tokenizer", "tokenizer/merges", "weights", "weights/extra"}
    for path, data in files.items():
        entry = listed[path]
        assert entry.size == len(data)
        if len(data) < LFS_THRESHOLD:
            assert entry.lfs is None and entry.blob_id == git_blob_id(data)
        else:  # the git id is the pointer's, the sha256 is the content's
            sha256 = hashlib.sha256(data).hexdigest()
            pointer = (f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\n"
                       f"size {len(data)}\n").encode()
            assert entry.lfs.sha256 == sha256 and entry.lfs.pointer_size == len(pointer)
            assert entry.blob_id == git_blob_id(pointer)
    children = [entry.path for entry in api.list_repo_tree(REPO, path_in_repo="weights",
                                                           revision=commit)]
    assert sorted(children) == ["weights/extra", "weights/model-00001-of-00002.safetensors",
                                "weights/model-00002-of-00002.safetensors"]


def test_the_client_resolves_the_servers_commit_and_old_commits_survive(start_hub, tmp_path):
    hub = start_hub()
    old_files, new_files = model_files(seed=1), model_files(seed=2)
    old = hub.store.add_commit(REPO, old_files)
    new = hub.store.add_commit(REPO, new_files, branch=None)
    assert HfApi(endpoint=hub.url, token=False).model_info(REPO, revision="main").sha == old

    # Moved the way a test in another process would: the /_test/ hook.
    request = urllib.request.Request(f"{hub.url}/_test/move-ref", method="POST", data=json.dumps(
        {"repo": REPO, "ref": "main", "commit": new}).encode())
    assert urllib.request.urlopen(request, timeout=5).status == 200

    latest = snapshot_download(REPO, revision="main", endpoint=hub.url, token=False,
                               cache_dir=tmp_path / "cache")
    assert os.path.basename(latest) == new and read_tree(latest) == new_files
    ref = tmp_path / "cache" / "models--acme--tiny-model" / "refs" / "main"
    assert ref.read_text() == new
    pinned = snapshot_download(REPO, revision=old, endpoint=hub.url, token=False,
                               cache_dir=tmp_path / "fresh-cache")
    assert read_tree(pinned) == old_files


@pytest.mark.parametrize("private", [False, True], ids=["public", "private"])
def test_lfs_files_come_from_the_cdn_without_the_token(start_hub, tmp_path, private):
    hub = start_hub()
    hub.store.create_repo(REPO, private_token=TOKEN if private else None)
    files = model_files(seed=3)
    hub.store.add_commit(REPO, files)
    name = "weights/model-00001-of-00002.safetensors"
    path = hf_hub_download(REPO, name, endpoint=hub.url, token=TOKEN,
                           cache_dir=tmp_path / "cache")
    assert open(path, "rb").read() == files[name]

    cdn_host = hub.cdn_url.split("//")[1].split(":")[0]
    assert hub.url != hub.cdn_url and (cdn_host == "127.0.0.2" or hub.url[:-6] != hub.cdn_url)
    resolve = [r for r in hub.requests("hub") if r["kind"] == "resolve"]
    assert [r["status"] for r in resolve] == [302]
    assert resolve[0]["headers"].get("authorization") == f"Bearer {TOKEN}"
    cdn = hub.requests("cdn")
    assert [r["status"] for r in cdn] == [200]
    assert all("authorization" not in r["headers"] for r in cdn)
    assert hub.stats()["cdn_requests_with_authorization"] == 0


def test_a_private_repo_refuses_a_missing_or_wrong_token(start_hub, tmp_path):
    hub = start_hub()
    hub.store.create_repo(REPO, private_token=TOKEN)
    hub.store.add_commit(REPO, model_files(seed=4))
    # Over http:// a 401 stays a plain HfHubHTTPError: the client maps a 401 without an error
    # code to RepositoryNotFoundError only for https:// URLs (REPO_API_REGEX in utils/_http.py).
    for call in (lambda token: snapshot_download(REPO, endpoint=hub.url, token=token,
                                                 cache_dir=tmp_path / "cache"),
                 lambda token: hf_hub_download(REPO, "config.json", endpoint=hub.url,
                                               token=token, cache_dir=tmp_path / "cache")):
        with pytest.raises(HfHubHTTPError) as anonymous:
            call(False)
        assert anonymous.value.response.status_code == 401
        assert "X-Error-Code" not in anonymous.value.response.headers
        with pytest.raises(HfHubHTTPError) as wrong:
            call("hf_wrong")
        assert wrong.value.response.status_code == 401
        assert wrong.value.server_message == "Invalid credentials in Authorization header"
    assert hub.stats()["cdn"] == {}


def test_missing_repo_revision_and_file_raise_the_clients_errors(start_hub, tmp_path):
    hub = start_hub()
    commit = hub.store.add_commit(REPO, model_files(seed=5))
    cache = tmp_path / "cache"
    with pytest.raises(RepositoryNotFoundError):
        snapshot_download("acme/absent", endpoint=hub.url, token=False, cache_dir=cache)
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download("acme/absent", "config.json", endpoint=hub.url, token=False,
                        cache_dir=cache)
    with pytest.raises(RevisionNotFoundError):
        snapshot_download(REPO, revision="no-such-branch", endpoint=hub.url, token=False,
                          cache_dir=cache)
    with pytest.raises(RevisionNotFoundError):
        hf_hub_download(REPO, "config.json", revision="f" * 40, endpoint=hub.url, token=False,
                        cache_dir=cache)
    with pytest.raises(EntryNotFoundError):
        hf_hub_download(REPO, "absent.json", endpoint=hub.url, token=False, cache_dir=cache)
    # The client caches the absence under the commit from EntryNotFound's X-Repo-Commit.
    assert (cache / "models--acme--tiny-model" / ".no_exist" / commit / "absent.json").exists()


def test_the_cdn_serves_ranges_and_refuses_expired_or_forged_urls(start_hub, tmp_path):
    hub = start_hub()
    files = model_files(seed=6)
    commit = hub.store.add_commit(REPO, files)
    name = "weights/model-00001-of-00002.safetensors"
    answer = head_without_redirect(f"{hub.url}/{REPO}/resolve/main/{name}")
    assert answer.status == 302
    assert answer.headers["X-Repo-Commit"] == commit
    assert answer.headers["X-Linked-Size"] == str(len(files[name]))
    location = answer.headers["Location"]
    assert location.startswith(hub.cdn_url + "/")

    def fetch(url, range_header):
        try:
            with urllib.request.urlopen(urllib.request.Request(
                    url, headers={"Range": range_header}), timeout=5) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    size = len(files[name])
    status, headers, body = fetch(location, "bytes=1000-70999")
    assert (status, body) == (206, files[name][1000:71000])
    assert headers["Content-Range"] == f"bytes 1000-70999/{size}"
    assert fetch(location, "bytes=-10")[2] == files[name][-10:]
    status, headers, _ = fetch(location, f"bytes={size}-")
    assert status == 416 and headers["Content-Range"] == f"bytes */{size}"

    expired = hub.cdn.signed_url(REPO, commit, name, ttl_s=-5)
    assert fetch(expired, "bytes=0-9")[0] == 403
    forged = re.sub(r"signature=[0-9a-f]", "signature=x", location)
    assert fetch(forged, "bytes=0-9")[0] == 403

    hub.fail_cdn(1)  # the CDN's throttling: the client does not retry a 503 from it
    with pytest.raises(HfHubHTTPError) as throttled:
        hf_hub_download(REPO, name, endpoint=hub.url, token=False, cache_dir=tmp_path / "cache")
    assert throttled.value.response.status_code == 503
    assert hf_hub_download(REPO, name, endpoint=hub.url, token=False,
                           cache_dir=tmp_path / "cache")


def test_a_rate_limited_resolve_is_retried_after_the_window(start_hub, tmp_path):
    hub = start_hub(resolve_limit=(1, 1.0))  # one resolve per second
    files = model_files(seed=7)
    hub.store.add_commit(REPO, files)
    assert head_without_redirect(f"{hub.url}/{REPO}/resolve/main/README.md").status == 307
    limited = head_without_redirect(f"{hub.url}/{REPO}/resolve/main/README.md")
    assert limited.status == 429
    match = re.fullmatch(r'"resolvers";r=0;t=(\d+)', limited.headers["RateLimit"])
    assert match and limited.headers["Retry-After"] == match.group(1)

    # huggingface_hub's answer, still inside the window: its first HEAD does not retry, the
    # second one does, after waiting t+1 seconds (t from RateLimit, here 1).
    started = time.monotonic()
    path = hf_hub_download(REPO, "config.json", endpoint=hub.url, token=False,
                           cache_dir=tmp_path / "cache")
    assert open(path, "rb").read() == files["config.json"]
    assert time.monotonic() - started >= 2.0
    assert hub.stats()["hub"]["resolve 429"] == 3


def start_process(tmp_path, *arguments) -> tuple[subprocess.Popen, dict]:
    """hub_server.py as a process over tmp_path/repos; returns it and its URLs."""
    process = subprocess.Popen([sys.executable, os.path.join(ROOT, "e2e", "hub", "hub_server.py"),
                                "--root", str(tmp_path / "repos"), "--port", "0",
                                "--lfs-threshold", str(LFS_THRESHOLD), *arguments],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return process, json.loads(process.stdout.readline())


def read_request_log(path) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def test_runs_as_a_process_until_sigterm(tmp_path):
    store = hub_server.RepoStore(str(tmp_path / "repos"), LFS_THRESHOLD)
    old = store.add_commit(REPO, {"a.txt": b"old"})
    new = store.add_commit(REPO, {"a.txt": b"new"})
    process, urls = start_process(tmp_path)
    try:
        request = urllib.request.Request(f"{urls['hub']}/_test/move-ref", method="POST",
                                         data=json.dumps({"repo": REPO, "ref": "main",
                                                          "commit": old}).encode())
        urllib.request.urlopen(request, timeout=5).close()
        info = json.load(urllib.request.urlopen(
            f"{urls['hub']}/api/models/{REPO}/revision/main", timeout=5))
        assert info["sha"] == old != new
        stats = json.load(urllib.request.urlopen(f"{urls['hub']}/_test/stats", timeout=5))
        assert stats["hub"]["revision 200"] == 1
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0


def test_the_request_log_shows_the_token_never_reaching_the_cdn(tmp_path):
    store = hub_server.RepoStore(str(tmp_path / "repos"), LFS_THRESHOLD)
    store.create_repo(REPO, private_token=TOKEN)
    files = model_files(seed=9)
    commit = store.add_commit(REPO, files)
    log = tmp_path / "requests.jsonl"
    process, urls = start_process(tmp_path, "--request-log", str(log))
    try:
        folder = snapshot_download(REPO, endpoint=urls["hub"], token=TOKEN,
                                   cache_dir=tmp_path / "cache")
        assert read_tree(folder) == files
        lines = read_request_log(log)  # read while the server runs: each line is flushed
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    cdn = [line for line in lines if line["origin"] == "cdn"]
    assert [line["status"] for line in cdn] == [200] * 3  # the three LFS files
    assert not any(line["authorization"] or line["cookie"] for line in cdn)
    assert all(line["path"].startswith(f"/{REPO}/{commit}/") for line in cdn)
    hub = [line for line in lines if line["origin"] == "hub"]
    assert hub and all(line["authorization"] for line in hub)
    assert {line["method"] for line in lines} == {"GET", "HEAD"}
    assert all(line["range"] is None for line in lines)


def test_process_mode_counts_429s_and_cdn_503s_in_the_request_log(tmp_path):
    store = hub_server.RepoStore(str(tmp_path / "repos"), LFS_THRESHOLD)
    store.add_commit(REPO, model_files(seed=10))
    log = tmp_path / "requests.jsonl"
    process, urls = start_process(tmp_path, "--request-log", str(log), "--resolve-limit", "1",
                                  "--resolve-window", "60", "--cdn-fail", "2")
    try:
        name = "weights/model-00001-of-00002.safetensors"
        resolve = f"{urls['hub']}/{REPO}/resolve/main/{name}"
        location = head_without_redirect(resolve).headers["Location"]
        assert head_without_redirect(resolve).status == 429
        statuses = []
        for _ in range(3):
            request = urllib.request.Request(location, headers={"Range": "bytes=0-9"})
            try:
                with urllib.request.urlopen(request, timeout=5) as answer:
                    statuses.append(answer.status)
            except urllib.error.HTTPError as error:
                statuses.append(error.code)
        assert statuses == [503, 503, 206]
        lines = read_request_log(log)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    assert [(line["origin"], line["status"]) for line in lines] == [
        ("hub", 302), ("hub", 429), ("cdn", 503), ("cdn", 503), ("cdn", 206)]
    assert [line["range"] for line in lines] == [None, None] + ["bytes=0-9"] * 3
    assert lines[0]["path"] == f"/{REPO}/resolve/main/{name}" and lines[0]["method"] == "HEAD"
