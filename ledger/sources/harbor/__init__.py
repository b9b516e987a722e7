"""Harbor 0.25 job directories read into ``benchmark_run_v0`` records (docs/formats/harbor.md)."""
