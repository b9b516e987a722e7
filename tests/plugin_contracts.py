"""Every event a test appends must conform to its contract (``benchledger.ledger.contracts``).

Registered from ``conftest.py``. It wraps ``UnitOfWork.append``, the one path every event takes
into a store in this process (library calls and ``CliRunner`` commands alike), and checks each
payload as it will be stored (its canonical JSON, parsed back). A test that appended a payload
that does not conform fails at teardown with the event type, field path and pydantic's message.

Tests that append hand-made payloads on purpose (store mechanics, tampering, replay plumbing)
say so with ``@pytest.mark.synthetic_events``; their appends are not checked.

Commands a test runs in a subprocess append in that process, out of this wrapper's sight, so
the store a test got from ``db_url`` is also checked whole when the test ends (before its
teardown drops it): the first stored payload that does not conform fails the test.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchledger.ledger.store.chain import canonical_json
from benchledger.ledger.store.event_store import UnitOfWork

MARKER = "synthetic_events"
_seen: list[str] = []
_original_append = UnitOfWork.append


def _checked_append(self: UnitOfWork, events: Any, **kwargs: Any) -> Any:
    result = _original_append(self, events, **kwargs)
    if not result.already_recorded:
        from benchledger.ledger.contracts.conformance import check_payload

        for new in events:
            stored = orjson.loads(canonical_json(new.payload))
            problem = check_payload(new.event_type, new.schema_version, stored)
            if problem is not None:
                _seen.append(problem.describe())
    return result


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}: the test appends hand-made payloads; skip the contract check"
    )
    UnitOfWork.append = _checked_append  # type: ignore[method-assign]


def pytest_unconfigure(config: pytest.Config) -> None:
    UnitOfWork.append = _original_append  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def appended_events_conform(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """The nonconformities this test's appends produced (the test fails if any remain)."""
    _seen.clear()
    yield _seen
    found, synthetic = list(_seen), request.node.get_closest_marker(MARKER) is not None
    _seen.clear()
    if found and not synthetic:
        pytest.fail(
            f"{len(found)} appended event(s) do not conform to their contract; first: {found[0]}",
            pytrace=False,
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator:
    try:  # nothing may be raised before the teardown itself has run
        url = getattr(item, "funcargs", {}).get("db_url")
        checked = url is not None and not _seen and item.get_closest_marker(MARKER) is None
        problem = stored_nonconformity(url) if checked else None
    except Exception as exc:  # noqa: BLE001 - reported once the fixtures are torn down
        problem = f"the check itself failed: {type(exc).__name__}: {exc}"
    result = yield
    if problem is not None:
        pytest.fail(f"the test's store does not conform: {problem}", pytrace=False)
    return result


def stored_nonconformity(url: str) -> str | None:
    """The first payload of the store at ``url`` that does not conform, if any. A store
    benchledger refuses to open (out of date, damaged on purpose) is that test's subject and
    is not judged here."""
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        return None  # the test never created its store
    from benchledger.ledger.contracts.conformance import check_store
    from benchledger.ledger.core.errors import BenchledgerError
    from benchledger.services.store_session import open_store

    try:
        opened = open_store(url)
    except BenchledgerError:
        return None
    with opened:
        report = check_store(opened.store)
    return None if report.ok else report.first_nonconforming.describe()
