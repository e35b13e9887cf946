"""grep and find_files: ripgrep or the Python engine, run as bounded child processes."""
