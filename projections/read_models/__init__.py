"""The SQL read models: the engine that folds events into them, their tables, and the caches of
read commands."""
