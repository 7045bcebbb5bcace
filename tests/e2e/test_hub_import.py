"""`kubectl-modelplane import` (the real binary from the build) against the test Hub of e2e/hub/
(in process mode, as a separate server would be, and in-process where a test bends an answer),
checked against what the real huggingface_hub client downloads from the same commit: every size
and sha256 in the written ModelRevision must be the bytes the client gets.

The binary is found under MODELPLANE_BINARY_DIR (default: build/dev); the tests are skipped with
a message when it is not built. No cluster: import without --apply never asks for one.

    MODELPLANE_BINARY_DIR=build/dev .venv/bin/python -m pytest -q tests/e2e/test_hub_import.py
"""

import hashlib
import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import huggingface_hub
import pytest
import yaml
from huggingface_hub import snapshot_download

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "e2e" / "hub"))
import hub_server  # noqa: E402
import repo_store  # noqa: E402

BINARY_DIR = Path(os.environ.get("MODELPLANE_BINARY_DIR", ROOT / "build" / "dev"))
PLUGIN = BINARY_DIR / "kubectl-plugin" / "kubectl-modelplane"
LFS_THRESHOLD = 4096  # the first shard is an LFS file behind the CDN, the rest plain git files
TREE_PAGE_SIZE = 2  # several pages, so the importer must follow the Link header
REPO = "acme/model"
PRIVATE_REPO = "acme/private"
TOKEN = "hf_import_test_token"
COMMAND_DEADLINE_S = 20

pytestmark = pytest.mark.skipif(
    not PLUGIN.is_file(),
    reason=f"{PLUGIN} is not built (ninja -C {BINARY_DIR} kubectl-modelplane, or set "
           "MODELPLANE_BINARY_DIR to the build folder)")


def pseudo_random(size: int, seed: int) -> bytes:
    return bytes((index * 131 + seed * 17 + index // 7) % 256 for index in range(size))


def index_naming(shards: list[str], padding: int = 0) -> bytes:
    weight_map = {f"layers.{number}.weight": shard for number, shard in enumerate(shards)}
    return json.dumps({"metadata": {"total_size": 1, "padding": "x" * padding},
                       "weight_map": weight_map}, indent=1).encode()


SHARDS = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]


def model_files(seed: int, index: bytes | None = None) -> dict[str, bytes]:
    """Two shards (one LFS, one small), their index, config, tokenizer, and files without a
    role that the import leaves out."""
    return {
        "config.json": json.dumps({"seed": seed, "layers": 2}).encode(),
        "tokenizer.json": json.dumps({"vocab": ["a", "b", "c"] * seed}).encode(),
        "model.safetensors.index.json": index or index_naming(SHARDS),
        SHARDS[0]: pseudo_random(64 * 1024, seed),
        SHARDS[1]: pseudo_random(3000, seed),
        "README.md": b"# a model\n",
        "pytorch_model.bin": pseudo_random(100, seed),
    }


@pytest.fixture(autouse=True)
def quiet_client():
    huggingface_hub.utils.disable_progress_bars()
    yield
    huggingface_hub.close_session()


@pytest.fixture
def store(tmp_path) -> repo_store.RepoStore:
    return repo_store.RepoStore(str(tmp_path / "repos"), LFS_THRESHOLD)


@pytest.fixture
def start_process_hub(tmp_path, store):
    """hub_server.py as its own process over the store's root; returns its URLs."""
    started = []

    def start(*arguments: str) -> dict:
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "e2e" / "hub" / "hub_server.py"), "--root", store.root,
             "--port", "0", "--lfs-threshold", str(LFS_THRESHOLD), "--tree-page-size",
             str(TREE_PAGE_SIZE), *arguments],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        started.append(process)
        return json.loads(process.stdout.readline())
    yield start
    for process in started:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0


