"""A context a person can see into: what each part of the next request costs (breakdown),
what a compaction would cut and keep before it runs (preview), and how each message is
named in both (labels)."""
