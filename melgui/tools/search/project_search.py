"""grep and find_files: project-wide, .gitignore respected, ripgrep or the Python engine."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import re
import sys
from pathlib import Path

import melgui
from melgui.core.config.special_files import RuleFiles, WatchedRuleFiles
from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.core.protocol.tools.definition import Tool
from melgui.core.protocol.tools.search import FIND_FILES, GREP
from melgui.tools.context import ToolContext
from melgui.tools.search.glob_match import GlobMatcher, select_listed_records
from melgui.tools.search.rg_globs import ProjectRules, hidden_name_globs, top_hidden_folders
from melgui.tools.search.ripgrep import files_argv, find_ripgrep, glob_files_argv, grep_argv
from melgui.tools.search.search_process import (
    Searches,
    SearchRun,
    Select,
    in_search_thread,
    run_search,
)
from melgui.tools.settings import ToolSettings

# Matches kept beyond what is shown, so the note can say how many there are.
_COLLECT_FACTOR = 10
# A listing is read at rg's exit, or this often before: most end sooner (one wakeup),
# and a huge project's is stopped at most this late past its cap (rg waits once the
# 1 MB pipe is full, 2.5 times the cap of 10,000 paths).
_DRAIN_EVERY = 0.025
_SKIPPED = "hidden, .gitignore'd and binary files are skipped"
# The Python engine runs from the folder that holds the melgui package, so nothing in
# the project (a `re.py`, another `melgui`) can shadow what it imports.
_PACKAGE_PARENT = str(Path(melgui.__file__).resolve().parent.parent)


@functools.lru_cache(maxsize=64)
def _matcher(pattern: str) -> GlobMatcher:
    """Compiled once per pattern: translating a glob costs about as much as listing."""
    return GlobMatcher(pattern)


def _engine(settings: ToolSettings) -> str | None:
    """The rg path, or None for the Python engine."""
    if settings.search_engine == "python":
        return None
    rg = find_ripgrep()
    if rg is None and settings.search_engine == "ripgrep":
        raise ToolError("grep is configured to use ripgrep, but no rg executable was found.")
    return rg


# Each project's rule files, kept by watching its folders: a second search reads what
# changed instead of walking them.
_LISTINGS: dict[str, WatchedRuleFiles] = {}
# Each project's .gitignore rules as ripgrep overrides (rg_globs), by file.
_RULES: dict[str, ProjectRules] = {}
_GITIGNORE = os.sep + ".gitignore"
_FOLDER_END = 1 - len(_GITIGNORE)  # a .gitignore's path up to its folder's last separator
_HIDDEN = os.sep + "."


@dataclasses.dataclass(slots=True)
class _Scan:
    """What a walk of the project's folders found: a note per `.gitignore` that is a
    FIFO, a device or a link to one (ripgrep would open it and wait; the Python engine
    skips it, so such a project is searched with it), and, when asked for, the
    .gitignore rules as ripgrep overrides (None: they cannot all be moved; see
    rg_globs)."""

    notes: list[str]
    excludes: list[str] | None = None
    hidden: list[str] | None = None  # top-most hidden folders, relative (rg_globs)


def _scan(root: Path, rules: bool) -> _Scan:
    top = str(root)
    listing = _LISTINGS.get(top)
    if listing is None:
        fresh = WatchedRuleFiles(top)
        listing = _LISTINGS.setdefault(top, fresh)
        if listing is not fresh:  # another search made one meanwhile
            fresh.close()
    found = listing.current()
    scan = _Scan([])
    for path, why in found.special:
        if os.path.basename(path) == ".gitignore":
            rest = why[len(path) :] if why.startswith(path) else f": {why}"
            relative = os.path.relpath(path, root)
            scan.notes.append(f"[{relative}{rest}; skipped, so its rules do not apply.]")
    # Another repository inside the project: which rules reach into it is ripgrep's call.
    if rules and not found.nested_git:
        gitignores = [
            path
            for path in found.regular
            # A hidden folder is never walked (no override lets it be): its rules
            # cannot matter.
            if path.endswith(_GITIGNORE) and _HIDDEN not in path[len(top) : _FOLDER_END]
        ]
        project = _RULES.get(top)
        if project is None:
            project = _RULES[top] = ProjectRules(top)
        scan.excludes = project.globs(gitignores)
        scan.hidden = _top_hidden(top, found)
    return scan


# Each project's top-most hidden folders, for the answer of the walk they came from.
_HIDDEN_FOLDERS: dict[str, tuple[RuleFiles, list[str] | None]] = {}


def _top_hidden(top: str, found: RuleFiles) -> list[str] | None:
    known = _HIDDEN_FOLDERS.get(top)
    if known is not None and known[0] is found:
        return known[1]
    start = len(os.fsencode(top)) + 1
    relative = [os.fsdecode(folder[start:]).replace(os.sep, "/") for folder in found.hidden]
    hidden = top_hidden_folders(relative)
    _HIDDEN_FOLDERS[top] = (found, hidden)
    return hidden


async def _pick(
    settings: ToolSettings, root: Path, rules: bool = False
) -> tuple[str | None, _Scan]:
    """The engine (`_engine`) and what a walk of the project found (`_Scan`); a special
    `.gitignore` sends a search to the Python engine."""
    rg = _engine(settings)
    scan = await asyncio.to_thread(_scan, root, rules and rg is not None)
    return (None if scan.notes else rg), scan


def _noted(outcome: ToolOutcome, notes: list[str]) -> ToolOutcome:
    if not notes:
        return outcome
    return dataclasses.replace(outcome, content="\n".join([outcome.content, *notes]))


def _fallback_argv(mode: str, root: Path, *pattern: str) -> list[str]:
    return [sys.executable, "-m", "melgui.tools.search.grep_fallback", mode, str(root), *pattern]


def _path_text(raw: bytes) -> str:
    return raw.removeprefix(b"./").decode("utf-8", errors="replace")


def _regex_error(pattern: str, stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    detail = next((line for line in lines if line.startswith("error:")), None)
    if detail is None:
        detail = " ".join(line.removeprefix("rg: ") for line in lines) or "rejected by the engine"
    return f"Invalid regex {pattern!r}: {detail.removeprefix('error: ')}"


@dataclasses.dataclass(frozen=True, slots=True)
class PatternInput:
    pattern: str


@dataclasses.dataclass(frozen=True, slots=True)
class RegexInput:
    pattern: str

    def __post_init__(self) -> None:
        if self.pattern == "":
            raise ToolError("Argument 'pattern' is empty; give a regular expression.")
        if "\x00" in self.pattern:
            raise ToolError("Argument 'pattern' contains a NUL byte.")


async def grep(context: ToolContext, given: RegexInput) -> ToolOutcome:
    workspace, settings, pattern = context.workspace, context.settings, given.pattern
    rg, scan = await _pick(settings, workspace.root)
    notes = scan.notes
    if rg is None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ToolError(f"Invalid regex {pattern!r}: {exc}.") from None
        argv = _fallback_argv("grep", workspace.root, pattern)
        cwd = _PACKAGE_PARENT
    else:
        argv, cwd = grep_argv(rg, pattern), str(workspace.root)
    shown = settings.grep_max_matches
    run = await run_search(
        argv,
        cwd,
        separator=b"\n",
        max_records=shown * _COLLECT_FACTOR,
        timeout=settings.search_timeout,
    )
    if run.returncode == 2 and not run.records and run.stderr.strip():
        raise ToolError(_regex_error(pattern, run.stderr))
    return _noted(_format_grep(pattern, run, settings), notes)


def _format_grep(pattern: str, run: SearchRun, settings: ToolSettings) -> ToolOutcome:
    matches: list[tuple[str, int, str]] = []
    for record in run.records:
        path, sep, rest = record.partition(b"\x00")
        number, sep2, text = rest.partition(b":")
        if not sep or not sep2 or not number.isdigit():
            continue
        line = text.decode("utf-8", errors="replace").rstrip("\r")
        if len(line) > settings.grep_max_line_chars:
            line = line[: settings.grep_max_line_chars] + " …[line cut]"
        matches.append((_path_text(path), int(number), line))
    matches.sort(key=lambda match: (match[0], match[1]))
    limit = settings.grep_max_matches
    files = len({match[0] for match in matches})
    lines = [f"{path}:{number}:{text}" for path, number, text in matches[:limit]]
    if run.timed_out:
        note = (
            f"[grep stopped after {settings.search_timeout:g} s: the pattern is too slow "
            "for the Python engine or the project is huge. Simplify the pattern."
        )
        partial = f" Partial results: {len(matches)} matching lines so far.]"
        return ToolOutcome.error("\n".join([note + partial, *lines]))
    if not matches:
        return ToolOutcome(f"No matches for {pattern!r} in the project ({_SKIPPED}).")
    total = f"more than {len(matches):,}" if run.more else f"{len(matches):,}"
    in_files = f"{'at least ' if run.more else ''}{files} file{'' if files == 1 else 's'}"
    header = f"{total} matching line{'' if total == '1' else 's'} in {in_files}"
    if run.more or len(matches) > limit:
        lines.append(
            f"[Capped: showing the first {min(limit, len(matches))} of {total} matching lines "
            "(sorted by path). Use a more specific pattern to see the rest.]"
        )
    return ToolOutcome("\n".join([header + ":", *lines]))


GREP_TOOL = Tool(GREP, RegexInput, grep)


async def find_files(context: ToolContext, given: PatternInput) -> ToolOutcome:
    workspace, settings = context.workspace, context.settings
    rg = _engine(settings)
    glob = _matcher(given.pattern)
    # The rules, the listing and the sort on one worker thread: one hand-over.
    found = await in_search_thread(functools.partial(_find, workspace.root, settings, glob, rg))
    return _noted(_format_find(given.pattern, found, settings), found.notes)


FIND_FILES_TOOL = Tool(FIND_FILES, PatternInput, find_files)


def first_sorted(records: list[bytes], limit: int) -> list[bytes]:
    """`sorted(records)[:limit]`, without sorting thousands when a few hundred are shown.

    Every 16th record, sorted, gives a bound that about twice `limit` records fall
    under; when at least `limit` do, the first `limit` of all are among them (anything
    above the bound comes after them all), and only those are sorted. When fewer do
    (records in a pathological order), all of them are sorted.
    """
    if len(records) <= 4 * limit:
        return sorted(records)[:limit]
    sample = sorted(records[::16])
    bound = sample[min(len(sample) - 1, limit // 8)]
    below = [record for record in records if record <= bound]
    if len(below) < limit:
        below = records
    below.sort()
    return below[:limit]


@dataclasses.dataclass(frozen=True, slots=True)
class _Found:
    count: int  # paths found (kept: at most the search's max_records)
    more: bool  # stopped at max_records: there are more
    timed_out: bool
    paths: list[str]  # the first shown, sorted
    notes: list[str]  # the special .gitignore files skipped


def _find(
    root: Path, settings: ToolSettings, glob: GlobMatcher, rg: str | None, searches: Searches
) -> _Found:
    """On a worker thread: the project's rules, the listing, the paths shown. When the
    project's .gitignore rules can all be given to ripgrep as overrides (rg_globs),
    ripgrep matches the pattern itself."""
    scan = _scan(root, rg is not None)
    if scan.notes:  # a special .gitignore: the Python engine skips it, ripgrep would wait
        rg = None
    select: Select | None = glob.select_records
    if rg is None:
        argv, cwd = _fallback_argv("files", root), _PACKAGE_PARENT
    elif glob.rg_globs is not None and scan.excludes is not None:
        hidden, listed = hidden_name_globs(glob.rg_globs.globs, scan.hidden)
        globs = [*glob.rg_globs.globs, *scan.excludes, *hidden]
        argv, cwd = glob_files_argv(rg, globs), str(root)
        if glob.rg_globs.exact:  # ripgrep's matches are the pattern's
            select = select_listed_records if listed else None
    else:
        argv, cwd = files_argv(rg, glob.name_globs), str(root)
        if glob.names_only:
            select = select_listed_records

    limit = settings.find_max_results
    run = searches.run(
        argv,
        cwd,
        separator=b"\x00",
        max_records=max(limit * _COLLECT_FACTOR, 10_000),
        timeout=settings.search_timeout,
        select=select,
        drain_every=_DRAIN_EVERY,
    )
    # UTF-8 bytes sort like their text; only the paths shown are decoded.
    paths = _paths_text(first_sorted(run.records, limit))
    # Only counts leave the thread: the records are freed here, where they were made.
    return _Found(len(run.records), run.more, run.timed_out, paths, scan.notes)


def _paths_text(records: list[bytes]) -> list[str]:
    """`_path_text` of each record, decoded at once (a NUL ends any bad UTF-8 sequence,
    so each record decodes as it would alone)."""
    if not records:
        return []
    text = b"\x00".join(records).decode("utf-8", errors="replace")
    return [path.removeprefix("./") for path in text.split("\x00")]


def _format_find(pattern: str, found: _Found, settings: ToolSettings) -> ToolOutcome:
    count, paths, limit = found.count, found.paths, settings.find_max_results
    if found.timed_out:
        return ToolOutcome.error(
            f"[find_files stopped after {settings.search_timeout:g} s; the project is too "
            f"large to list in time. Partial results: {count} paths.]\n" + "\n".join(paths)
        )
    if not count:
        return ToolOutcome(
            f"No files match {pattern!r} in the project (hidden and .gitignore'd files "
            "are skipped)."
        )
    total = f"more than {count:,}" if found.more else f"{count:,}"
    noun = "file matches" if total == "1" else "files match"
    lines = [f"{total} {noun} {pattern!r}:", *paths]
    if found.more or count > limit:
        lines.append(
            f"[Capped: showing the first {len(paths)} of {total} paths (sorted). "
            "Use a more specific pattern to see the rest.]"
        )
    return ToolOutcome("\n".join(lines))
