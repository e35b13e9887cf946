"""The file tools: read_file, list_dir, write_file and edit_file, and their diffs."""
