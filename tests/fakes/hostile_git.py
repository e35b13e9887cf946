"""A repository whose configuration runs a command through every key git has for it.

Each command writes a marker file of its own (`markers/<name>`) and, for hooks, the
environment it saw (`markers/env-<name>`), so a test can name exactly what ran and
whether an API key reached it. The same configuration goes into the top-level `.git`,
into a nested repository (`vendor/lib/.git`) and into a git directory a `.git` file
points to (`linked/.git`), with `.gitattributes` naming its drivers for every file.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

HOOKS = (
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit",
    "pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase",
    "post-checkout", "post-merge", "pre-push", "pre-receive", "update",
    "proc-receive", "post-receive", "post-update", "reference-transaction",
    "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
    "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist",
    "p4-pre-submit", "post-index-change",
)  # fmt: skip

# key -> marker name; every value is a script that writes its marker.
COMMAND_KEYS = {
    "core.fsmonitor": "fsmonitor",
    "filter.evil.clean": "filter-clean",
    "filter.evil.smudge": "filter-smudge",
    "filter.evilp.process": "filter-process",
    "diff.external": "diff-external",
    "diff.evil.textconv": "diff-textconv",
    "diff.evil.command": "diff-command",
    "merge.evil.driver": "merge-driver",
    "core.pager": "core-pager",
    "pager.status": "pager-status",
    "pager.diff": "pager-diff",
    "pager.log": "pager-log",
    "core.editor": "core-editor",
    "sequence.editor": "sequence-editor",
    "core.sshCommand": "ssh-command",
    "core.askPass": "askpass",
    "credential.helper": "credential-helper",
    "gpg.program": "gpg-program",
}
INCLUDED_KEYS = {
    "filter.included.clean": "include-path-filter",
    "core.fsmonitor": "include-fsmonitor",
}
INCLUDE_IF_KEYS = {
    "filter.includedif.clean": "include-if-filter",
    "diff.external": "include-if-diff",
}

ATTRIBUTES = (
    "* filter=evil diff=evil merge=evil\n"
    "*.txt filter=included\n"
    "*.cfg filter=includedif\n"
    "*.proc filter=evilp\n"
)
API_KEY = "sk-hostile-test-key-0123456789"


def _script(path: Path, marker: Path, *, passthrough: bool = False) -> str:
    """An executable that writes `marker` (and its environment) and then behaves like
    `cat` (filters) or succeeds."""
    body = f'#!/bin/sh\nenv > "{marker.parent}/env-{marker.name}"\ntouch "{marker}"\n'
    body += "cat\n" if passthrough else "exit 0\n"
    path.write_text(body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def _config_lines(keys: dict[str, str], scripts: Path, markers: Path) -> list[str]:
    lines: list[str] = []
    for key, name in keys.items():
        script = _script(scripts / name, markers / name, passthrough=key.startswith("filter."))
        lines.append(f"{key}={script}")
    return lines


def _write_config(config: Path, pairs: list[str], extra: str) -> None:
    sections: dict[str, list[str]] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        section, _, name = key.rpartition(".")
        sections.setdefault(section, []).append(f"\t{name} = {value}\n")
    text = ""
    for section, lines in sections.items():
        head, _, sub = section.partition(".")
        text += f'[{head} "{sub}"]\n' if sub else f"[{head}]\n"
        text += "".join(lines)
    with config.open("a", encoding="utf-8") as handle:
        handle.write(text + extra)


def plant(git_dir: Path, base: Path, markers: Path, tag: str) -> None:
    """Plant the hostile configuration and hooks in `git_dir` (markers named `tag-…`)."""
    scripts = base / f"scripts-{tag}"
    scripts.mkdir(parents=True, exist_ok=True)
    hooks = scripts / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in HOOKS:
        _script(hooks / hook, markers / f"{tag}-hook-{hook}")
        _script(git_dir / "hooks" / hook, markers / f"{tag}-dothook-{hook}")
    named = {key: f"{tag}-{name}" for key, name in COMMAND_KEYS.items()}
    pairs = _config_lines(named, scripts, markers)
    pairs += [f"core.hooksPath={hooks}", "commit.gpgSign=true", "filter.evil.required=true"]
    included = scripts / "included.cfg"
    inc_pairs = _config_lines({k: f"{tag}-{v}" for k, v in INCLUDED_KEYS.items()}, scripts, markers)
    included.write_text("")
    _write_config(included, inc_pairs, "")
    included_if = scripts / "included-if.cfg"
    if_pairs = _config_lines(
        {k: f"{tag}-{v}" for k, v in INCLUDE_IF_KEYS.items()}, scripts, markers
    )
    included_if.write_text("")
    _write_config(included_if, if_pairs, "")
    extra = f'[include]\n\tpath = {included}\n[includeIf "gitdir:/"]\n\tpath = {included_if}\n'
    _write_config(git_dir / "config", pairs, extra)


def _git(cwd: Path, *args: str) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"}
    env.update({"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"})
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _repo(folder: Path, files: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    _git(folder, "init", "-q", "-b", "main")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "init")


def hostile_project(base: Path) -> tuple[Path, Path]:
    """A project with hostile config in its `.git`, a nested repository and a linked one.

    Returns (project, markers). Committed before any config is planted, so the fixture's
    own git runs none of it.
    """
    project = base / "project"
    markers = base / "markers"
    markers.mkdir(parents=True)
    files = {
        "README.md": "# readme\n",
        "notes.txt": "notes\n",
        "app.cfg": "x=1\n",
        "data.proc": "p\n",
        ".gitattributes": ATTRIBUTES,
    }
    _repo(project, files)
    _repo(project / "vendor" / "lib", {"lib.txt": "lib\n", ".gitattributes": ATTRIBUTES})
    elsewhere = base / "elsewhere.git"
    _repo(base / "elsewhere", {"e.txt": "e\n", ".gitattributes": ATTRIBUTES})
    os.rename(base / "elsewhere" / ".git", elsewhere)
    linked = project / "linked"
    linked.mkdir()
    (linked / ".git").write_text(f"gitdir: {elsewhere}\n", encoding="utf-8")
    (linked / "e.txt").write_text("e\n", encoding="utf-8")
    (linked / ".gitattributes").write_text(ATTRIBUTES, encoding="utf-8")
    _git(linked, "config", "core.worktree", str(linked))
    plant(project / ".git", base, markers, "top")
    plant(project / "vendor" / "lib" / ".git", base, markers, "nested")
    plant(elsewhere, base, markers, "linked")
    return project, markers


def ran(markers: Path) -> list[str]:
    """The markers that appeared (the commands that ran)."""
    return sorted(p.name for p in markers.iterdir() if not p.name.startswith("env-"))


def leaked_keys(markers: Path) -> list[str]:
    """Markers whose command saw an API key in its environment."""
    return sorted(
        p.name
        for p in markers.iterdir()
        if p.name.startswith("env-") and "API_KEY" in p.read_text()
    )
