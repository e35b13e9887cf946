"""The shadow git repository of one project folder: where it lives and how git runs.

Git runs through the app's one runner (`core.git`), always hardened, as an asyncio
subprocess with a minimal environment: no system or user configuration, no hooks,
fsmonitor, filters or external diffs, submodules ignored, no pager or prompt, HOME
pointed at the shadow folder. GIT_DIR is the shadow repository and GIT_WORK_TREE the
project, so the project's own `.git` (HEAD, index, refs, stash, hooks, config) is never
written or read as configuration; its `info/exclude` is read (see `snapshot`).
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from melgui.core.config.digests import sha1_hex, sha256_hex
from melgui.core.git import GitError, git_available, run_async

GIT_TIMEOUT = 600.0  # seconds; a snapshot of a huge tree is slow, never endless

_CONFIG = (
    ("core.bare", "false"),
    ("core.logAllRefUpdates", "false"),
    ("core.hooksPath", os.devnull),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.symlinks", "true"),
    ("core.filemode", "true"),
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "true"),
    # The index in two files: the entries of the last full write (shared) and what
    # changed since. A checkpoint's update-index and write-tree each rewrite the index;
    # with the split they write tens of kilobytes, not every entry again (a megabyte
    # for 10,000 files). An old shared file goes an hour after a newer one is written.
    ("core.splitIndex", "true"),
    ("splitIndex.sharedIndexExpire", "1.hour.ago"),
    ("core.quotePath", "false"),
    ("core.bigFileThreshold", "1m"),
    ("core.looseCompression", "1"),
    ("core.compression", "1"),
    ("commit.gpgSign", "false"),
    ("status.showUntrackedFiles", "all"),
    ("gc.auto", "0"),
    ("advice.addEmbeddedRepo", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("user.name", "melgui"),
    ("user.email", "checkpoints@melgui.invalid"),
)


_MARK_PREFIX = "# melgui checkpoints"
_CONFIG_MARK = f"{_MARK_PREFIX} v3"
# Who and when every snapshot commit says (the shadow environment's fixed date and
# `user.*` above): a commit is the same bytes whenever its tree and parent are.
_IDENTITY = "melgui <checkpoints@melgui.invalid> 946684800 +0000"


def _config_text() -> str:
    sections: dict[str, list[str]] = {}
    for key, value in _CONFIG:
        section, name = key.split(".")
        sections.setdefault(section, []).append(f"\t{name} = {value}\n")
    body = "".join(f"[{name}]\n" + "".join(lines) for name, lines in sections.items())
    return f"{_CONFIG_MARK}\n{body}"


def _own_part(text: str) -> str:
    """What `git init` wrote of a shadow repository's configuration: all before our
    settings (of any version), which follow it."""
    own = text.partition(_MARK_PREFIX)[0]
    return own if own.endswith("\n") or not own else own + "\n"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


__all__ = ["GitError", "ShadowRepo", "git_available", "shadow_root"]


def shadow_root(data_folder: Path, project: str) -> Path:
    """The shadow folder of `project` (a canonical path) inside `data_folder`."""
    digest = sha256_hex(project.encode("utf-8", "surrogateescape"))[:16]
    return data_folder / "checkpoints" / f"{Path(project).name or 'root'}-{digest}"


class ShadowRepo:
    """Runs git on the shadow repository of `project`, creating it on first use."""

    def __init__(self, root: Path, project: str) -> None:
        self.root = root
        self.project = project
        self.git_dir = root / "git"
        self.home = root / "home"
        self._ready = False

    def env(self) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home),
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": self.project,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_PAGER": "cat",
            "LC_ALL": "C",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
        }
        return env

    async def ensure(self) -> None:
        """Create the shadow repository once (idempotent, safe after a kill)."""
        if self._ready:
            return
        if not git_available():
            raise GitError("checkpoints need git, which is not installed")
        self.home.mkdir(parents=True, exist_ok=True)
        config = self.git_dir / "config"
        text = _read(config)
        if not all((self.git_dir / name).exists() for name in ("HEAD", "refs", "objects")):
            # New, or a `git init` cut short (it writes HEAD before objects/): init again,
            # past the lock files the killed git left (the caller holds the folder lock).
            for name in ("config.lock", "HEAD.lock"):
                (self.git_dir / name).unlink(missing_ok=True)
            if _MARK_PREFIX in text:  # git init sets keys our part sets again: not twice
                _replace(config, _own_part(text).encode("utf-8"), 0o644)
            await self.run("init", "--quiet", "--bare", str(self.git_dir), work_tree=False)
            text = _read(config)
        if _CONFIG_MARK not in text:  # new, or an older melgui's settings: ours replace them
            _replace(config, (_own_part(text) + _config_text()).encode("utf-8"), 0o644)
        (self.git_dir / "info").mkdir(exist_ok=True)
        (self.root / "project").write_text(self.project + "\n", encoding="utf-8")
        self._ready = True

    async def run(
        self, *args: str, stdin: bytes | None = None, work_tree: bool = True, check: bool = True
    ) -> bytes:
        """Run `git args` and return its stdout; GitError on a non-zero exit when `check`."""
        env = self.env()
        if not work_tree:
            env.pop("GIT_WORK_TREE")
            env.pop("GIT_DIR")
        try:
            done = await run_async(
                args,
                self.project if work_tree else str(self.root),
                hardened=True,
                own_config=True,
                env=env,
                stdin=stdin,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except GitError as exc:
            if not git_available():
                raise GitError("checkpoints need git, which is not installed") from exc
            raise
        if check and done.code != 0:
            text = done.err.strip().splitlines()
            raise GitError(f"git {args[0]} failed: {text[-1] if text else done.code}")
        return done.out

    def commit(self, tree: str, parent: str | None) -> str | None:
        """Write the commit of `tree` on `parent` as `git commit-tree -m checkpoint`
        would (the same bytes, so the same id) and make it HEAD as `git update-ref HEAD`
        would, without starting git twice; None (nothing written) when the repository's
        ids are not SHA-1 ones, for git to do it.

        Only the holder of the folder's lock writes the shadow repository: the ref is
        written to a temporary file and renamed over the old one, as git does.
        """
        if len(tree) != 40 or (parent is not None and len(parent) != 40):
            return None
        lines = [f"tree {tree}", *([f"parent {parent}"] if parent else [])]
        lines += [f"author {_IDENTITY}", f"committer {_IDENTITY}", "", "checkpoint", ""]
        body = "\n".join(lines).encode("ascii")
        raw = b"commit %d\0" % len(body) + body
        commit = sha1_hex(raw)  # a few hundred bytes: Python's own sha1 (digests.py)
        target = self.git_dir / "objects" / commit[:2] / commit[2:]
        if not target.exists():
            _replace(target, zlib.compress(raw, 1), 0o444)
        head = _read(self.git_dir / "HEAD").strip()
        ref = head[5:] if head.startswith("ref: refs/") else "HEAD"
        _replace(self.git_dir / ref, f"{commit}\n".encode("ascii"), 0o644)
        return commit


def _replace(target: Path, data: bytes, mode: int) -> None:
    """Write `target` whole: a temporary file beside it, then renamed over it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