@pytest.fixture
def start_local_hub(tmp_path):
    """A LocalHub in this process, for tests that bend one of its answers."""
    started = []

    def start() -> hub_server.LocalHub:
        hub = hub_server.LocalHub(tmp_path / "local-repos", lfs_threshold=LFS_THRESHOLD,
                                  tree_page_size=TREE_PAGE_SIZE).start()
        started.append(hub)
        return hub
    yield start
    for hub in started:
        hub.stop()


def run_import(reference: str, endpoint: str, *flags: str, env: dict | None = None,
               name: str = "m") -> subprocess.CompletedProcess:
    # The Hub variables of the caller's shell must not leak into the test.
    environment = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
    environment.update(env or {})
    return subprocess.run([str(PLUGIN), "import", reference, "--name", name, "--endpoint",
                           endpoint, *flags], capture_output=True, text=True, env=environment,
                          timeout=COMMAND_DEADLINE_S)


def imported(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def refused(result: subprocess.CompletedProcess, reason: str) -> str:
    """The refusal's one line; the import wrote nothing."""
    assert result.returncode != 0
    assert result.stdout == ""
    assert f"error: {reason}: " in result.stderr, result.stderr
    assert result.stderr.count(f"{reason}:") == 1, result.stderr  # once, not wrapped twice
    return result.stderr


def sha256_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def hub_stats(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/_test/stats", timeout=5) as answer:
        return json.load(answer)


def test_the_revision_names_the_bytes_huggingface_hub_downloads(store, start_process_hub,
                                                                tmp_path):
    commit = store.add_commit(REPO, model_files(seed=1))
    hub = start_process_hub()["hub"]
    result = run_import(f"hf://{REPO}@main", hub, "--engine-version", "0.6.3")
    revision = imported(result)

    spec = revision["spec"]
    assert revision["kind"] == "ModelRevision" and revision["metadata"] == {"name": "m"}
    assert spec["repositoryRevision"] == "main"
    assert spec["sources"] == [{"name": "hub", "type": "huggingFace", "huggingFace": {
        "endpoint": hub, "repository": REPO, "commit": commit}}]
    assert spec["format"] == "safetensors"
    assert spec["engine"] == {"name": "vllm", "version": "0.6.3"}
    roles = {file["path"]: file["role"] for file in spec["files"]}
    assert roles == {"config.json": "config", "tokenizer.json": "tokenizer",
                     "model.safetensors.index.json": "index", SHARDS[0]: "weights",
                     SHARDS[1]: "weights"}
    assert "left out README.md (no role)" in result.stderr
    assert "left out pytorch_model.bin (no role)" in result.stderr
    stats = hub_stats(hub)
    assert stats["hub"]["revision 200"] == 1  # resolved once; everything after names the commit
    assert stats["hub"]["tree 200"] >= 3  # every page of the listing, through Link
    assert stats["cdn"] == {}  # LFS digests come from the listing: no weights were downloaded

    folder = Path(snapshot_download(REPO, revision=commit, endpoint=hub, token=False,
                                    cache_dir=tmp_path / "cache"))
    for file in spec["files"]:
        data = (folder / file["path"]).read_bytes()
        assert file["size"] == len(data), file["path"]
        assert file["sha256"] == sha256_of(data), file["path"]


def test_a_branch_that_moves_after_the_import_changes_nothing_written(store, start_process_hub,
                                                                      tmp_path):
    old_files = model_files(seed=2)
    old = store.add_commit(REPO, old_files)
    hub = start_process_hub()["hub"]
    before = imported(run_import(f"hf://{REPO}", hub))

    new = store.add_commit(REPO, model_files(seed=3))  # main moves on
    after = imported(run_import(f"hf://{REPO}@main", hub))
    assert before["spec"]["sources"][0]["huggingFace"]["commit"] == old != new
    assert after["spec"]["sources"][0]["huggingFace"]["commit"] == new
    config = {file["path"]: file for file in before["spec"]["files"]}["config.json"]
    assert config["sha256"] == sha256_of(old_files["config.json"])
    # The commit the first revision names still serves what it recorded.
    folder = Path(snapshot_download(REPO, revision=old, endpoint=hub, token=False,
                                    cache_dir=tmp_path / "cache"))
    for file in before["spec"]["files"]:
        assert file["sha256"] == sha256_of((folder / file["path"]).read_bytes())


def test_include_and_exclude_choose_files_and_the_index_must_agree(store, start_process_hub,
                                                                   tmp_path):
    store.add_commit(REPO, model_files(seed=4))
    hub = start_process_hub()["hub"]
    configs = imported(run_import(f"hf://{REPO}", hub, "--include", "*.json", "--exclude",
                                  "*.index.json"))
    assert sorted(file["path"] for file in configs["spec"]["files"]) == [
        "config.json", "tokenizer.json"]

    output = tmp_path / "out.yaml"
    stderr = refused(run_import(f"hf://{REPO}", hub, "--exclude", SHARDS[1], "-o", str(output)),
                     "HubIndexMismatch")
    assert f"{SHARDS[1]}" in stderr and "left out by --include/--exclude" in stderr
    assert not output.exists()


def test_a_lora_adapter_names_its_base_by_digest(store, start_process_hub):
    base = "sha256:" + "ab" * 32
    store.add_commit("acme/sql-lora", {
        "adapter_config.json": b'{"r": 8, "lora_alpha": 16}',
        "adapter_model.safetensors": pseudo_random(6000, seed=12),
        "README.md": b"an adapter"})
    hub = start_process_hub()["hub"]
    adapter = imported(run_import("hf://acme/sql-lora", hub, "--base-digest", base))
    assert adapter["spec"]["base"] == {"digest": base}
    assert {file["role"] for file in adapter["spec"]["files"]} == {"adapter"}
    # Not an adapter's files, or not a digest: refused, nothing written.
    store.add_commit(REPO, model_files(seed=13))
    for result in (run_import(f"hf://{REPO}", hub, "--base-digest", base),
                   run_import("hf://acme/sql-lora", hub, "--base-digest", "llama-r1")):
        assert result.returncode != 0 and result.stdout == ""
        assert "base" in result.stderr, result.stderr


def test_refusals_name_their_reason_and_write_nothing(store, start_process_hub):
    store.add_commit(REPO, model_files(seed=5))
    store.add_commit("acme/broken-index",
                     model_files(seed=5, index=index_naming([*SHARDS, "model-00003.safetensors"])))
    store.create_repo(PRIVATE_REPO, private_token=TOKEN)
    store.add_commit(PRIVATE_REPO, model_files(seed=6))
    hub = start_process_hub()["hub"]

    refused(run_import("hf://acme/nothing", hub), "HubRepositoryNotFound")
    stderr = refused(run_import(f"hf://{REPO}@v9", hub), "HubRevisionNotFound")
    assert f"revision v9 of {REPO} not found" in stderr
    stderr = refused(run_import(f"hf://{PRIVATE_REPO}", hub), "HubRepositoryNotFound")
    assert "private or missing; no token given" in stderr
    stderr = refused(run_import(f"hf://{PRIVATE_REPO}", hub, env={"HF_TOKEN": "hf_wrong"}),
                     "HubUnauthorized")
    assert "the token was refused" in stderr and "hf_wrong" not in stderr
    stderr = refused(run_import("hf://acme/broken-index", hub), "HubIndexMismatch")
    assert "model-00003.safetensors" in stderr and "the repository lacks" in stderr


def test_a_rate_limit_is_waited_out_or_refused(store, start_process_hub):
    store.add_commit(REPO, model_files(seed=7))
    # Four small files are downloaded through resolve: the third waits for the next window.
    waited = start_process_hub("--resolve-limit", "2", "--resolve-window", "1")["hub"]
    result = run_import(f"hf://{REPO}", waited)
    imported(result)
    assert "the hub asked to slow down (HTTP 429); waiting 2 s" in result.stderr
    assert hub_stats(waited)["hub"]["resolve 429"] == 1

    # A window longer than the importer waits is refused at once, with the hub's reason.
    closed = start_process_hub("--resolve-limit", "1", "--resolve-window", "600")["hub"]
    stderr = refused(run_import(f"hf://{REPO}", closed), "HubThrottled")
    assert "longer than the 120 s allowed" in stderr


def test_a_private_repo_with_a_token_keeps_the_token_off_the_cdn(store, start_process_hub,
                                                                 tmp_path):
    # An index past the LFS threshold is read through the CDN: a redirect the token must not take.
    files = model_files(seed=8, index=index_naming(SHARDS, padding=2 * LFS_THRESHOLD))
    store.create_repo(PRIVATE_REPO, private_token=TOKEN)
    commit = store.add_commit(PRIVATE_REPO, files)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    hub = start_process_hub()["hub"]
    result = run_import(f"hf://{PRIVATE_REPO}", hub, "--token-file", str(token_file),
                        "--credentials-secret", "hf-token")
    revision = imported(result)
    assert TOKEN not in result.stdout + result.stderr
    source = revision["spec"]["sources"][0]
    assert source["credentialsSecretRef"] == {"name": "hf-token"}
    assert source["huggingFace"]["commit"] == commit
    for file in revision["spec"]["files"]:
        assert file["sha256"] == sha256_of(files[file["path"]]), file["path"]

    stats = hub_stats(hub)
    assert stats["cdn"]["cdn 200"] == 1  # the index, the one LFS file the import reads
    assert stats["cdn_requests_with_authorization"] == 0
    hub_api_requests = sum(stats["hub"].get(kind, 0)
                           for kind in ("revision", "tree", "resolve", "resolve_cache"))
    assert stats["hub_requests_with_authorization"] == hub_api_requests > 0


# ---- answers bent in-process: what a listing and a download can disagree about ----

def bend_store(hub: hub_server.LocalHub, listed_size: dict[str, int] | None = None,
               phantom: str | None = None) -> None:
    """Makes the listing report other sizes for some files, or list a file that is not there."""
    store = hub.store
    real_files, real_entry = store.files, store.entry

    def files(repo_id, commit):
        return real_files(repo_id, commit) + ([phantom] if phantom else [])

    def entry(repo_id, commit, path):
        if path == phantom:
            return repo_store.FileEntry(path, 10, "0" * 40, None, None)
        described = real_entry(repo_id, commit, path)
        if listed_size and path in listed_size:
            return repo_store.FileEntry(path, listed_size[path], described.git_oid,
                                        described.sha256, described.pointer_size)
        return described
    store.files, store.entry = files, entry


def test_a_small_file_that_disagrees_with_the_listing_is_refused(start_local_hub):
    hub = start_local_hub()
    files = model_files(seed=9)
    hub.store.add_commit(REPO, files)
    bend_store(hub, listed_size={"config.json": len(files["config.json"]) + 1})
    stderr = refused(run_import(f"hf://{REPO}", hub.url), "HubListingMismatch")
    assert "config.json sent" in stderr


def test_a_listed_file_the_hub_does_not_serve_is_refused(start_local_hub):
    hub = start_local_hub()
    hub.store.add_commit(REPO, model_files(seed=10))
    bend_store(hub, phantom="generation_config.json")
    stderr = refused(run_import(f"hf://{REPO}", hub.url), "HubFileNotFound")
    assert "generation_config.json" in stderr


def test_malformed_json_from_the_hub_is_refused(start_local_hub, monkeypatch):
    hub = start_local_hub()
    hub.store.add_commit(REPO, model_files(seed=11))
    monkeypatch.setattr(hub_server.HubHandler, "_revision",
                        lambda handler, segments: handler.send_plain(200, '{"sha": 42'))
    stderr = refused(run_import(f"hf://{REPO}", hub.url), "HubMalformedAnswer")
    assert "without a commit" in stderr


# ---- ModelScope: the same repositories through the test Hub's ModelScope API ----

def modelscope_snapshot(hub: str, repo: str, revision: str, tmp_path, monkeypatch,
                        token: str | None = None) -> Path:
    """The real modelscope client's download, with no stored credentials or cache of the user's."""
    monkeypatch.setenv("MODELSCOPE_HOME", str(tmp_path / "modelscope-home"))
    monkeypatch.setenv("MODELSCOPE_API_TOKEN", "")
    monkeypatch.delenv("MODELSCOPE_ENDPOINT", raising=False)
    from modelscope.hub.snapshot_download import snapshot_download as modelscope_download
    from modelscope_hub.config import set_default_config
    set_default_config(None)
    try:
        return Path(modelscope_download(repo, revision=revision, endpoint=hub, token=token,
                                        cache_dir=str(tmp_path / "modelscope-cache")))
    finally:
        set_default_config(None)


def read_request_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_modelscope_revision_names_the_bytes_the_modelscope_client_downloads(
        store, start_process_hub, tmp_path, monkeypatch):
    commit = store.add_commit(REPO, model_files(seed=12), branch="master")
    hub = start_process_hub()["hub"]
    result = run_import(f"modelscope://{REPO}", hub)
    revision = imported(result)
    spec = revision["spec"]
    assert spec["repositoryRevision"] == "master"
    assert spec["sources"] == [{"name": "hub", "type": "modelScope", "modelScope": {
        "endpoint": hub, "repository": REPO, "commit": commit}}]
    assert len(spec["files"]) == 5 and "left out README.md (no role)" in result.stderr
    # ModelScope lists every file's sha256: only the index was read, to check its shards.
    assert hub_stats(hub)["hub"]["modelscope_file"] == 1

    folder = modelscope_snapshot(hub, REPO, commit, tmp_path, monkeypatch)
    for file in spec["files"]:
        data = (folder / file["path"]).read_bytes()
        assert (file["size"], file["sha256"]) == (len(data), sha256_of(data)), file["path"]


def test_modelscope_refusals_and_a_private_repo_with_its_token(store, start_process_hub,
                                                               tmp_path):
    store.add_commit(REPO, model_files(seed=13), branch="master")
    files = model_files(seed=14, index=index_naming(SHARDS, padding=2 * LFS_THRESHOLD))
    store.create_repo(PRIVATE_REPO, private_token=TOKEN)
    commit = store.add_commit(PRIVATE_REPO, files, branch="master")
    log = tmp_path / "requests.jsonl"
    hub = start_process_hub("--request-log", str(log))["hub"]

    refused(run_import("modelscope://acme/nothing", hub), "HubRepositoryNotFound")
    stderr = refused(run_import(f"modelscope://{REPO}@v9", hub), "HubRevisionNotFound")
    assert f"revision v9 of {REPO} not found" in stderr
    refused(run_import(f"modelscope://{REPO}@{'0' * 40}", hub), "HubRevisionNotFound")
    stderr = refused(run_import(f"modelscope://{PRIVATE_REPO}", hub), "HubRepositoryNotFound")
    assert "private or missing; no token given (--token-file or MODELSCOPE_API_TOKEN)" in stderr

    result = run_import(f"modelscope://{PRIVATE_REPO}", hub, env={"MODELSCOPE_API_TOKEN": TOKEN})
    revision = imported(result)
    assert TOKEN not in result.stdout + result.stderr
    assert revision["spec"]["sources"][0]["modelScope"]["commit"] == commit
    for file in revision["spec"]["files"]:
        assert file["sha256"] == sha256_of(files[file["path"]]), file["path"]
    cdn = [line for line in read_request_log(log) if line["origin"] == "cdn"]
    assert [line["status"] for line in cdn] == [200]  # the index, an LFS file here
    assert not any(line["authorization"] or line["cookie"] for line in cdn)
