#!/usr/bin/env python3
"""Puts a folder's files into the test Hub's store as one commit of a repository, and prints
the commit id. For scripts that run hub_server.py as a process (e2e/scenario.sh):

    python3 e2e/hub/seed_repo.py --root DIR --repo org/model --from FOLDER [--token T]
    python3 e2e/hub/seed_repo.py --root DIR --repo org/model --move-branch main --to COMMIT

`--token` makes the repository private (only that token reads it). A second call with other
files adds a commit and moves the branch, as a push would; `--move-branch` points a branch at
another commit without new files. Standard library only.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from repo_store import RepoStore  # noqa: E402


def folder_files(folder: str) -> dict[str, bytes]:
    files = {}
    for directory, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(directory, name)
            with open(path, "rb") as data:
                files[os.path.relpath(path, folder)] = data.read()
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--from", dest="folder", help="the files of the new commit")
    parser.add_argument("--token", help="make the repository private to this token")
    parser.add_argument("--branch", default="main")
    parser.add_argument("--move-branch", help="point this branch at --to")
    parser.add_argument("--to", help="an existing commit")
    args = parser.parse_args(argv)
    # The threshold only decides how the server describes files, not how they are stored.
    store = RepoStore(args.root, lfs_threshold=0)
    if args.move_branch:
        store.set_ref(args.repo, args.move_branch, args.to)
        print(args.to)
        return 0
    if not args.folder:
        parser.error("--from FOLDER or --move-branch BRANCH --to COMMIT")
    store.create_repo(args.repo, private_token=args.token)
    print(store.add_commit(args.repo, folder_files(args.folder), branch=args.branch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
