#!/usr/bin/env python3
"""Chooses the translation units of a build that scripts/lint.sh --tidy runs clang-tidy on.

The units are those of the build's compile_commands.json that hold project code (in a unity
build, CMake's Unity/unity_N_cxx.cxx files, each #including up to 16 sources), minus fuzz/,
bench/ and the one that clang 16 cannot parse (below), largest first.

By default only the units a change touches are checked, and of those only the ones whose exact
content has not passed before:
  - touched: the unit depends on a file changed since BASE, as the compiler recorded the
    dependencies of its object (ninja's deps log: the unity file, the sources it includes and
    every header either includes, transitively). BASE is --base, else $MODELPLANE_TIDY_BASE,
    else the last commit this clone checked clean (a run that passed on a clean tree; kept in
    the cache, used while it is an ancestor of HEAD), else the merge-base with origin/main when
    HEAD is not on it, else HEAD~1 (a clean clone of main: its last commit). "Changed" is the
    working tree against BASE plus untracked files. Sound when BASE was checked: the recorded
    commit was; for the fallbacks, every commit that reached main went through the test command
    (the full run, below, catches what that assumption misses, and toolchain upgrades).
  - passed before: a pass is remembered under a hash of the unit's compile command, the content
    of every file of the repository and the build it depends on, the paths of the system
    headers, the clang-tidy version and arguments, .clang-tidy, lint.sh and this script; a unit
    with that same hash is not checked again. The cache is ~/.cache/modelplane/tidy, one empty
    file per pass (those older than 30 days are removed).
Every unit is a candidate (the cache still skips what passed with the same content) when no
BASE can be found (a shallow clone) or a change reaches every unit: .clang-tidy,
scripts/lint.sh, this script (all three are in every key, so nothing is skipped), a
CMakeLists.txt or cmake/ (flags and sources of targets: the compile command is in the key).
--full checks every unit and reads no cache: the full run, for a schedule and after toolchain
upgrades. A unit is checked, and its pass not remembered, when its dependencies are unknown (not
built) or older than one of its files (built before an edit: an #include added since would be
missing from them).

Usage: scripts/tidy_units.py BUILD_DIR --tidy-version TEXT --args TEXT [--full] [--base REV]
                            [--changed PATH ...] [--cache DIR] [--explain] [--root DIR]
       scripts/tidy_units.py BUILD_DIR --confirm [--cache DIR]   (the selection passed)
Prints one line per unit to check, "UNIT KEY" (KEY "-": do not remember a pass), and a summary
on stderr; --explain also says on stderr why each unit is checked or skipped.
Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT_FOLDERS = ("core", "operator", "node-agent", "scheduler-extender", "kubectl-plugin",
                   "tests")
# cpprest's json.h does not compile under clang 16 in C++23 mode with libstdc++ 12 (its
# constexpr unique_ptr destructor needs a type json.h only declares), so the one unit that
# includes it, the REST client, is checked by GCC's warnings only.
EXCLUDED_SOURCES = ("core/kube/kube_client.cc",)
# A change here can change what clang-tidy finds in any unit.
GLOBAL_FILES = re.compile(r"^(\.clang-tidy|scripts/lint\.sh|scripts/tidy_units\.py|cmake/.*|"
                          r"(.*/)?CMakeLists\.txt)$")
CACHE_DAYS = 30


@dataclass
class Unit:
    path: Path
    command: str
    size: int  # project sources it holds: the order of the run, largest first
    deps: list[Path] | None = None  # None: no valid dependency record


def git(*arguments: str) -> str | None:
    try:
        result = subprocess.run(["git", "-C", str(ROOT), *arguments], capture_output=True,
                                text=True)
    except OSError:
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def load_units(build: Path) -> list[Unit]:
    entries = json.loads((build / "compile_commands.json").read_text())
    folders = "|".join(re.escape(folder) for folder in PROJECT_FOLDERS)
    project_include = re.compile(rf'^#include "{re.escape(str(ROOT))}/({folders})/', re.MULTILINE)
    units = []
    for entry in entries:
        path = Path(entry["file"])
        if not path.is_absolute():
            path = Path(entry["directory"]) / path
        if any(path.is_relative_to(base / skipped) for base in (ROOT, build)
               for skipped in ("fuzz", "bench")):
            continue
        if any(path == ROOT / source for source in EXCLUDED_SOURCES):
            continue
        command = entry.get("command") or shlex.join(entry.get("arguments", []))
        if path.is_relative_to(build):
            # A unity file: the project sources it includes; none (the generated CSI protobuf
            # code) and it is left out.
            try:
                size = len(project_include.findall(path.read_text(errors="replace")))
            except OSError:
                size = 0  # generated code not generated yet
            if size == 0:
                continue
        else:
            size = 1
        units.append(Unit(path, command, size))
    units.sort(key=lambda unit: (-unit.size, str(unit.path)))
    return units


def object_of(unit: Unit) -> str | None:
    words = shlex.split(unit.command)
    for index, word in enumerate(words):
        if word == "-o" and index + 1 < len(words):
            return words[index + 1]
        if word.startswith("-o") and len(word) > 2:
            return word[2:]
    return None


def load_deps(build: Path, units: list[Unit]) -> None:
    """Fills each unit's dependencies from ninja's deps log (VALID records only)."""
    try:
        listing = subprocess.run(["ninja", "-C", str(build), "-t", "deps"], capture_output=True,
                                 text=True).stdout
    except OSError:
        return
    records: dict[str, list[Path] | None] = {}
    current: list[Path] | None = None
    for line in listing.splitlines():
        if not line.strip():
            current = None
        elif not line.startswith(" "):
            name, _, state = line.partition(": #deps")
            current = [] if state.rstrip().endswith("(VALID)") else None
            records[os.path.normpath(build / name)] = current
        elif current is not None:
            current.append(Path(os.path.normpath(build / line.strip())))
    for unit in units:
        output = object_of(unit)
        if output is not None:
            unit.deps = records.get(os.path.normpath(build / output))


def checked_record(cache: Path) -> Path:
    """Where the last commit this clone checked clean is kept (one record per clone)."""
    return cache / ("checked-" + hashlib.sha256(str(ROOT).encode()).hexdigest()[:16])


def find_base(requested: str | None, cache: Path) -> tuple[str | None, str]:
    base = requested or os.environ.get("MODELPLANE_TIDY_BASE")
    if base:
        return git("rev-parse", "--verify", base + "^{commit}"), base
    try:
        checked = checked_record(cache).read_text().strip()
    except OSError:
        checked = ""
    if checked and git("merge-base", "--is-ancestor", checked, "HEAD") is not None:
        return checked, f"{checked[:12]}, the last commit checked clean here"
    head = git("rev-parse", "HEAD")
    upstream = git("merge-base", "HEAD", "origin/main")
    if upstream and upstream != head:
        return upstream, "the merge-base with origin/main"
    parent = git("rev-parse", "--verify", "HEAD~1^{commit}")
    return parent, "HEAD~1"


def changed_files(base: str) -> list[str] | None:
    tracked = git("diff", "--name-only", "--no-renames", base)
    untracked = git("ls-files", "--others", "--exclude-standard")
    if tracked is None or untracked is None:
        return None
    return sorted({name for name in (tracked + "\n" + untracked).split("\n") if name})


class Hasher:
    def __init__(self) -> None:
        self.digests: dict[Path, str] = {}

    def file(self, path: Path) -> str:
        if path not in self.digests:
            try:
                self.digests[path] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                self.digests[path] = "missing"
        return self.digests[path]


def unit_key(unit: Unit, build: Path, fingerprint: str, hasher: Hasher) -> str:
    digest = hashlib.sha256()
    digest.update(fingerprint.encode())
    digest.update(unit.command.encode())
    digest.update(str(unit.path).encode())
    for dependency in sorted(set(unit.deps or [])):
        digest.update(str(dependency).encode())
        if dependency.is_relative_to(ROOT) or dependency.is_relative_to(build):
            digest.update(hasher.file(dependency).encode())
    return digest.hexdigest()


def prune(cache: Path) -> None:
    horizon = time.time() - CACHE_DAYS * 86400
    for entry in cache.iterdir():
        try:
            if entry.stat().st_mtime < horizon:
                entry.unlink()
        except OSError:
            pass


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", type=Path)
    parser.add_argument("--tidy-version", default="", help="clang-tidy --version output")
    parser.add_argument("--args", default="", help="clang-tidy's arguments, as one text")
    parser.add_argument("--confirm", action="store_true",
                        help="the units of the last selection passed: remember its commit")
    parser.add_argument("--full", action="store_true", help="every unit, the cache unread")
    parser.add_argument("--base", help="the commit changes are counted from")
    parser.add_argument("--changed", action="append",
                        help="these files changed (repository paths), instead of asking git")
    cache_home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    parser.add_argument("--cache", type=Path, default=cache_home / "modelplane" / "tidy")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--root", type=Path, help="the repository (default: this script's)")
    options = parser.parse_args(argv)
    global ROOT
    ROOT = (options.root or ROOT).resolve()
    if options.confirm:
        pending = checked_record(options.cache).with_suffix(".pending")
        if pending.exists():
            pending.replace(checked_record(options.cache))
        return 0
    build = options.build.resolve()
    units = load_units(build)
    load_deps(build, units)

    # every: all units are candidates (a change that reaches them all, or nothing to count
    # changes from); the cache still skips those that passed with the same content. --full:
    # every unit is checked, the cache unread.
    every = ""
    changed: list[str] = []
    since = ""
    if options.full:
        every = "--full"
    elif options.changed is not None:
        changed, since = sorted(set(options.changed)), "the files named"
    else:
        base, since = find_base(options.base, options.cache)
        listed = changed_files(base) if base else None
        if listed is None:
            every = f"no base commit ({since}) to count changes from"
        else:
            changed = listed
    global_changes = [name for name in changed if GLOBAL_FILES.match(name)]
    if global_changes and not every:
        every = f"{global_changes[0]} changed, which reaches every unit"

    fingerprint = "\n".join([options.tidy_version, options.args] + [
        Hasher().file(ROOT / name) for name in (".clang-tidy", "scripts/lint.sh",
                                                "scripts/tidy_units.py")])
    options.cache.mkdir(parents=True, exist_ok=True)
    prune(options.cache)
    # If this run passes, its commit was checked whole (a clean tree: nothing but the commit is
    # in the build) and later runs count changes from it; lint.sh confirms it (--confirm).
    pending = checked_record(options.cache).with_suffix(".pending")
    pending.unlink(missing_ok=True)
    if options.changed is None and git("status", "--porcelain") == "" and (
            head := git("rev-parse", "HEAD")):
        pending.write_text(head + "\n")
    hasher = Hasher()
    changed_paths = {ROOT / name for name in changed}
    selected: list[tuple[Unit, str]] = []
    skipped_untouched = skipped_passed = 0
    for unit in units:
        reason = ""
        key = "-"
        if unit.deps is None:
            reason = "its dependencies are unknown (not built)"
        else:
            object_path = object_of(unit)
            built = (build / object_path).stat().st_mtime if object_path and (
                build / object_path).exists() else 0
            stale = [dependency for dependency in unit.deps
                     if dependency.is_relative_to(ROOT) and dependency.exists()
                     and dependency.stat().st_mtime > built]
            if stale:
                reason = f"built before {stale[0].relative_to(ROOT)} changed"
            else:
                key = unit_key(unit, build, fingerprint, hasher)
                touched = sorted(changed_paths.intersection(unit.deps))
                if options.full:
                    reason = "full run"
                elif not touched and not every:
                    skipped_untouched += 1
                    reason = "skipped: nothing it depends on changed"
                elif (options.cache / key).exists():
                    skipped_passed += 1
                    reason = "skipped: passed before with this content"
                elif not touched:
                    reason = every
                else:
                    reason = f"depends on {touched[0].relative_to(ROOT)}" + (
                        f" and {len(touched) - 1} more changed" if len(touched) > 1 else "")
        if options.explain:
            shown = unit.path.relative_to(ROOT) if unit.path.is_relative_to(ROOT) else unit.path
            print(f"tidy: {shown}: {reason}", file=sys.stderr)
        if not reason.startswith("skipped"):
            selected.append((unit, key))

    for unit, key in selected:
        print(f"{unit.path} {key}")
    if options.full:
        print(f"tidy: all {len(units)} units (--full)", file=sys.stderr)
    else:
        scope = f"every unit ({every})" if every else (
            f"{len(changed)} files changed since {since}; {skipped_untouched} units untouched")
        print(f"tidy: {len(selected)} of {len(units)} units: {scope}; {skipped_passed} passed "
              f"before with the same content", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
