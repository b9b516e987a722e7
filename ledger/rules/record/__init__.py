"""Rules of the ``benchmark_run_v0`` record: its fields, value kinds and compaction
(docs/formats/benchmark_run_v0.md)."""
