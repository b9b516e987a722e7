"""Inspect AI eval logs (``.eval``/``.json``) as ``benchmark_run_v0`` records (issue 35)."""
