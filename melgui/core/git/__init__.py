"""The one git runner of the app (`runner`) and what a git child may run (`hardening`)."""

from melgui.core.git.runner import GitError, GitResult, git_available, run, run_async

__all__ = ["GitError", "GitResult", "git_available", "run", "run_async"]
