"""Where workers' changes meet: the files two of them both changed, the hunks likely to
conflict when both are merged (conflicts-to-be), and the functions both changed.

Hunks are compared on the base's line numbers, so only between worktrees with the same
base; between different bases the shared file is named and its hunks are not compared.
Two hunks conflict when their base lines overlap or touch (git's merge marks changes
with no unchanged line between them as a conflict). A file added, deleted or binary on
one side conflicts with any change to it on the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import combinations

from melgui.core.worktrees.overlap.touched import FileTouch, Hunk, Touched


@dataclass(frozen=True, slots=True)
class Overlap:
    """Agents `first` and `second` (keys, in order) both changed `path`."""

    first: str
    second: str
    path: str
    clashes: tuple[tuple[Hunk | None, Hunk | None], ...]  # None: the whole file
    symbols: tuple[str, ...]  # functions or classes both changed
    compared: bool  # the hunks were compared (same base)

    @property
    def conflict(self) -> bool:
        return bool(self.clashes)

    def other(self, key: str) -> str:
        return self.second if key == self.first else self.first


def find_overlaps(touched: Mapping[str, Touched]) -> tuple[Overlap, ...]:
    """Every pair of agents' shared files, by path then by agent order."""
    keys = list(touched)
    by_path: dict[str, list[str]] = {}
    for key in keys:
        for path in touched[key].files:
            by_path.setdefault(path, []).append(key)
    found: list[Overlap] = []
    for path in sorted(by_path):
        for first, second in combinations(by_path[path], 2):
            a, b = touched[first], touched[second]
            found.append(
                _overlap(first, second, path, a.files[path], b.files[path], a.base == b.base)
            )
    return tuple(found)


def _overlap(
    first: str, second: str, path: str, a: FileTouch, b: FileTouch, same_base: bool
) -> Overlap:
    symbols = tuple(name for name in a.symbols if name in b.symbols)
    clashes: list[tuple[Hunk | None, Hunk | None]] = []
    if a.whole or b.whole:
        clashes.append((None, None))
    elif same_base:
        clashes = [(x, y) for x in a.hunks for y in b.hunks if _meet(x, y)]
    return Overlap(first, second, path, tuple(clashes), symbols, same_base)


def _span(hunk: Hunk) -> tuple[float, float]:
    if hunk.count == 0:  # an insertion sits between line start and the next
        return hunk.start + 0.5, hunk.start + 0.5
    return float(hunk.start), float(hunk.start + hunk.count - 1)


def _meet(x: Hunk, y: Hunk) -> bool:
    """The base lines overlap or touch: no unchanged line between them."""
    x_lo, x_hi = _span(x)
    y_lo, y_hi = _span(y)
    return x_lo <= y_hi + 1 and y_lo <= x_hi + 1


# -- in words, for the board, the panes and the orchestrator -----------------------------


def describe(overlap: Overlap, key: str, name_of: Callable[[str], str]) -> str:
    """One line from `key`'s side: "notes.md, also changed by Pane 3 · …: 1 hunk likely
    to conflict (your line 4 against its lines 3–5); both change `parse`."""
    other = name_of(overlap.other(key))
    text = f"{overlap.path}, also changed by {other}"
    if overlap.conflict:
        text += ": " + _clashes(overlap, key)
    elif not overlap.compared:
        text += " (from a different base: hunks not compared)"
    else:
        text += ": different lines, likely to merge cleanly"
    if overlap.symbols:
        text += "; both change " + ", ".join(f"`{name}`" for name in overlap.symbols)
    return text + "."


def _clashes(overlap: Overlap, key: str) -> str:
    mine_first = key == overlap.first
    if overlap.clashes[0] == (None, None):
        return "a conflict to be (one side adds, deletes or replaces the whole file)"
    pairs = []
    for x, y in overlap.clashes[:3]:
        mine, theirs = (x, y) if mine_first else (y, x)
        if mine is not None and theirs is not None:
            pairs.append(f"your {mine.base_lines()} against its {theirs.base_lines()}")
    count = len(overlap.clashes)
    more = f" and {count - 3} more" if count > 3 else ""
    plural = "es" if count != 1 else ""
    return f"{count} hunk clash{plural} likely to conflict ({'; '.join(pairs)}{more})"


def overlaps_of(overlaps: tuple[Overlap, ...], key: str) -> list[Overlap]:
    return [o for o in overlaps if key in (o.first, o.second)]


def summary(overlaps: list[Overlap], key: str, name_of: Callable[[str], str]) -> str:
    """A short cell: "⚠ 2 files with Pane 3 (1 conflict to be)", "" when none."""
    if not overlaps:
        return ""
    others = dict.fromkeys(name_of(o.other(key)) for o in overlaps)
    conflicts = sum(o.conflict for o in overlaps)
    files = len({o.path for o in overlaps})
    text = f"{files} file{'s' if files != 1 else ''} shared with {', '.join(others)}"
    if conflicts:
        text += f" ({conflicts} conflict{'s' if conflicts != 1 else ''} to be)"
    return text


def unlisted_note(unlisted: Mapping[str, int], name_of: Callable[[str], str]) -> str:
    """ "Not compared: 4000 changed files of Pane 3 the host did not list." for the
    readings cut at FILES_MAX (`unlisted`: agent key -> files not listed); "" for none."""
    parts = [f"{count} changed files of {name_of(key)}" for key, count in unlisted.items()]
    return f"Not compared: {', '.join(parts)} the host did not list." if parts else ""
