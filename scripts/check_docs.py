#!/usr/bin/env python3
"""Checks that what the README and docs/*.md name exists: files and folders of the repository,
the sections they point into, and the commands, subcommands and flags they tell a reader to run.

What counts as a name, so that prose and examples from a cluster are left alone:
  - a path of the repository: a link target, or a word in `code` or in a shell block whose first
    folder is one of the repository's own (core/, docs/, e2e/, ...); in prose, such a path
    ending in a file extension. A path outside the repository (/var/lib/..., ~/.kube/config), a
    URL and a placeholder (<name>, ..., REVISION) are not checked. `a.h/.cc` names a.h and a.cc;
    a glob must match something.
  - a link's #anchor and a section named after a document (docs/benchmarks.md, "Hollow agents"):
    a heading of that document.
  - a command: `kubectl modelplane VERB --flag`, `modelplane-node-agent SUBCOMMAND --flag` and the
    other binaries, and scripts of the repository (`bench/fleet/run.sh --replicas 8`,
    `e2e/cluster.sh up`). A binary's subcommand must be a string literal and each flag appear in
    a CLI11 option name in its sources; a script's first lower-case word and each flag must
    appear in the script (or a file beside it, for scripts that hand their flags on). Arguments
    after `--` belong to another program and are not checked. A command shown failing (the
    next line of its block starts `error: unknown`) is not checked.
  - the README's tour of the folders: it names every module of core/, operator/ and node-agent/.
Shell blocks are ```sh/bash/shell blocks (every line) and other fenced blocks' `$ ` lines.

Usage: scripts/check_docs.py [--root DIR] [FILE.md ...]   (default: README.md, docs/*.md and
the top folders' READMEs, such as e2e/README.md). Prints one line per problem, FILE:LINE: what;
exits 1 if there is any.
Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Extensions that make a word in prose a file name (outside `code`, a path needs one).
FILE_EXTENSIONS = (".md", ".sh", ".py", ".h", ".cc", ".yaml", ".yml", ".json", ".jsonl",
                   ".csv", ".png", ".txt", ".proto", ".cmake", ".toml", ".cfg")
SHELL_LANGUAGES = {"sh", "bash", "shell", "zsh"}

# The binaries and where their flags are defined (every main goes through core/runtime; the
# commands that write revisions share core/manifest's execution flags).
BINARIES = {
    "kubectl-modelplane": ["kubectl-plugin", "core/manifest"],
    "modelplane-node-agent": ["node-agent", "core/runtime", "core/manifest"],
    "modelplane-operator": ["operator", "core/runtime"],
    "modelplane-scheduler-extender": ["scheduler-extender", "core/runtime"],
}
# Flags every CLI11 program has without defining them.
BUILTIN_FLAGS = {"--help", "-h"}

# Words that run the next word: `sudo x`, `env A=1 x`, `nice -n 15 x`, `time x`, `python3 x.py`.
WRAPPERS = {"sudo", "env", "time", "exec", "nohup", "setsid"}
INTERPRETERS = {"python", "python3", "bash", "sh", ".venv/bin/python", ".venv/bin/python3"}


@dataclass
class Problem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass
class Repository:
    root: Path
    top_level: set[str] = field(default_factory=set)
    _texts: dict[Path, str] = field(default_factory=dict)
    _headings: dict[Path, list[str]] = field(default_factory=dict)

    @staticmethod
    def open(root: Path) -> "Repository":
        repository = Repository(root)
        try:
            listed = subprocess.run(["git", "-C", str(root), "ls-files"], check=True,
                                    capture_output=True, text=True).stdout.split("\n")
            names = {name.split("/", 1)[0] for name in listed if "/" in name}
        except (OSError, subprocess.CalledProcessError):
            names = {entry.name for entry in root.iterdir() if entry.is_dir()}
        # Build outputs and tool state are never what a document means by a repository path.
        repository.top_level = {name for name in names
                                if not name.startswith(".") and name != "build"}
        return repository

    def text(self, path: Path) -> str:
        if path not in self._texts:
            try:
                self._texts[path] = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                self._texts[path] = ""
        return self._texts[path]

    def headings(self, path: Path) -> list[str]:
        """The document's headings, as text (markup and links removed)."""
        if path not in self._headings:
            headings = []
            in_fence = False
            for line in self.text(path).splitlines():
                if re.match(r"^\s*(```|~~~)", line):
                    in_fence = not in_fence
                elif not in_fence and (match := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)):
                    headings.append(plain_heading(match.group(1)))
                elif not in_fence and (match := re.match(r"^\*\*([^*]+)\*\*", line)):
                    # A paragraph that opens with its title in bold is a section too.
                    headings.append(plain_heading(match.group(1)))
            self._headings[path] = headings
        return self._headings[path]

    def ignored(self, path: str) -> bool:
        """Whether git ignores `path` (a build output or a virtual environment, never a file
        the repository holds)."""
        try:
            # A folder that does not exist matches a pattern such as ".venv/" only as "x/".
            answers = [subprocess.run(["git", "-C", str(self.root), "check-ignore", "-q", name],
                                      capture_output=True).returncode
                       for name in (path, path.rstrip("/") + "/")]
        except OSError:
            answers = [128]
        if 0 in answers:
            return True
        if 1 in answers:
            return False
        # Not a git repository: what .gitignore files name here, build folders and hidden ones.
        return any(part == "build" or part.startswith(".") for part in path.split("/"))

    def sources(self, folders: list[str]) -> str:
        """The C++ sources of `folders`, concatenated (for flag and subcommand look-ups)."""
        key = Path("\0".join(folders))
        if key not in self._texts:
            parts = []
            for folder in folders:
                for path in sorted((self.root / folder).rglob("*")):
                    if path.suffix in (".cc", ".h") and path.is_file():
                        parts.append(self.text(path))
            self._texts[key] = "\n".join(parts)
        return self._texts[key]


