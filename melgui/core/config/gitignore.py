"""`.gitignore` rules, as git and ripgrep read them, for the pure-Python walker (pathspec)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


class IgnoreFile:
    """The rules of one .gitignore, matched against paths relative to its folder.

    pathspec's `GitIgnoreSpec` reads the lines as git does (the last matching rule
    wins, `!` re-includes, a trailing `/` matches folders only, escaped `\\#`, `\\!`
    and trailing spaces). A line git cannot read either (a lone `!`, a trailing
    backslash) is skipped instead of spoiling the whole file.
    """

    def __init__(self, spec: GitIgnoreSpec) -> None:
        self.spec = spec

    @classmethod
    def parse(cls, text: str) -> IgnoreFile:
        # pathspec is imported by the first .gitignore read, not at every start.
        from pathspec import GitIgnoreSpec
        from pathspec.patterns.gitignore import GitIgnorePatternError

        lines = []
        for line in text.splitlines():
            try:
                GitIgnoreSpec.from_lines([line])
            except GitIgnorePatternError:
                continue
            lines.append(line)
        return cls(GitIgnoreSpec.from_lines(lines))

    @property
    def empty(self) -> bool:
        """No line of the file is a rule (blanks and comments only)."""
        return not any(pattern.include is not None for pattern in self.spec.patterns)

    def verdict(self, relative: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a `!` rule, None: no rule matched."""
        return self.spec.check_file(relative + "/" if is_dir else relative).include
