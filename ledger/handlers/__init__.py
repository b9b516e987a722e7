"""Command handlers: decide what happened and which events say so.

A handler takes the command's typed request (``ledger/requests/``) and the ``reads`` object the
service hands it (the read models), returns a plan (events plus the payload to print), and
never writes a file: files are projections rendered after the events commit.

One module per command family: ``benchmark_run`` (with ``benchmark_run_sources``, which picks
the source the request names and imports only that one's builder, ``source_harbor``,
``source_benchflow``, ``source_inspect`` or ``source_planned``, each ending in a
``built_source.BuiltSource``; ``benchmark_run_payload``, its envelopes; and ``planned_link``),
``global_sync``, ``ledger_upsert`` (shared by ``run-ledger-upsert`` and ``benchmark run
--update-run-ledger``), ``ledger_archive``, ``ledger_merge``, ``ledger_aggregate``,
``ledger_drift``, ``import_loopx`` and ``case_analysis_apply``; ``ledger_store`` and
``ledger_source_files`` hold what the ledger maintenance handlers share.
"""
