"""BenchFlow 0.7.11 result trees read into ``benchmark_run_v0`` records
(docs/formats/benchflow.md)."""
