"""The event store: the append-only event table, its hash chain, and one module per database."""
