"""A terminal pane: the program's screen painted, and keys turned into input."""
