"""Checkpoints: the project's files before and after every call that can change them.

A shadow git repository per project folder, under melgui's data folder, with its own
GIT_DIR, index and exclude file (`shadow`), snapshots of the tree (`snapshot`), what a
call changed (`changes`), undo and rewind with conflicts shown, never silent (`restore`),
the index of checkpoints in the history database (`log`), and the per-folder lock and
guard around a call (`checkpointer`). The project's own `.git` is only ever read.
"""
