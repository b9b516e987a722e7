"""Files rendered from the read models after a commit: the ledger, the goal history, the
registry."""
