"""scripts/tidy_units.py: which translation units the test command's clang-tidy step checks.

A unit is checked when a file it depends on (by the compiler's own dependency record, headers
included) changed since the base, unless it passed before with the same content; everything
when the checks themselves or the build's flags changed; and a unit whose dependencies are
unknown or older than its files is always checked and its pass not remembered.

Each test builds a small project of its own with ninja and g++ (so the dependency record is the
compiler's), in a folder laid out like the repository's (core/...), and asks the script."""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "tidy_units.py"

pytestmark = pytest.mark.skipif(not shutil.which("ninja") or not shutil.which("g++"),
                                reason="needs ninja and g++ (scripts/setup.sh installs both)")

SOURCES = {
    "core/shared/shared.h": "#pragma once\ninline int Shared() { return 1; }\n",
    "core/alpha/alpha.h": '#pragma once\n#include "core/shared/shared.h"\nint Alpha();\n',
    "core/alpha/alpha.cc": '#include "core/alpha/alpha.h"\nint Alpha() { return Shared(); }\n',
    "core/beta/beta.h": "#pragma once\nint Beta();\n",
    "core/beta/beta.cc": '#include "core/beta/beta.h"\nint Beta() { return 2; }\n',
    "core/gamma/gamma.cc": "int Gamma() { return 3; }\n",  # never built
}


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "repo"
    for name, text in SOURCES.items():
        write(root / name, text)
    build = root / "build"
    build.mkdir()
    entries = []
    edges = []
    for name in ("alpha", "beta", "gamma"):
        source = root / "core" / name / f"{name}.cc"
        output = f"{name}.o"
        entries.append({"directory": str(build), "file": str(source),
                        "command": f"g++ -I{root} -c {source} -o {output}"})
        edges.append(f"build {output}: cxx {source}")
    (build / "compile_commands.json").write_text(json.dumps(entries))
    (build / "build.ninja").write_text(
        "rule cxx\n"
        f"  command = g++ -MD -MF $out.d -I{root} -c $in -o $out\n"
        "  depfile = $out.d\n"
        "  deps = gcc\n" + "\n".join(edges) + "\n")
    subprocess.run(["ninja", "-C", str(build), "alpha.o", "beta.o"], check=True,
                   capture_output=True)
    return root


def select(root: Path, cache: Path, *arguments: str) -> dict[str, str]:
    """The units the script picks, as {source name: key}, and its summary on stderr."""
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(root / "build"), "--root", str(root), "--cache",
         str(cache), "--tidy-version", "clang-tidy test", "--args", "clang-tidy -p build",
         *arguments], capture_output=True, text=True, check=True)
    units = {}
    for line in result.stdout.splitlines():
        unit, key = line.split(" ")
        units[Path(unit).stem] = key
    return units


def test_a_header_change_reaches_every_unit_that_includes_it(project, tmp_path):
    # shared.h is included by alpha.h only: alpha is checked, beta is not; gamma has no
    # dependency record (never built), so it is checked whatever changed.
    units = select(project, tmp_path / "cache", "--changed", "core/shared/shared.h")
    assert set(units) == {"alpha", "gamma"}
    assert units["alpha"] != "-"
    assert units["gamma"] == "-", "a unit whose dependencies are unknown is never remembered"


def test_a_source_change_reaches_its_own_unit_only(project, tmp_path):
    units = select(project, tmp_path / "cache", "--changed", "core/beta/beta.cc")
    assert set(units) == {"beta", "gamma"}


def test_a_pass_with_the_same_content_is_not_checked_again(project, tmp_path):
    cache = tmp_path / "cache"
    first = select(project, cache, "--changed", "core/alpha/alpha.h")
    assert "alpha" in first
    (cache / first["alpha"]).touch()  # what lint.sh does when clang-tidy passes
    assert "alpha" not in select(project, cache, "--changed", "core/alpha/alpha.h")
    # New content is a new key, even with the same files named as changed.
    time.sleep(0.01)
    write(project / "core/shared/shared.h", SOURCES["core/shared/shared.h"] + "// edited\n")
    subprocess.run(["ninja", "-C", str(project / "build"), "alpha.o"], check=True,
                   capture_output=True)
    again = select(project, cache, "--changed", "core/alpha/alpha.h")
    assert "alpha" in again and again["alpha"] != first["alpha"]


def test_a_unit_built_before_an_edit_is_checked_and_not_remembered(project, tmp_path):
    # Its dependency record may lack an #include added since, so neither "untouched" nor a
    # remembered pass can be trusted.
    time.sleep(0.01)
    write(project / "core/beta/beta.h", SOURCES["core/beta/beta.h"] + "int BetaToo();\n")
    units = select(project, tmp_path / "cache", "--changed", "core/alpha/alpha.cc")
    assert units.get("beta") == "-"


