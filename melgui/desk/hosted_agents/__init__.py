"""melgui as an ACP client: host a third-party agent (or `melgui acp`) over stdio."""
