"""Language-server diagnostics: which server serves a file (servers), one server spoken to
through pygls (client), a project's servers and what an edit reports (diagnostics)."""