@pytest.mark.parametrize("changed", [".clang-tidy", "scripts/lint.sh", "CMakeLists.txt",
                                     "core/beta/CMakeLists.txt", "cmake/Flags.cmake",
                                     "scripts/tidy_units.py"])
def test_a_change_to_the_checks_or_the_build_checks_everything(project, tmp_path, changed):
    units = select(project, tmp_path / "cache", "--changed", changed)
    assert set(units) == {"alpha", "beta", "gamma"}


def test_full_checks_everything_and_ignores_the_cache(project, tmp_path):
    cache = tmp_path / "cache"
    units = select(project, cache, "--full")
    assert set(units) == {"alpha", "beta", "gamma"}
    for key in units.values():
        if key != "-":
            (cache / key).touch()
    assert set(select(project, cache, "--full")) == {"alpha", "beta", "gamma"}


def test_changes_are_counted_from_the_last_commit_on_a_clean_clone(project, tmp_path):
    # CI's case: main checked out, no origin/main ahead of it; the base is HEAD~1, and the
    # working tree's own edits count too.
    def git(*arguments):
        subprocess.run(["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t",
                        *arguments], check=True, capture_output=True)

    (project / ".gitignore").write_text("build/\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    write(project / "core/beta/beta.cc", SOURCES["core/beta/beta.cc"] + "// two\n")
    git("commit", "-q", "-am", "two")
    subprocess.run(["ninja", "-C", str(project / "build"), "alpha.o", "beta.o"], check=True,
                   capture_output=True)
    assert set(select(project, tmp_path / "cache")) == {"beta", "gamma"}
    time.sleep(0.01)
    write(project / "core/shared/shared.h", SOURCES["core/shared/shared.h"] + "// three\n")
    subprocess.run(["ninja", "-C", str(project / "build"), "alpha.o"], check=True,
                   capture_output=True)
    assert set(select(project, tmp_path / "cache")) == {"alpha", "beta", "gamma"}
    # An explicit base: nothing changed since the working tree's own commit but shared.h.
    assert set(select(project, tmp_path / "cache", "--base", "HEAD")) == {"alpha", "gamma"}


def test_commits_not_yet_checked_are_counted_from_the_last_one_checked_clean(project, tmp_path):
    # A push of several commits: the units the earlier ones touched are checked too, because
    # the base is the last commit a run passed on (a clean tree), not HEAD~1.
    cache = tmp_path / "cache"

    def git(*arguments):
        subprocess.run(["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t",
                        *arguments], check=True, capture_output=True)

    def rebuild():
        subprocess.run(["ninja", "-C", str(project / "build"), "alpha.o", "beta.o"], check=True,
                       capture_output=True)

    def confirm():
        subprocess.run([sys.executable, str(SCRIPT), str(project / "build"), "--root",
                        str(project), "--cache", str(cache), "--confirm"], check=True)

    (project / ".gitignore").write_text("build/\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    git("commit", "-q", "--allow-empty", "-m", "two")
    select(project, cache)
    confirm()  # "two" passed on a clean tree
    time.sleep(0.01)
    write(project / "core/shared/shared.h", SOURCES["core/shared/shared.h"] + "// three\n")
    git("commit", "-q", "-am", "three")
    write(project / "core/beta/beta.cc", SOURCES["core/beta/beta.cc"] + "// four\n")
    git("commit", "-q", "-am", "four")
    rebuild()
    assert set(select(project, cache)) == {"alpha", "beta", "gamma"}
    # Without a confirmed pass (the run failed), the record stays where it was.
    assert set(select(project, cache)) == {"alpha", "beta", "gamma"}
    confirm()
    assert set(select(project, cache)) == {"gamma"}, "only the unit never built is left"


def test_a_build_change_rechecks_only_what_did_not_pass_with_the_same_content(project, tmp_path):
    # A CMakeLists.txt change makes every unit a candidate, but a unit whose compile command and
    # files are those of a remembered pass is not checked again; a change to the checks
    # themselves (.clang-tidy) is in every key, so nothing is skipped.
    cache = tmp_path / "cache"
    write(project / ".clang-tidy", "Checks: bugprone-*\n")
    for key in select(project, cache, "--full").values():
        if key != "-":
            (cache / key).touch()
    assert set(select(project, cache, "--changed", "core/beta/CMakeLists.txt")) == {"gamma"}
    write(project / ".clang-tidy", "Checks: bugprone-*,performance-*\n")
    assert set(select(project, cache, "--changed", ".clang-tidy")) == {"alpha", "beta", "gamma"}
