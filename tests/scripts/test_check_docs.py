"""scripts/check_docs.py: the repository's documents pass, and one planted wrong name (a path, a
link, an anchor, a section, a subcommand, a flag, a module left out of the README's tour) fails
the check with a line that names it, while names outside the repository do not.

Each test checks a copy of a real document inside a copy of the repository made of symbolic
links (every top-level entry links to the real one, docs/ is a folder of links), so the copy is
checked against the real tree and only what the test planted differs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKER = ROOT / "scripts" / "check_docs.py"


def run_checker(root: Path, *documents: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECKER), "--root", str(root),
                           *map(str, documents)], capture_output=True, text=True, timeout=120)


@pytest.fixture
def repository(tmp_path):
    """A copy of the repository made of links, with docs/ a real folder (of links) so a test can
    put its own document there."""
    copy = tmp_path / "repo"
    copy.mkdir()
    for entry in ROOT.iterdir():
        if entry.name in ("docs", "README.md", ".git") or entry.name.startswith("build"):
            continue
        (copy / entry.name).symlink_to(entry)
    (copy / "docs").mkdir()
    for entry in (ROOT / "docs").iterdir():
        (copy / "docs" / entry.name).symlink_to(entry)
    (copy / "README.md").symlink_to(ROOT / "README.md")
    return copy


def plant(repository: Path, relative: str, text: str) -> Path:
    """Replaces the repository copy's `relative` document with `text`."""
    path = repository / relative
    path.unlink()
    path.write_text(text, encoding="utf-8")
    return path


def real(relative: str) -> str:
    return (ROOT / relative).read_text(encoding="utf-8")


def test_the_repositorys_documents_pass():
    result = run_checker(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 problems" in result.stdout


def test_an_unchanged_copy_passes(repository):
    # The control for the tests below: only what they plant can fail.
    document = plant(repository, "docs/kubectl-plugin.md", real("docs/kubectl-plugin.md"))
    readme = plant(repository, "README.md", real("README.md"))
    result = run_checker(repository, document, readme)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("planted, expected", [
    # A path in `code`, in prose and as a link, a link's anchor, a section.
    ("See `node-agent/fetch/fetch_engin.h`.", "`node-agent/fetch/fetch_engin.h` does not exist"),
    ("Results in bench/hollow/result.jsonl.", "`bench/hollow/result.jsonl` does not exist"),
    ("See [the API](api-reference.md).", "link target `api-reference.md` does not exist"),
    ("See [alerts](helm.md#alert-rules).", "no heading in helm.md makes the anchor #alert-rules"),
    ("As measured (docs/benchmarks.md, \"Hollow agent fleet\").",
     "docs/benchmarks.md has no section \"Hollow agent fleet\""),
    ("Pieces: `node-agent/loader/read_engine.h/.cpp`.",
     "`node-agent/loader/read_engine.cpp` does not exist"),
    ("All of `tests/node-agent/loader/test_*.rs`.", "`tests/node-agent/loader/test_*.rs` matches"),
    # Commands: the plugin's verbs and flags, the agent's subcommands, scripts' words and flags.
    ("Run `kubectl modelplane statuz llama`.", "`kubectl modelplane statuz`: no such subcommand"),
    ("Run `kubectl modelplane prestage llama --copies 3`.",
     "`kubectl modelplane --copies`: no such flag"),
    ("```sh\nmodelplane-node-agent fetch --revision r.yaml --cache-dir /var/cache\n```",
     "`modelplane-node-agent --cache-dir`: no such flag"),
    ("```sh\nmodelplane-node-agent prefetch --revision r.yaml\n```",
     "`modelplane-node-agent prefetch`: no such subcommand"),
    ("Then `bench/fleet/run.sh --replica 8`.", "`bench/fleet/run.sh --replica`: the script has no"),
    ("```sh\ne2e/cluster.sh start\n```", "`e2e/cluster.sh start`: the script does not know"),
    ("```sh\nscripts/tests.sh --skip-e2e\n```", "`scripts/tests.sh` does not exist"),
])
def test_a_planted_wrong_name_fails(repository, planted, expected):
    document = plant(repository, "docs/kubectl-plugin.md",
                     real("docs/kubectl-plugin.md") + "\n" + planted + "\n")
    result = run_checker(repository, document)
    assert result.returncode == 1, result.stdout + result.stderr
    problems = [line for line in result.stdout.splitlines() if not line.startswith("check_docs:")]
    assert len(problems) == 1, result.stdout
    assert problems[0].startswith("docs/kubectl-plugin.md:"), problems[0]
    assert expected in problems[0], problems[0]


def test_a_module_left_out_of_the_tour_fails(repository):
    readme = real("README.md").replace("| `workqueue` |", "| `work queue` |")
    document = plant(repository, "README.md", readme)
    result = run_checker(repository, document)
    assert result.returncode == 1
    assert "does not name core/workqueue" in result.stdout, result.stdout


@pytest.mark.parametrize("text", [
    # Paths of a node, a pod or a home folder; placeholders; URLs; names that are not paths.
    "The cache lives in `/var/lib/modelplane/cache` and `~/.cache/modelplane`.",
    "Sockets: `<kubeletDir>/plugins/csi.modelplane.io`; blobs: `<cache-root>/blobs/sha256/<hex>`.",
    "See https://github.com/kubernetes/kubernetes/blob/master/docs/README.md for more.",
    "The annotation `modelplane.io/revision: <name>`; the resource `nvidia.com/gpu`.",
    "A node's `blobs/`, `pki/` and `tmp/view-<hex>` folders.",
    "Build outputs: `python/build/temp.*/cmake`, `bench/loader/.venv/bin/python`.",
    # A command shown failing, and arguments that belong to another program.
    "```\n$ kubectl modelplane stauts x\nerror: unknown verb \"stauts\"\n```",
    "`scripts/lint.sh --tidy build/ci -- --checks='clang-analyzer-*'`",
])
def test_names_outside_the_repository_pass(repository, text):
    document = plant(repository, "docs/kubectl-plugin.md",
                     real("docs/kubectl-plugin.md") + "\n" + text + "\n")
    result = run_checker(repository, document)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_missing_document_is_not_a_pass(tmp_path):
    # The checker reads what it is given; a typo in its own arguments must not look clean.
    result = run_checker(ROOT, tmp_path / "absent.md")
    assert result.returncode != 0
