"""Fuzzy matching of a typed query against paths and names (the `@` file list, the MCP
offers): which match, best first."""

from __future__ import annotations


def fuzzy_score(query: str, path: str) -> int | None:
    """How well `query`'s characters appear in order in `path` (higher is better), or None.

    Runs of adjacent characters, matches at the start of a name or after a separator,
    and matches in the file name (not its folders) score more; longer paths a bit less.
    """
    if not query:
        return 0
    lowered = path.lower()
    name_start = lowered.rstrip("/").rfind("/") + 1
    score = 0
    position = 0
    previous = -2
    for char in query.lower():
        found = lowered.find(char, position)
        if found < 0:
            return None
        score += 1
        if found == previous + 1:
            score += 5
        if found == 0 or lowered[found - 1] in "/_-. ":
            score += 8
        if found >= name_start:
            score += 2
        previous = found
        position = found + 1
    name = lowered[name_start:]
    wanted = query.lower()
    if wanted in name:
        score += 20 + (15 if name.startswith(wanted) else 0) + (30 if name == wanted else 0)
    return score * 4 - len(path) // 4


def fuzzy_rank(query: str, paths: list[str], limit: int = 50) -> list[str]:
    scored = []
    for path in paths:
        score = fuzzy_score(query, path)
        if score is not None:
            scored.append((-score, path))
    scored.sort()
    return [path for _, path in scored[:limit]]
