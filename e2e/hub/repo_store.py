"""Model repositories on disk for the test Hub (hub_server.py): layout, git object ids, LFS.

Layout under ROOT (plain files, so a test can inspect or seed it by hand):

    ROOT/<org>/<name>/refs.json                 {"main": "<commit>", "v1.0": "<commit>"}
    ROOT/<org>/<name>/repo.json                 {"token": "..."} only for a private repository
    ROOT/<org>/<name>/commits/<commit>/<files>  one full snapshot per commit, never changed

Commit and directory ids are real git object ids (the commit object has a fixed author and
date), so they look and behave like the Hub's: 40 hex characters, stable for the same content.
Commits are immutable once written; only refs.json changes, and it is replaced atomically so a
server in another process never reads half of it.
"""

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass

COMMIT_PATTERN = re.compile(r"^[0-9a-f]{40}$")
# Hub repository names: letters, digits and -_. ; "." and ".." alone would escape ROOT.
_NAME_PATTERN = re.compile(r"^(?!\.{1,2}$)[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


@dataclass(frozen=True)
class FileEntry:
    """One file of a commit as the Hub describes it (tree listing, resolve headers)."""

    path: str
    size: int
    git_oid: str  # SHA-1 of the git blob: of the content, or of the LFS pointer for LFS files
    sha256: str | None  # set only for LFS files, as on the Hub
    pointer_size: int | None


def git_object_id(kind: str, body: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(body)}\0".encode() + body).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    return (f"version https://git-lfs.github.com/spec/v1\n"
            f"oid sha256:{sha256}\nsize {size}\n").encode()


def describe_file(path: str, data: bytes, lfs_threshold: int) -> FileEntry:
    """How the Hub describes a file: at or above the threshold it is stored in LFS, and git
    holds (and hashes) only the pointer."""
    if len(data) < lfs_threshold:
        return FileEntry(path, len(data), git_object_id("blob", data), None, None)
    sha256 = hashlib.sha256(data).hexdigest()
    pointer = lfs_pointer(sha256, len(data))
    return FileEntry(path, len(data), git_object_id("blob", pointer), sha256, len(pointer))


def tree_object_id(blob_ids: dict[str, str], directory: str) -> str:
    """The git tree id of `directory` ("" for the root) given every file's blob id."""
    prefix = f"{directory}/" if directory else ""
    children: dict[str, bool] = {}  # name -> is a directory
    for path in blob_ids:
        if path.startswith(prefix):
            name, _, rest = path[len(prefix):].partition("/")
            children[name] = bool(rest)
    body = b""
    # git orders tree entries by name, a directory's name compared as if it ended in "/".
    for name in sorted(children, key=lambda child: child + ("/" if children[child] else "")):
        if children[name]:
            mode, oid = b"40000", tree_object_id(blob_ids, prefix + name)
        else:
            mode, oid = b"100644", blob_ids[prefix + name]
        body += mode + b" " + name.encode() + b"\0" + bytes.fromhex(oid)
    return git_object_id("tree", body)


def valid_repo_id(repo_id: str) -> bool:
    parts = repo_id.split("/")
    return len(parts) == 2 and all(_NAME_PATTERN.match(part) for part in parts)


def valid_repo_path(path: str) -> bool:
    """A relative path inside a commit that cannot climb out of it."""
    parts = path.split("/")
    return bool(path) and all(part not in ("", ".", "..") and "\0" not in part for part in parts)


