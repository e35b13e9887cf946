"""What closing a worker's pane would lose in its worktree, and removing the worktree
afterwards only as far as the person agreed.

Closing asks when the worktree holds work ("changes" losses naming it). After the worker
has stopped, the worktree is removed when it holds nothing, or when what it holds is still
exactly what the person was shown and agreed to discard; anything else keeps it (and its
branch) for the next start to offer.
"""

from __future__ import annotations

import logging

from melgui.core.protocol.views.losses import Loss
from melgui.core.worktrees.cleanup import remove_worktree
from melgui.core.worktrees.create import WorktreeError
from melgui.core.worktrees.git import GitError
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.risk import WorkAtRisk, work_at_risk

log = logging.getLogger(__name__)


def _what(worktree: Worktree, risk: WorkAtRisk) -> str:
    return f"its worktree {worktree.path} (branch {worktree.branch}) holds {risk.describe()}"


def worktree_losses(worktree: Worktree | None, where: str) -> list[Loss]:
    """A "changes" loss when the worktree holds work (one saying git could not tell, when
    it cannot: that is treated as work too)."""
    if worktree is None:
        return []
    try:
        risk = work_at_risk(worktree)
    except GitError as exc:
        return [Loss("changes", where, f"its worktree {worktree.path} could not be read: {exc}")]
    return [] if risk.empty else [Loss("changes", where, _what(worktree, risk))]


def retire_worktree(worktree: Worktree, confirmed: list[Loss]) -> bool:
    """Remove the worktree if that loses nothing the person did not agree to; True when
    removed. Never raises: a worktree that stays is offered again at the next start."""
    try:
        risk = work_at_risk(worktree)
        if risk.empty:
            remove_worktree(worktree)
            return True
        if any(loss.what == _what(worktree, risk) for loss in confirmed):
            remove_worktree(worktree, discard=True)
            return True
    except (GitError, WorktreeError) as exc:
        log.warning("Keeping worktree %s: %s", worktree.path, exc)
        return False
    log.info("Keeping worktree %s: it holds %s", worktree.path, risk.describe())
    return False
