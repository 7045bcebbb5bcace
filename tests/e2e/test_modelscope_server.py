"""e2e/hub's ModelScope API (modelscope_handler.py) against the real `modelscope` client (the
version pinned in requirements-test.txt): what it downloads, from which origin, with or without
its token. As in test_hub_server.py, assertions are about the client's results and what reached
the servers, never about the server's code.
"""

import hashlib
import json
import os
import signal
import sys
import urllib.error
import urllib.request

# The client reads its tunables once, at import. Files over 1 MiB are fetched as 1 MiB ranges by
# 3 workers, so ranges through the 302 to the CDN are exercised with small test data.
os.environ["MODELSCOPE_DOWNLOAD_PARALLEL_THRESHOLD_MB"] = "1"
os.environ["MODELSCOPE_DOWNLOAD_PART_SIZE_MB"] = "1"
os.environ["MODELSCOPE_DOWNLOAD_PARALLEL_WORKERS"] = "3"

import pytest  # noqa: E402
import requests  # noqa: E402
from modelscope.hub.file_download import model_file_download  # noqa: E402
from modelscope.hub.snapshot_download import snapshot_download  # noqa: E402
from modelscope_hub.config import set_default_config  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "e2e", "hub"))
import hub_server  # noqa: E402

LFS_THRESHOLD = 4096
TEST_DEADLINE_S = 30
REPO = "acme/tiny-model"
TOKEN = "ms_test_private_token"
LARGE = "weights/model.safetensors"


def model_files(seed: int) -> dict[str, bytes]:
    """Small files (served by the API origin), a large LFS file fetched in ranges and a small
    LFS file fetched whole (both from the CDN)."""
    def pseudo_random(size: int) -> bytes:
        return bytes((index * 131 + seed * 17 + index // 7) % 256 for index in range(size))
    return {
        "config.json": json.dumps({"seed": seed}).encode(),
        "tokenizer/vocab.txt": b"a\nb\nc\n" * seed,
        LARGE: pseudo_random(2 * 1024 * 1024 + 512 * 1024 + seed),
        "weights/extra/adapter.bin": pseudo_random(LFS_THRESHOLD + 100 + seed),
    }


@pytest.fixture(autouse=True)
def deadline():
    def expired(*_):
        raise TimeoutError(f"test ran past {TEST_DEADLINE_S}s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TEST_DEADLINE_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def client_config(tmp_path, monkeypatch):
    """No stored credentials or user cache: the client's configuration comes from here only
    (it caches one per process, so it is dropped before and after)."""
    monkeypatch.setenv("MODELSCOPE_HOME", str(tmp_path / "modelscope-home"))
    monkeypatch.setenv("MODELSCOPE_CACHE", str(tmp_path / "modelscope-cache"))
    monkeypatch.setenv("MODELSCOPE_API_TOKEN", "")  # set but empty: no token
    monkeypatch.delenv("MODELSCOPE_ENDPOINT", raising=False)
    set_default_config(None)
    yield
    set_default_config(None)


@pytest.fixture
def hub(tmp_path):
    with hub_server.LocalHub(tmp_path / "repos", lfs_threshold=LFS_THRESHOLD) as started:
        yield started


def read_tree(folder) -> dict[str, bytes]:
    found = {}
    for directory, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, folder).replace(os.sep, "/")] = open(path, "rb").read()
    return found


def download(hub, revision, cache, **options) -> str:
    return snapshot_download(REPO, revision=revision, cache_dir=str(cache), endpoint=hub.url,
                             **options)


def fetch(url: str, headers: dict[str, str] | None = None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}),
                                    timeout=5) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def test_a_commit_pinned_snapshot_is_byte_identical_with_lfs_files_from_the_cdn(hub, tmp_path):
    files = model_files(seed=1)
    commit = hub.store.add_commit(REPO, files, branch="master")
    folder = download(hub, commit, tmp_path / "cache")
    assert read_tree(folder) == files
    assert os.path.basename(folder) == commit

    # Small files came from the API origin; both LFS files through a 302 to the CDN, the large
    # one as 1 MiB ranges, each answered 206.
    served = [r for r in hub.requests("hub") if r["kind"] == "modelscope_file"]
    assert {r["status"] for r in served if "FilePath=config.json" in r["path"]} == {200}
    assert {r["status"] for r in served if "FilePath=weights" in r["path"]} == {302}
    cdn = hub.requests("cdn")
    ranged = [r for r in cdn if r["path"].startswith(f"/{REPO}/{commit}/{LARGE}?")]
    assert [r["status"] for r in ranged] == [206] * 3
    assert sorted(r["headers"]["range"] for r in ranged) == [
        "bytes=0-1048575", "bytes=1048576-2097151", f"bytes=2097152-{len(files[LARGE]) - 1}"]
    assert len(cdn) == 4