def _write_atomically(path: str, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.replace(temporary, path)


class RepoStore:
    """Reads and writes repositories under one root; safe to share between server threads
    (commits never change after they are written, refs are replaced atomically)."""

    def __init__(self, root: str, lfs_threshold: int):
        self.root = os.path.abspath(root)
        self.lfs_threshold = lfs_threshold
        self._entry_cache: dict[str, FileEntry] = {}  # commits are immutable: hash each file once
        self._small_sha256_cache: dict[str, str] = {}

    # ---- writing (test set-up and the branch-moving hook) ----

    def create_repo(self, repo_id: str, private_token: str | None = None) -> None:
        if not valid_repo_id(repo_id):
            raise ValueError(f"not a repository id: {repo_id!r}")
        os.makedirs(os.path.join(self._repo_dir(repo_id), "commits"), exist_ok=True)
        if not os.path.exists(self._refs_path(repo_id)):
            _write_atomically(self._refs_path(repo_id), b"{}")
        if private_token is not None:
            _write_atomically(os.path.join(self._repo_dir(repo_id), "repo.json"),
                              json.dumps({"token": private_token}).encode())

    def add_commit(self, repo_id: str, files: dict[str, bytes], branch: str | None = "main",
                   message: str = "commit") -> str:
        """Writes a full snapshot as a new commit (parent: the branch's head) and moves the
        branch to it; returns the commit id."""
        if not self.repo_exists(repo_id):
            self.create_repo(repo_id)
        if not all(valid_repo_path(path) for path in files):
            raise ValueError("file paths must be relative and stay inside the repository")
        parent = self.refs(repo_id).get(branch) if branch else None
        commit = self._commit_id(files, parent, message)
        commit_dir = os.path.join(self._repo_dir(repo_id), "commits", commit)
        if not os.path.isdir(commit_dir):
            staging = tempfile.mkdtemp(dir=os.path.dirname(commit_dir), prefix=".staging-")
            for path, data in files.items():
                os.makedirs(os.path.dirname(os.path.join(staging, path)), exist_ok=True)
                with open(os.path.join(staging, path), "wb") as out:
                    out.write(data)
            os.rename(staging, commit_dir)  # a commit appears whole or not at all
        if branch:
            self.set_ref(repo_id, branch, commit)
        return commit

    def set_ref(self, repo_id: str, ref: str, commit: str) -> None:
        """Points a branch or tag at an existing commit (the test hook that moves a branch)."""
        if not self.repo_exists(repo_id) or not self.commit_exists(repo_id, commit):
            raise ValueError(f"{repo_id} has no commit {commit}")
        refs = self.refs(repo_id)
        refs[ref] = commit
        _write_atomically(self._refs_path(repo_id), json.dumps(refs, indent=1).encode())

    # ---- reading (the server) ----

    def repo_exists(self, repo_id: str) -> bool:
        return valid_repo_id(repo_id) and os.path.isfile(self._refs_path(repo_id))

    def private_token(self, repo_id: str) -> str | None:
        try:
            with open(os.path.join(self._repo_dir(repo_id), "repo.json"), "rb") as settings:
                return json.load(settings).get("token")
        except FileNotFoundError:
            return None

    def refs(self, repo_id: str) -> dict[str, str]:
        with open(self._refs_path(repo_id), "rb") as refs:
            return json.load(refs)

    def commit_exists(self, repo_id: str, commit: str) -> bool:
        return (bool(COMMIT_PATTERN.match(commit))
                and os.path.isdir(self._commit_dir(repo_id, commit)))

    def resolve(self, repo_id: str, revision: str) -> str | None:
        """A branch, tag or commit id to a commit id; None when there is no such revision."""
        commit = self.refs(repo_id).get(revision, revision)
        return commit if self.commit_exists(repo_id, commit) else None

    def commit_time(self, repo_id: str, commit: str) -> float:
        return os.stat(self._commit_dir(repo_id, commit)).st_mtime

    def files(self, repo_id: str, commit: str) -> list[str]:
        """Every file path of a commit, "/"-separated and sorted."""
        base = self._commit_dir(repo_id, commit)
        found = []
        for directory, _, names in os.walk(base):
            relative = os.path.relpath(directory, base)
            found += [name if relative == "." else f"{relative}/{name}".replace(os.sep, "/")
                      for name in names]
        return sorted(found)

    def file_path(self, repo_id: str, commit: str, path: str) -> str | None:
        """The file on disk for a path in a commit; None when the commit has no such file."""
        if not valid_repo_path(path):
            return None
        candidate = os.path.join(self._commit_dir(repo_id, commit), *path.split("/"))
        return candidate if os.path.isfile(candidate) else None

    def is_directory(self, repo_id: str, commit: str, path: str) -> bool:
        return path == "" or (valid_repo_path(path) and os.path.isdir(
            os.path.join(self._commit_dir(repo_id, commit), *path.split("/"))))

    def entry(self, repo_id: str, commit: str, path: str) -> FileEntry:
        disk_path = self.file_path(repo_id, commit, path)
        cached = self._entry_cache.get(disk_path)
        if cached is None:
            with open(disk_path, "rb") as content:
                cached = describe_file(path, content.read(), self.lfs_threshold)
            self._entry_cache[disk_path] = cached  # a racing thread computes the same value
        return cached

    def listing(self, repo_id: str, commit: str, directory: str,
                recursive: bool) -> list[tuple[str, bool]]:
        """(path, is a directory) for what lies under `directory` ("" for the root) in a commit,
        sorted by path: its direct children, or every file and folder below it."""
        prefix = f"{directory}/" if directory else ""
        files = [path for path in self.files(repo_id, commit) if path.startswith(prefix)]
        directories = {prefix + "/".join(rest.split("/")[:depth])
                       for rest in (path[len(prefix):] for path in files)
                       for depth in range(1, rest.count("/") + 1)}
        listed = files + sorted(directories)
        if not recursive:
            listed = [path for path in listed if "/" not in path[len(prefix):]]
        return [(path, path in directories) for path in sorted(listed)]

    def content_sha256(self, repo_id: str, commit: str, path: str) -> str:
        """The sha256 of a file's content, LFS or not: ModelScope lists it for every file, where
        the Hub has one only for LFS files."""
        entry = self.entry(repo_id, commit, path)
        if entry.sha256 is not None:
            return entry.sha256
        disk_path = self.file_path(repo_id, commit, path)
        cached = self._small_sha256_cache.get(disk_path)
        if cached is None:
            with open(disk_path, "rb") as content:  # below the LFS threshold: small
                cached = hashlib.sha256(content.read()).hexdigest()
            self._small_sha256_cache[disk_path] = cached
        return cached

    def tree_id(self, repo_id: str, commit: str, directory: str) -> str:
        """The git tree id of a directory of a commit, the listing's `oid` for directories."""
        blobs = {path: self.entry(repo_id, commit, path).git_oid
                 for path in self.files(repo_id, commit)}
        return tree_object_id(blobs, directory)

    # ---- internals ----

    def _commit_id(self, files: dict[str, bytes], parent: str | None, message: str) -> str:
        # The tree is hashed from the content in memory: the commit is not on disk yet.
        blobs = {path: describe_file(path, data, self.lfs_threshold).git_oid
                 for path, data in files.items()}
        text = f"tree {tree_object_id(blobs, '')}\n"
        if parent:
            text += f"parent {parent}\n"
        text += ("author test <test@localhost> 0 +0000\ncommitter test <test@localhost> 0 +0000\n"
                 f"\n{message}\n")
        return git_object_id("commit", text.encode())

    def _repo_dir(self, repo_id: str) -> str:
        return os.path.join(self.root, *repo_id.split("/"))

    def _refs_path(self, repo_id: str) -> str:
        return os.path.join(self._repo_dir(repo_id), "refs.json")

    def _commit_dir(self, repo_id: str, commit: str) -> str:
        return os.path.join(self._repo_dir(repo_id), "commits", commit)
