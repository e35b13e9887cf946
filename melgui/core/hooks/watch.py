"""Which hooks a folder has, kept current across machines (docs/host-protocol.md,
"Hooks there"): on melgui's host, the project hooks of the folders whose loops run
elsewhere (a remote folder's view), and what each folder has (`HooksSummary`: which
events and matchers have hooks); on the view, the newest of what it heard.

    watch = HooksWatch()                      # the host's
    summary = watch.watch("/srv/p")           # hooks/watch: what the folder has now
    for folder, summary in watch.changed():   # after each call there, and every second
        tell_views(folder, summary)           # hooks/changed

    heard = HooksHeard()                      # the view's (melgui/remote/link.py)
    heard.heard(host, "/srv/p", summary_json)
    heard.known(host, "/srv/p").wants("PreToolUse", ["Bash", "run_command"])

A check costs a stat of the folder's three hooks files; a file is read again only when
its stamp changed.
"""

from __future__ import annotations

from typing import Any

from melgui.core.hooks.there import HooksSummary, ProjectHooks


class HooksWatch:
    def __init__(self) -> None:
        self._projects: dict[str, ProjectHooks] = {}  # by folder: run and read here
        self._told: dict[str, HooksSummary] = {}  # by watched folder: what views were told
        self._version = 0  # this host's, across folders: a view keeps the highest it heard

    def project(self, folder: str) -> ProjectHooks:
        found = self._projects.get(folder)
        if found is None:
            found = self._projects[folder] = ProjectHooks(folder)
        return found

    def watch(self, folder: str) -> HooksSummary:
        """What `folder` has, as last checked (`changed` first: a change is told to every
        view); from now on its changes are among `changed`'s."""
        if folder not in self._told:
            self._version += 1
            config = self.project(folder).files.current()
            self._told[folder] = HooksSummary.of(config, self._version)
        return self._told[folder]

    def changed(self) -> list[tuple[str, HooksSummary]]:
        """The watched folders whose hooks changed since last told, with what they have now."""
        return [(folder, self._told[folder]) for folder in list(self._told) if self._check(folder)]

    def watching(self) -> bool:
        return bool(self._told)

    def _check(self, folder: str) -> bool:
        config = self.project(folder).files.current()
        told = self._told[folder]
        if tuple(config.summary()) == told.hooks and tuple(config.problems) == told.problems:
            return False
        self._version += 1
        self._told[folder] = HooksSummary.of(config, self._version)
        return True


class HooksHeard:
    """What a view heard of folders' hooks there (hooks/watch answers, hooks/changed),
    by host: the newest of each (a hooks/watch answer may be read after a newer
    hooks/changed: the host's numbers say which is newer)."""

    def __init__(self) -> None:
        self.folders: set[str] = set()  # asked about: asked again on every reconnect
        self._known: dict[str, tuple[str, HooksSummary]] = {}

    def heard(self, host: str, folder: str, data: dict[str, Any]) -> None:
        summary = HooksSummary.from_json(data)
        known = self._known.get(folder)
        if known is None or known[0] != host or known[1].version <= summary.version:
            self._known[folder] = (host, summary)

    def known(self, host: str, folder: str) -> HooksSummary | None:
        found = self._known.get(folder)
        return found[1] if found is not None and found[0] == host else None
