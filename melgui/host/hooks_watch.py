"""The project hooks of the folders here whose loops run elsewhere (a remote folder's
view), and what each folder has: which events and matchers have hooks (`HooksSummary`),
so a view sends a point there only when a hook matches it (docs/host-protocol.md,
"Hooks there").

    watch = HooksWatch()
    summary = watch.watch("/srv/p")           # hooks/watch: what the folder has now
    for folder, summary in watch.changed():   # after each call here, and every second
        tell_views(folder, summary)           # hooks/changed

A check costs a stat of the folder's three hooks files; a file is read again only when
its stamp changed (or it was written within a clock tick of its last read).
"""

from __future__ import annotations

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
