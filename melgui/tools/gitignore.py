"""`.gitignore` rules, as git and ripgrep read them, for the pure-Python walker."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    pattern: re.Pattern[str]
    negated: bool
    dir_only: bool


def _translate(glob: str) -> str:
    """A gitignore glob (already anchored or prefixed with **/) as a regex body."""
    out: list[str] = []
    i = 0
    n = len(glob)
    while i < n:
        if glob.startswith("**/", i) and (i == 0 or glob[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i) and i + 2 == n and (i == 0 or glob[i - 1] == "/"):
            out.append(".*")
            i += 2
            continue
        char = glob[i]
        if char == "*":
            while i + 1 < n and glob[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        elif char == "[":
            end = glob.find("]", i + 2 if glob.startswith(("[!", "[^"), i) else i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = glob[i + 1 : end]
                if body.startswith(("!", "^")):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def parse_rule(line: str) -> IgnoreRule | None:
    """One line of a .gitignore; None for blanks and comments."""
    line = line.rstrip("\r\n")
    # Trailing spaces are dropped unless escaped with a backslash.
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated or line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    glob = line if anchored else "**/" + line
    try:
        pattern = re.compile(_translate(glob) + r"\Z", re.DOTALL)
    except re.error:
        return None
    return IgnoreRule(pattern, negated, dir_only)


class IgnoreFile:
    """The rules of one .gitignore, matched against paths relative to its folder."""

    def __init__(self, rules: list[IgnoreRule]) -> None:
        self.rules = rules

    @classmethod
    def parse(cls, text: str) -> IgnoreFile:
        rules = [rule for rule in map(parse_rule, text.splitlines()) if rule is not None]
        return cls(rules)

    def verdict(self, relative: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a `!` rule, None: no rule matched."""
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.pattern.match(relative):
                return not rule.negated
        return None
