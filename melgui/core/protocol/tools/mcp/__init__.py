"""MCP servers' tools as a view sees them: the questions a server asks a person
(`asks`), a folder's servers in rows and what a window may ask of them (`view`), and the
names the model calls their tools by (`naming`). No MCP SDK here; the clients that run
the servers are `melgui.tools.mcp`."""
