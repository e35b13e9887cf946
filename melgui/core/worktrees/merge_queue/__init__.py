"""The merge queue: finished workers' branches land on the person's branch one at a time."""