def test_a_moved_branch_does_not_change_a_commit_pinned_download(hub, tmp_path):
    old_files, new_files = model_files(seed=1), model_files(seed=2)
    old = hub.store.add_commit(REPO, old_files, branch="master")
    new = hub.store.add_commit(REPO, new_files, branch=None)
    assert read_tree(download(hub, "master", tmp_path / "cache")) == old_files

    hub.move_ref(REPO, "master", new)
    assert read_tree(download(hub, "master", tmp_path / "cache")) == new_files
    assert read_tree(download(hub, old, tmp_path / "cache")) == old_files
    assert read_tree(download(hub, old, tmp_path / "fresh-cache")) == old_files


def test_a_private_repo_needs_its_token_which_never_reaches_the_cdn(hub, tmp_path):
    hub.store.create_repo(REPO, private_token=TOKEN)
    files = model_files(seed=3)
    hub.store.add_commit(REPO, files, branch="master")
    for token in (None, "ms_wrong_token"):
        with pytest.raises(requests.HTTPError) as refused:
            download(hub, "master", tmp_path / "cache", token=token)
        assert refused.value.response.status_code == 404  # as if it did not exist
    assert hub.requests("cdn") == []

    folder = download(hub, "master", tmp_path / "cache", token=TOKEN)
    assert read_tree(folder) == files
    # The client sends the token as a header and as a cookie; the API origin got both, the CDN
    # neither.
    listing = [r for r in hub.requests("hub") if r["kind"] == "modelscope_files"][-1]
    assert listing["headers"]["authorization"] == f"Bearer {TOKEN}"
    assert f"m_session_id={TOKEN}" in listing["headers"]["cookie"]
    cdn = hub.requests("cdn")
    assert cdn and all(r["status"] in (200, 206) for r in cdn)
    assert all("authorization" not in r["headers"] and "cookie" not in r["headers"] for r in cdn)


def test_without_a_revision_the_client_asks_for_the_revisions_and_takes_master(
        hub, tmp_path, monkeypatch):
    files = model_files(seed=4)
    hub.store.add_commit(REPO, files, branch="master")
    # model_file_download looks the revision up with a client that ignores `endpoint=`.
    monkeypatch.setenv("MODELSCOPE_ENDPOINT", hub.url)
    set_default_config(None)
    path = model_file_download(REPO, "config.json", cache_dir=str(tmp_path / "cache"))
    assert open(path, "rb").read() == files["config.json"]
    assert [r["kind"] for r in hub.requests("hub") if r["kind"] != "modelscope_other"] == [
        "modelscope_revisions", "modelscope_file"]
    assert "Revision=master&" in hub.requests("hub")[-1]["path"]


def test_an_unknown_revision_lists_no_files_and_the_client_returns_an_empty_folder(hub, tmp_path):
    hub.store.add_commit(REPO, model_files(seed=5), branch="master")
    # The service's trap, kept: not an error but a null file list, which the client takes for
    # an empty repository. Only the file endpoint says 404.
    status, _, body = fetch(f"{hub.url}/api/v1/models/{REPO}/repo/files?Revision=main")
    assert status == 200 and json.loads(body)["Data"] == {"Files": None}
    assert read_tree(download(hub, "main", tmp_path / "cache")) == {}
    with pytest.raises(requests.HTTPError) as missing:
        model_file_download(REPO, "config.json", revision="main",
                            cache_dir=str(tmp_path / "cache"), endpoint=hub.url)
    assert missing.value.response.status_code == 404


def test_byte_ranges_on_the_api_origin_and_on_the_cdn(hub):
    files = model_files(seed=6)
    commit = hub.store.add_commit(REPO, files, branch="master")
    base = f"{hub.url}/api/v1/models/{REPO}/repo?Revision={commit}&FilePath="
    status, headers, body = fetch(base + "config.json", {"Range": "bytes=2-5"})
    assert (status, body) == (206, files["config.json"][2:6])
    assert headers["Content-Range"] == f"bytes 2-5/{len(files['config.json'])}"

    # urllib follows the 302 to the CDN with the Range header.
    status, headers, body = fetch(base + "weights%2Fextra%2Fadapter.bin", {"Range": "bytes=-10"})
    assert (status, body) == (206, files["weights/extra/adapter.bin"][-10:])
    listing = json.loads(fetch(f"{hub.url}/api/v1/models/{REPO}/repo/files?Revision={commit}"
                               "&Recursive=True")[2])["Data"]["Files"]
    sha256 = {entry["Path"]: entry.get("Sha256") for entry in listing}
    assert sha256 == {**{path: hashlib.sha256(data).hexdigest() for path, data in files.items()},
                      "tokenizer": None, "weights": None, "weights/extra": None}
