"""The contracts of what benchledger stores and reads: one pydantic model per event payload
(versioned by the event's ``schema_version``), the ``benchmark_run_v0`` record and the ledger row.

Importing pydantic costs far more than a small command's whole budget (``bench/startup.py``), so
nothing on a command's hot path imports these models: they are used by ``verify --schemas``, by
the test suite (every event a test appends is checked) and by ``python -m
ledger.contracts.generate``, which writes the JSON Schemas shipped in ``schemas/``. This package
file itself stays import-free so ``ledger.contracts.schema_files`` can read those files cheaply.
"""
