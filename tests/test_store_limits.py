"""Waits and limits (issue 36, item 5): a stuck lock holder, ``sql --timeout``, bootstrap."""

from __future__ import annotations

import time

import pytest

from benchledger.ledger.core.errors import InputError
from tests.support_store import opened, upsert_event


def test_a_writer_behind_a_stuck_lock_holder_gives_up_with_one_line(db_url, monkeypatch):
    """BENCHLEDGER_BUSY_TIMEOUT bounds the wait on both backends (PostgreSQL: lock_timeout)."""
    monkeypatch.setenv("BENCHLEDGER_BUSY_TIMEOUT", "1")
    holder, writer = opened(db_url), opened(db_url)
    try:
        with holder.store.transaction() as uow:
            uow.append([upsert_event("L", "held")])
            started = time.monotonic()
            with pytest.raises(InputError, match=r"locked.*BENCHLEDGER_BUSY_TIMEOUT"):
                writer.store.append([upsert_event("L", "waiting")])
            assert time.monotonic() - started < 15
        assert writer.store.head_position() == 1  # the holder's event only
    finally:
        writer.close()
        holder.close()


def _sql(db_url, *args):
    from click.testing import CliRunner

    from benchledger.commands.cli import cli

    return CliRunner().invoke(cli, ["--db", db_url, "sql", *args], catch_exceptions=False)


def _store_with_one_event(db_url):
    s = opened(db_url)
    s.store.append([upsert_event("L", "a")])
    s.close()


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "1e12"])
def test_sql_timeout_must_be_finite_positive_and_bounded(db_url, value):
    _store_with_one_event(db_url)
    result = _sql(db_url, "SELECT 1", "--timeout", value)
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.output
    assert "--timeout" in result.output


def test_sqlite_deadline_holds_when_each_step_is_expensive(tmp_path):
    """The progress handler runs every few thousand steps; a watchdog interrupts in between."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    _store_with_one_event(url)
    slow = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100000) "
        "SELECT sum(length(hex(randomblob(8000000)))) FROM r"
    )
    started = time.monotonic()
    result = _sql(url, slow, "--timeout", "1")
    elapsed = time.monotonic() - started
    assert result.exit_code == 1
    assert "query stopped after 1 s" in result.stderr
    assert elapsed < 6, elapsed


def test_ctrl_c_stops_sqlite_within_an_expensive_step(tmp_path):
    """Python runs its SIGINT handler only between bytecodes: the watchdog hears the signal."""
    import os
    import signal
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    _store_with_one_event(url)
    slow = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100000) "
        "SELECT sum(length(hex(randomblob(8000000)))) FROM r"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchledger.commands.cli", "--db", url, "sql", slow,
         "--timeout", "600"],
        env=os.environ, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(3)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("benchledger sql ignored Ctrl-C")
    assert time.monotonic() - sent < 3
    assert proc.returncode == 130
    assert "interrupted" in err.strip()


def test_sql_refuses_a_value_past_the_step_bound_in_one_line(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    _store_with_one_event(url)
    result = _sql(url, "SELECT length(randomblob(100000000))")
    assert result.exit_code == 1
    assert "larger than 64 MiB" in result.stderr
    assert "internal error" not in result.stderr


def test_sql_refuses_a_result_past_the_byte_bound(db_url):
    _store_with_one_event(db_url)
    many = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) "
        "SELECT substr(hex(zeroblob(15000000)), 1, 30000000) FROM r"
    )
    if "postgresql" in db_url:
        many = "SELECT repeat('x', 30000000) FROM generate_series(1, 10)"
    result = _sql(db_url, many, "--timeout", "60")
    assert result.exit_code == 1, result.stderr
    assert "larger than 256 MiB" in result.stderr


def test_sql_counts_narrow_rows_against_the_byte_bound_too(db_url):
    """--limit is a row count only: millions of one-integer rows are refused, not held."""
    _store_with_one_event(db_url)
    many = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5000000) "
        "SELECT n FROM r"
    )
    if "postgresql" in db_url:
        many = "SELECT n FROM generate_series(1, 5000000) AS n"
    result = _sql(db_url, many, "--limit", "100000000", "--timeout", "120")
    assert result.exit_code == 1, result.output[-300:]
    assert "larger than 256 MiB" in result.stderr


def test_postgres_sql_streams_rows_instead_of_fetching_all(postgres_ok, tmp_path):
    """--limit 1 over 300 MB of rows: the peak memory of the process stays far below that."""
    if not postgres_ok:
        pytest.skip("PostgreSQL not reachable")
    import subprocess
    import sys

    from tests.conftest import PG_BASE_URL, _drop_pg_schema, _fresh_pg_schema

    schema = _fresh_pg_schema()
    try:
        url = f"{PG_BASE_URL}?options=-csearch_path%3D{schema}"
        _store_with_one_event(url)
        script = (
            "import sys\n"
            "from benchledger.commands.cli import cli\n"
            "try:\n"
            "    cli.main(sys.argv[1:], standalone_mode=False)\n"
            "finally:\n"
            # VmHWM: this process's own peak (ru_maxrss would keep pytest's across the exec)
            "    status = open('/proc/self/status').read()\n"
            "    print('PEAK', status.split('VmHWM:')[1].split()[0], file=sys.stderr)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, "--db", url, "sql", "--limit", "1", "--timeout", "60",
             "SELECT repeat('x', 100000) FROM generate_series(1, 3000)"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        peak_kib = int(done.stderr.split("PEAK")[-1].split()[0])
        assert peak_kib < 200_000, peak_kib
    finally:
        _drop_pg_schema(schema)


def test_compare_bootstrap_is_bounded_and_says_why(tmp_path):
    from click.testing import CliRunner

    from benchledger.commands.cli import cli
    from benchledger.ledger.requests.compare import MAX_BOOTSTRAP, CompareRequest

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    args = ["--db", url, "compare", "--benchmark-id", "b@1", "--bootstrap", "1000000000"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert "100,000" in result.output and "1/sqrt" in result.output
    assert not (tmp_path / "ledger.db").exists()  # refused before any store was opened
    with pytest.raises(InputError, match="--bootstrap"):
        CompareRequest(benchmark_id="b@1", bootstrap=MAX_BOOTSTRAP + 1)
    CompareRequest(benchmark_id="b@1", bootstrap=MAX_BOOTSTRAP)


def test_bootstrap_drawn_in_blocks_gives_the_numbers_of_one_draw():
    import numpy as np

    from benchledger.projections.reports.compare.stats import BOOTSTRAP_BLOCK, bootstrap_interval

    values = [((i * 37) % 101) / 100 for i in range(300)]
    resamples = BOOTSTRAP_BLOCK * 2 + 17
    distinct, counts = np.unique(np.asarray(values, dtype=float), return_counts=True)
    draws = np.random.default_rng(7).multinomial(300, counts / 300, size=resamples)
    means = draws @ distinct / 300
    expected = tuple(float(x) for x in np.quantile(means, [0.025, 0.975]))
    assert bootstrap_interval(values, resamples, 7, 0.95) == expected


def test_sql_names_the_columns_of_an_empty_result(db_url):
    import json

    _store_with_one_event(db_url)
    result = _sql(db_url, "SELECT 1 AS x, 'a' AS \"é y\" WHERE 1 = 0", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["columns"] == ["x", "é y"]
