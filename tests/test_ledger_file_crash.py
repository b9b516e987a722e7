"""The ledger JSON and Markdown, the run index and the rollout log are written without fsync
(projections/publishing/ledger_files.py, projections/publishing/goal_files.py): the store is the
durable copy. A power
loss after the command can leave each file as it was before, empty, or gone. Whatever it left,
``verify --files`` must say the file no longer matches its committed export, and
``benchledger render`` must write it again, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support_faults import (
    GOAL,
    LEDGER,
    RUNTIME_ROOT,
    cli_in_process,
    harbor_copy,
    ingest_in_process,
    job_dir,
)

PRIOR = "14_dash_named_baseline"
TARGET = "01_all_pass"


@pytest.fixture(scope="module")
def harbor(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return harbor_copy(fixtures_dir, tmp_path_factory.mktemp("ledger-crash-fixtures"))


def _emptied(path: Path, _before: bytes) -> None:
    path.write_bytes(b"")  # the rename reached the disk, the data did not


def _gone(path: Path, _before: bytes) -> None:
    path.unlink()  # a first render whose directory entry never reached the disk


def _old(path: Path, before: bytes) -> None:
    path.write_bytes(before)  # the rename never reached the disk: the last file is back


def _verify_files(db_url: str, work: Path) -> tuple[int, dict]:
    code, verdict, err = cli_in_process(db_url, "verify", "--files", cwd=work)
    assert verdict is not None, err
    return code, verdict["verify"]


_PATHS = {
    "ledger_json": LEDGER,
    "ledger_markdown": str(Path(LEDGER).with_suffix(".md")),
    "run_index": f"{RUNTIME_ROOT}/goals/{GOAL}/runs/index.jsonl",
    "rollout_log": f"{RUNTIME_ROOT}/goals/{GOAL}/rollout-event-log.jsonl",
}


@pytest.mark.parametrize("kind", sorted(_PATHS))
@pytest.mark.parametrize(
    ("lose", "status"), [(_emptied, "changed"), (_gone, "missing"), (_old, "changed")]
)
def test_a_ledger_file_lost_to_a_crash_is_reported_and_rendered_again(
    db_url: str,
    tmp_path: Path,
    harbor: Path,
    kind: str,
    lose: Callable[[Path, bytes], None],
    status: str,
) -> None:
    work = tmp_path / "work"
    code, _, err = ingest_in_process(db_url, work, job_dir(harbor, PRIOR))
    assert code == 0, err
    path = work / _PATHS[kind]
    before = path.read_bytes()
    code, _, err = ingest_in_process(db_url, work, job_dir(harbor, TARGET))
    assert code == 0, err
    published = path.read_bytes()
    assert published != before  # the second ingest changed the file the crash takes back

    lose(path, before)

    code, verdict = _verify_files(db_url, work)
    assert code == 1 and verdict["ok"] is False
    statuses = {f["kind"]: f["status"] for f in verdict["files"]}
    assert statuses[kind] == status
    assert all(s == "match" for k, s in statuses.items() if k != kind), statuses

    code, _, err = cli_in_process(db_url, "render", cwd=work)
    assert code == 0, err
    assert path.read_bytes() == published
    code, verdict = _verify_files(db_url, work)
    assert code == 0, verdict
    assert verdict["files"] and {f["status"] for f in verdict["files"]} == {"match"}


@pytest.mark.parametrize("kind", ["run_record_json", "run_record_markdown"])
def test_a_run_record_lost_to_a_crash_is_reported_and_rendered_again(
    db_url: str, tmp_path: Path, harbor: Path, kind: str
) -> None:
    """Run records are not fsynced either; ``render`` rewrites one a crash emptied."""
    work = tmp_path / "work"
    code, _, err = ingest_in_process(db_url, work, job_dir(harbor, TARGET))
    assert code == 0, err
    _, verdict = _verify_files(db_url, work)
    path = Path(next(f["path"] for f in verdict["files"] if f["kind"] == kind))
    published = path.read_bytes()

    _emptied(path, published)

    code, verdict = _verify_files(db_url, work)
    assert code == 1 and verdict["ok"] is False
    assert {f["path"]: f["status"] for f in verdict["files"]}[str(path)] == "changed"
    code, _, err = cli_in_process(db_url, "render", cwd=work)
    assert code == 0, err
    assert path.read_bytes() == published
    code, verdict = _verify_files(db_url, work)
    assert code == 0, verdict
