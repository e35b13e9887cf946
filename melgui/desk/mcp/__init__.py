"""A desk's MCP servers as views see them: in the window's own process (`local`), or in
the melgui host, one set per folder, with its questions waiting for a person (`hosted`)."""
