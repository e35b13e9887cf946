"""OAuth sign-in for HTTP servers: the browser flow on the SDK's provider, and where the
tokens are kept."""
