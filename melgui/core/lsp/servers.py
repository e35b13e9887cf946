"""Which language server serves a file: per language, the installed servers in order, or
the command the person configured for that language.

Nothing is downloaded: a server is used when its program is on PATH (or in the project's
`node_modules/.bin`). pylsp reports nothing without its pyflakes plugin installed beside
it; typescript-language-server needs `typescript` beside it (the project's or its own).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ServerFailed(Exception):
    """The server could not start, or stopped answering; the message says why."""


def server_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A server's environment: PATH, HOME, the user, the locale, TMPDIR; nothing else."""
    source = os.environ if base is None else base
    names = ("PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ")
    env: dict[str, Any] = {n: source[n] for n in names if n in source}
    env.setdefault("PATH", "/usr/bin:/bin")
    return env


@dataclass(frozen=True, slots=True)
class Language:
    name: str  # the key people configure ("python", "typescript", …)
    suffixes: tuple[str, ...]
    candidates: tuple[tuple[str, ...], ...]  # server commands, preferred first

    def language_id(self, path: str) -> str:
        """The LSP languageId of `path` (typescript serves .js as javascript, …)."""
        return _IDS.get(os.path.splitext(path)[1].lower(), self.name)


LANGUAGES: tuple[Language, ...] = (
    Language(
        "python",
        (".py", ".pyi"),
        (("basedpyright-langserver", "--stdio"), ("pyright-langserver", "--stdio"), ("pylsp",)),
    ),
    Language(
        "typescript",
        (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"),
        (("typescript-language-server", "--stdio"),),
    ),
    Language("go", (".go",), (("gopls",),)),
    Language("rust", (".rs",), (("rust-analyzer",),)),
    Language("c", (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp"), (("clangd",),)),
)
_IDS = {
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".jsx": "javascriptreact",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
}


def language_of(path: str) -> Language | None:
    suffix = os.path.splitext(path)[1].lower()
    return next((lang for lang in LANGUAGES if suffix in lang.suffixes), None)


def server_command(
    language: Language,
    project: str,
    configured: Mapping[str, Sequence[str]] | None = None,
    path: str | None = None,
) -> list[str] | None:
    """The command that starts `language`'s server for `project`, or None when none is
    installed. A configured command (`{"python": ["pylsp"]}`) wins; [] turns it off."""
    search = os.pathsep.join(
        p
        for p in (str(Path(project) / "node_modules" / ".bin"), path or os.environ.get("PATH"))
        if p
    )
    chosen = (configured or {}).get(language.name)
    candidates = (tuple(chosen),) if chosen is not None else language.candidates
    for argv in candidates:
        if not argv:
            return None
        found = shutil.which(argv[0], path=search)
        if found is not None:
            return [found, *argv[1:]]
    return None
