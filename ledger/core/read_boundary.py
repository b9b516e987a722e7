"""What a command read and did, stated in its output (``read_boundary``), written once.

Two statements: the ledger commands read only compact rows and files; a source adapter reads
compact runner facts and never an artifact, task text, trace or local path. Each is a promise
the tests hold the code to, so it must not be spelt differently in two places.
"""

from __future__ import annotations

#: Commands over ledger rows and compact files (upsert, maintenance, drift, parity, analysis).
LEDGER_READ_BOUNDARY: dict[str, bool] = {
    "compact_only": True,
    "raw_logs_read": False,
    "task_text_read": False,
    "trajectory_read": False,
    "docker_invoked": False,
    "model_api_invoked": False,
    "upload_invoked": False,
}

#: An ingest by a source adapter (Harbor, BenchFlow): compact facts only.
INGEST_READ_BOUNDARY: dict[str, bool] = {
    "compact_only": True,
    "raw_artifacts_read": False,
    "task_text_read": False,
    "trajectory_read": False,
    "controller_trace_read": False,
    "local_paths_recorded": False,
    "docker_invoked": False,
    "model_api_invoked": False,
    "upload_invoked": False,
}