def script_word(text: str, name: str, word: str) -> bool:
    """Whether a script takes `word` as its first argument: a case label (`up)`, `down|stop)`),
    a quoted string ("up", argparse's choices), a comparison (== up), a list (=(a b up)) or its
    usage text (`NAME up`, `$0 up`, `[--keep|up|down]`). A word its prose or code merely uses
    (a function called `start`) does not count."""
    w = re.escape(word)
    edge_before, edge_after = r"(?<![\w-])", r"(?![\w-])"
    patterns = [
        rf"^[ \t]*\(?[\w|*. \t-]*{edge_before}{w}{edge_after}[\w|*. \t-]*\)",
        rf"[\"']{w}[\"']",
        rf"==?[ \t]*{w}{edge_after}",
        rf"=\([^)]*{edge_before}{w}{edge_after}[^)]*\)",
        rf"(?:{re.escape(name)}|\$0)[ \t]+\[?{w}{edge_after}",
        rf"[|\[]{w}{edge_after}|{edge_before}{w}\|",
    ]
    return any(re.search(pattern, text, re.MULTILINE) for pattern in patterns)


def plain_heading(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return text.strip()


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    slug = heading.lower()
    slug = re.sub(r"[^\w\- ]", "", slug)
    return slug.replace(" ", "-")


def anchors(headings: list[str]) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for heading in headings:
        slug = github_slug(heading.replace("`", ""))
        count = seen.get(slug, 0)
        result.add(slug if count == 0 else f"{slug}-{count}")
        seen[slug] = count + 1
    return result


class Checker:
    def __init__(self, repository: Repository, document: Path):
        self.repository = repository
        self.document = document
        self.relative = document.relative_to(repository.root).as_posix() \
            if document.is_relative_to(repository.root) else str(document)
        self.problems: list[Problem] = []
        self.checked: collections.Counter[str] = collections.Counter()
        self.line = 0

    def report(self, message: str) -> None:
        self.problems.append(Problem(self.relative, self.line, message))

    # Paths.

    def repository_path(self, word: str) -> str | None:
        """`word` as a path of the repository, or None when it does not name one."""
        word = word.strip("\"'`()[]{},;")
        word = word.rstrip(".:")
        if not word or "://" in word or word[0] in "/~$-":
            return None
        if any(mark in word for mark in ("<", ">", "...", "\u2026", "=", "$", "@", "%")):
            return None
        word = re.sub(r":\d+(-\d+)?$", "", word)
        word = word.split("#", 1)[0]
        if "/" not in word or word.split("/", 1)[0] not in self.repository.top_level:
            return None
        if not re.fullmatch(r"[\w./*?\-+]+", word):
            return None
        return word

    def check_path(self, path: str) -> None:
        # `read_engine.h/.cc`: read_engine.h and read_engine.cc.
        candidates = [path]
        if match := re.fullmatch(r"(.*/)?([^/]+?)(\.\w+)((?:/\.\w+)+)/?", path):
            folder, stem = match.group(1) or "", match.group(2)
            candidates = [folder + stem + extension
                          for extension in [match.group(3)] + match.group(4).split("/")[1:]]
        for candidate in candidates:
            self.checked["paths"] += 1
            is_glob = any(mark in candidate for mark in "*?")
            target = self.repository.root / candidate
            found = bool(glob.glob(str(target))) if is_glob else target.exists()
            if not found and not self.repository.ignored(candidate):
                what = "matches no file" if is_glob else "does not exist"
                self.report(f"`{candidate}` {what}")

    def check_link(self, target: str) -> None:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            return  # a URL (https:, mailto:)
        self.checked["links"] += 1
        path_part, _, anchor = target.partition("#")
        if not path_part:
            document = self.document
        else:
            document = (self.document.parent / path_part).resolve()
            if not document.exists():
                self.report(f"link target `{path_part}` does not exist")
                return
        if anchor and document.suffix == ".md":
            if anchor not in anchors(self.repository.headings(document)):
                self.report(f"no heading in {document.name} makes the anchor #{anchor}")

    def check_section(self, path: str, section: str) -> None:
        for base in (self.document.parent, self.repository.root):
            document = (base / path)
            if document.exists():
                break
        else:
            return  # the path itself is checked (and reported) elsewhere
        self.checked["sections"] += 1
        wanted = " ".join(section.split()).lower()
        if not any(wanted in heading.lower() for heading in self.repository.headings(document)):
            self.report(f"{path} has no section \"{' '.join(section.split())}\"")

    # Commands.

    def check_command(self, words: list[str], failing: bool) -> None:
        words = list(words)
        while words:
            word = words[0]
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word) or word in WRAPPERS:
                words.pop(0)
            elif word == "nice":
                words.pop(0)
                if words[:1] == ["-n"]:
                    words = words[2:]
            elif word in INTERPRETERS and len(words) > 1 and not words[1].startswith("-"):
                words.pop(0)
            else:
                break
        if not words:
            return
        program = words[0]
        arguments = words[1:]
        if program == "kubectl" and arguments[:1] == ["modelplane"]:
            program, arguments = "kubectl-modelplane", arguments[1:]
        name = program.rsplit("/", 1)[-1]
        if name in BINARIES:
            self.check_binary(name, arguments, failing)
        elif (path := self.repository_path(program)) and re.search(r"\.(sh|py)$", path):
            if (self.repository.root / path).is_file():
                self.check_script(path, arguments)

    def flags_and_first_word(self, arguments: list[str]) -> tuple[list[str], str | None]:
        flags: list[str] = []
        first_word = None
        for index, argument in enumerate(arguments):
            bare = argument.strip("[]")
            if bare == "--":
                break
            if bare.startswith("-"):
                flag = bare.split("=", 1)[0]
                if re.fullmatch(r"--?[A-Za-z][\w-]*", flag):
                    flags.append(flag)
            elif index == 0 and bare == argument:  # [seconds] is a placeholder
                first_word = argument
        return flags, first_word

    def check_binary(self, name: str, arguments: list[str], failing: bool) -> None:
        self.checked["commands"] += 1
        sources = self.repository.sources(BINARIES[name])
        flags, subcommand = self.flags_and_first_word(arguments)
        shown = "kubectl modelplane" if name == "kubectl-modelplane" else name
        if subcommand and not failing:
            for word in subcommand.split("|"):
                if re.fullmatch(r"[a-z][a-z0-9-]*", word) and f'"{word}"' not in sources:
                    self.report(f"`{shown} {word}`: no such subcommand in its sources")
        for flag in flags:
            if flag in BUILTIN_FLAGS:
                continue
            # A CLI11 name list: "--nodes", "-n,--namespace", "-o,--output".
            if not re.search(r'[",]' + re.escape(flag) + r'[",]', sources):
                self.report(f"`{shown} {flag}`: no such flag in its sources")

    def check_script(self, path: str, arguments: list[str]) -> None:
        self.checked["commands"] += 1
        script = self.repository.root / path
        flags, first_word = self.flags_and_first_word(arguments)
        texts = [self.repository.text(script)]
        # A script may hand its flags to a program beside it (bench/fleet/run.sh to fleet.py).
        texts += [self.repository.text(sibling) for sibling in sorted(script.parent.iterdir())
                  if sibling != script and sibling.is_file()
                  and sibling.suffix in (".sh", ".py", ".cc")]

        def mentioned(word: str) -> bool:
            pattern = re.compile(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])")
            return any(pattern.search(text) for text in texts)

        if first_word and re.fullmatch(r"[a-z][a-z0-9-]*", first_word):
            if not script_word(self.repository.text(script), script.name, first_word):
                self.report(f"`{path} {first_word}`: the script does not know \"{first_word}\"")
        for flag in flags:
            if flag not in BUILTIN_FLAGS and not mentioned(flag):
                self.report(f"`{path} {flag}`: the script has no such flag")

    def check_shell_line(self, line: str, failing: bool) -> None:
        line = re.sub(r"(^|\s)#.*$", "", line)
        for command in re.split(r"&&|\|\||[;|&]|\$\(|\)", line):
            try:
                words = shlex.split(command)
            except ValueError:
                words = command.split()
            for word in words:
                if path := self.repository_path(word):
                    self.check_path(path)
            self.check_command(words, failing)

    # Documents.

    def check_prose(self, text: str) -> None:
        spans = []

        def keep_span(match: re.Match) -> str:
            spans.append(match.group(2))
            return " \0 "

        prose = re.sub(r"(`+)(.+?)\1", keep_span, text, flags=re.DOTALL)
        for span in spans:
            self.check_span(span)
        for match in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", prose):
            self.check_link(match.group(1))
        prose = re.sub(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", " ", prose)
        for match in re.finditer(r"[\w./*-]+", prose):
            path = self.repository_path(match.group(0))
            if path and path.endswith(FILE_EXTENSIONS):
                self.check_path(path)

    def check_sections(self, text: str) -> None:
        """`docs/benchmarks.md, "Hollow agents"`, in prose or code: the section must exist."""
        plain = text.replace("`", "")
        for match in re.finditer(r"([\w./-]+\.md)\)?,? \(?\"([^\"]+)\"", plain):
            self.check_section(match.group(1), match.group(2))

    def check_span(self, span: str) -> None:
        try:
            words = shlex.split(span)
        except ValueError:
            words = span.split()
        if not words:
            return
        for word in words:
            if path := self.repository_path(word):
                self.check_path(path)
        self.check_command(words, failing=False)

    def check_tour(self, lines: list[str]) -> None:
        """The README's tour of the folders names every module folder of the libraries (a folder
        with its own CMakeLists.txt under core/, operator/ and node-agent/)."""
        start = next((index for index, line in enumerate(lines)
                      if re.match(r"^#+\s+A tour of the folders", line)), None)
        if start is None:
            self.line = 1
            self.report("the README has no section \"A tour of the folders\"")
            return
        end = next((index for index in range(start + 1, len(lines))
                    if re.match(r"^#+\s", lines[index])), len(lines))
        tour = "\n".join(lines[start:end])
        self.line = start + 1
        for library in ("core", "operator", "node-agent"):
            for folder in sorted((self.repository.root / library).glob("*/CMakeLists.txt")):
                self.checked["modules"] += 1
                if f"`{folder.parent.name}`" not in tour:
                    self.report(f"the tour of the folders does not name {library}/"
                                f"{folder.parent.name} (as `{folder.parent.name}`)")

    def run(self) -> list[Problem]:
        lines = self.repository.text(self.document).splitlines()
        if self.document == self.repository.root / "README.md":
            self.check_tour(lines)
        fence = None  # the open fence's marker and language
        paragraph: list[tuple[int, str]] = []

        def flush() -> None:
            # Prose is checked a paragraph at a time: a `code span` or [link](target) may wrap.
            if paragraph:
                self.line = paragraph[0][0]
                text = "\n".join(part for _, part in paragraph)
                self.check_prose(text)
                self.check_sections(text)
                paragraph.clear()

        index = 0
        while index < len(lines):
            line = lines[index]
            number = index + 1
            index += 1
            marker = re.match(r"^\s*(```+|~~~+)\s*([\w+-]*)", line)
            if fence is None and marker:
                flush()
                fence = (marker.group(1), marker.group(2).lower())
                continue
            if fence is not None:
                if line.strip().startswith(fence[0]):
                    fence = None
                    continue
                language = fence[1]
                command = None
                if language in SHELL_LANGUAGES:
                    command = line
                elif line.startswith("$ "):
                    command = line[2:]
                if command is None:
                    continue
                # Continuation lines belong to the command.
                while command.endswith("\\") and index < len(lines):
                    command = command[:-1] + " " + lines[index]
                    index += 1
                following = lines[index] if index < len(lines) else ""
                self.line = number
                self.check_shell_line(command, following.startswith("error: unknown"))
                self.check_sections(command)
                continue
            if not line.strip():
                flush()
            else:
                paragraph.append((number, line))
        flush()
        return self.problems


def default_documents(repository: Repository) -> list[Path]:
    # The top folders' own READMEs (e2e/, tests/) too; deeper ones are third-party test data.
    root = repository.root
    return ([root / "README.md"] + sorted((root / "docs").glob("*.md")) +
            sorted(root / folder / "README.md" for folder in repository.top_level
                   if (root / folder / "README.md").is_file()))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the repository (default: this script's)")
    parser.add_argument("documents", nargs="*", type=Path, help="Markdown files to check")
    options = parser.parse_args(argv)
    root = options.root.resolve()
    repository = Repository.open(root)
    documents = [path.resolve() for path in options.documents] or default_documents(repository)
    problems: list[Problem] = []
    checked: collections.Counter[str] = collections.Counter()
    for document in documents:
        if not document.is_file():
            problems.append(Problem(str(document), 0, "no such document"))
            continue
        checker = Checker(repository, document)
        problems += checker.run()
        checked += checker.checked
    for problem in problems:
        print(problem)
    counts = ", ".join(f"{checked[kind]} {kind}"
                       for kind in ("paths", "links", "sections", "commands", "modules"))
    print(f"check_docs: {len(documents)} documents ({counts}): {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
