"""What the Changes view says above its lists: the worktree, where changes go, and a merge
stopped in the main folder."""

from __future__ import annotations

import html

from melgui.core.worktrees.changes.reading import MAX_UNTRACKED, WorktreeChanges
from melgui.core.worktrees.merge import MergeState
from melgui.core.worktrees.model import Worktree
from melgui.ui.runtime.theme import Colors


def summary_html(
    worktree: Worktree, changes: WorktreeChanges, state: MergeState, colors: Colors
) -> str:
    into = html.escape(state.branch or "a detached HEAD")
    first = (
        f"<b>{html.escape(worktree.branch)}</b> from {worktree.base[:10]} · "
        f"<span style='color:{colors.muted}'>{html.escape(str(worktree.path))}</span>"
    )
    parts = [f"Applies and merges into the main folder's <b>{into}</b>."]
    if changes.uncommitted:
        count = len(changes.uncommitted)
        parts.append(
            f"{count} file{'s' if count != 1 else ''} with edits the worker has not "
            f"committed (<span style='color:{colors.pending}'>orange</span> below)."
        )
    if changes.left_out:
        parts.append(
            f"{changes.left_out:,} more new files are not listed (over {MAX_UNTRACKED}) "
            "and are not applied by Apply all."
        )
    if changes.empty:
        parts.append("No changes against the base.")
    return first + "<br>" + " ".join(parts)


def there_html(worktree: Worktree, changes: WorktreeChanges, host: str, colors: Colors) -> str:
    """A worker's branch on another machine: shown here, applied or merged there by its
    host."""
    first = (
        f"<b>{html.escape(worktree.branch)}</b> from {worktree.base[:10]} · "
        f"<span style='color:{colors.muted}'>{html.escape(str(worktree.path))}</span> "
        f"on <b>{html.escape(host)}</b>"
    )
    count = len(changes.files)
    files = f"{count} changed file{'s' if count != 1 else ''}" if count else "No changes"
    parts = [
        f"{files} against the base, read on {html.escape(host)}. Apply and Merge branch… "
        f"write {html.escape(str(worktree.main))} there, whole or not at all: what would "
        "conflict changes nothing."
    ]
    if changes.uncommitted:
        count = len(changes.uncommitted)
        parts.append(
            f"{count} file{'s' if count != 1 else ''} with edits the worker has not "
            f"committed (<span style='color:{colors.pending}'>orange</span> below)."
        )
    return first + "<br>" + " ".join(parts)


def uncommitted_html(worktree: Worktree, changes: WorktreeChanges, colors: Colors) -> str:
    """The project folder's own changes: against which commit, and how many files."""
    count = len(changes.files)
    files = f"{count} changed file{'s' if count != 1 else ''}" if count else "No changes"
    return (
        f"Uncommitted changes in <span style='color:{colors.muted}'>"
        f"{html.escape(str(worktree.path))}</span>, against <b>{html.escape(worktree.branch)}"
        f"</b> at {worktree.base[:10]}.<br>{files}; review them to see findings on the hunks."
    )


def conflicts_html(state: MergeState, colors: Colors) -> str:
    files = "".join(f"<li>{html.escape(path)}</li>" for path in state.conflicts)
    if not state.merging:
        return (
            f"<span style='color:{colors.warn}'><b>Your uncommitted edits conflict with the "
            "worker's change in:</b></span>"
            f"<ul style='margin:0'>{files}</ul>"
            "Both are in each file between &lt;&lt;&lt;&lt;&lt;&lt;&lt; and &gt;&gt;&gt;&gt;"
            "&gt;&gt;&gt; marks. Edit them to what you want, then mark them resolved with "
            "git add; your edits are also kept in the stash (git stash list) until you drop it."
        )
    return (
        f"<span style='color:{colors.warn}'><b>A merge is stopped in the main folder"
        f"{' with conflicts in' if state.conflicts else ''}:</b></span>"
        f"<ul style='margin:0'>{files}</ul>"
        "Nothing was resolved for you: resolve them in the main folder and commit, or "
        "abort the merge."
    )
