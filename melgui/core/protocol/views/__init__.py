"""What the window reads and does no work with: the data a view shows (an agent's state,
the board's rows, a finding, a loss) and pure functions over records and text (a person's
words in a compacted conversation, a fuzzy file rank, a slash command's name). The
window imports these and, one day, nothing else of melgui but the protocol."""
