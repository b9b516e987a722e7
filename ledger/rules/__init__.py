"""The ledger's rules, one module per concept of the specs (docs/formats/benchmark_run_v0.md,
docs/formats/ledger_v0.md).

A rule lives in exactly one module here and every caller, write side and projections alike,
imports it from there. Rules are pure functions of records and rows: nothing here reads the
store.
"""
