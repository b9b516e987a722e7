"""The ledger v0 document, JSON bytes and Markdown view against loopx 0.4.8's real output.

The fixture is a real 303-run loopx ledger, the Markdown loopx rendered from it and what loopx's
normaliser made of it. Rows are fed to ``build_document`` unchanged: re-deriving row fields is
the row rules' job, so every difference from loopx that this module owns is named below and
asserted in its own test.
"""

from __future__ import annotations

import copy
import difflib
import json
import math
from pathlib import Path

import pytest

from benchledger.projections.publishing.ledger_v0 import (
    DEFAULT_UPDATE_POLICY,
    build_document,
    dump_json,
    render_markdown,
    rows_from_document,
)

# Markdown lines of the fixture that benchledger deliberately renders differently (line number ->
# spec reason). Empty: with the stored rows unchanged, no spec-listed difference reaches the view;
# the differences this module owns only show on rows loopx never wrote (tests below).
DELIBERATE_MARKDOWN_DIFFERENCES: dict[int, str] = {}
# Cases whose latest_decision deliberately differs from loopx's (case -> spec reason). Empty for
# the same reason; see the decision tests named test_deliberate_*.
DELIBERATE_DECISION_DIFFERENCES: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module")
def fixture_dir(fixtures_dir: Path) -> Path:
    return fixtures_dir / "loopx-ledger"


@pytest.fixture(scope="module")
def loopx_doc(fixture_dir: Path) -> dict:
    return json.loads((fixture_dir / "benchmark-run-ledger.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def built(loopx_doc: dict) -> dict:
    rows = copy.deepcopy(list(rows_from_document(loopx_doc)))
    return build_document(
        rows, updated_at=loopx_doc["updated_at"], update_policy=loopx_doc["update_policy"]
    )


def _cases(doc: dict):
    for bid, bnode in doc["benchmarks"].items():
        for cid, cnode in bnode["cases"].items():
            yield bid, cid, cnode


def _rows(doc: dict) -> list[dict]:
    return [row for _b, _c, cnode in _cases(doc) for row in cnode["runs"]]


# --- Markdown -----------------------------------------------------------------------------------


def test_markdown_matches_loopx_line_for_line(built: dict, fixture_dir: Path) -> None:
    expected = (fixture_dir / "benchmark-run-ledger.md").read_text(encoding="utf-8").split("\n")
    actual = render_markdown(built).split("\n")
    assert len(actual) == len(expected)
    differing = {
        i + 1: (e, a) for i, (e, a) in enumerate(zip(expected, actual, strict=True)) if e != a
    }
    unexpected = {n: d for n, d in differing.items() if n not in DELIBERATE_MARKDOWN_DIFFERENCES}
    assert not unexpected, "\n".join(difflib.unified_diff(expected, actual, lineterm=""))


def test_markdown_is_byte_identical_and_ends_with_one_newline(
    built: dict, fixture_dir: Path
) -> None:
    expected = (fixture_dir / "benchmark-run-ledger.md").read_text(encoding="utf-8")
    text = render_markdown(built)
    assert text == expected
    assert text.endswith("|\n") and not text.endswith("\n\n")


def test_markdown_sections_and_counts(built: dict) -> None:
    text = render_markdown(built)
    headings = [line for line in text.split("\n") if line.startswith("#")]
    assert headings == [
        "# Benchmark Run Ledger",
        "## Case Decisions",
        "## Repair Backlog",
        "## Archived Run Summary",
        "## Runs",
    ]
    assert "- active_case_count: `31`" in text
    assert "- active_run_count: `110`" in text
    assert "- archived_run_count: `193`" in text
    runs_section = text.split("## Runs\n\n", 1)[1].strip().split("\n")
    assert len(runs_section) == 2 + 110  # header, rule, one line per active run
    assert "| `skillsbench@1.1` | `43` | `193` |" in text


# --- latest_decision ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fixture_name",
    ["benchmark-run-ledger.json", "benchmark-run-ledger.loopx-normalized.json"],
)
def test_latest_decision_matches_loopx_for_every_case(
    built: dict, fixture_dir: Path, fixture_name: str
) -> None:
    reference = json.loads((fixture_dir / fixture_name).read_text(encoding="utf-8"))
    checked = 0
    for bid, cid, cnode in _cases(reference):
        mine = built["benchmarks"][bid]["cases"][cid]["latest_decision"]
        if (bid, cid) in DELIBERATE_DECISION_DIFFERENCES:
            assert mine != cnode["latest_decision"]
        else:
            assert mine == cnode["latest_decision"], (bid, cid)
        checked += 1
    assert checked == 69


def test_decision_next_action_is_held_to_220_characters(built: dict) -> None:
    """loopx rows store next_action uncut; the decision shows it cut like any ledger text."""
    decision = built["benchmarks"]["terminal-bench@2.0"]["cases"]["mteb-retrieve"][
        "latest_decision"
    ]
    assert len(decision["next_action"]) == 220
    assert decision["next_action"].endswith("instead of treating it as...")


# --- document and counts ------------------------------------------------------------------------


def test_counts_match_loopx(built: dict, loopx_doc: dict) -> None:
    count_keys = (
        "case_count",
        "run_count",
        "active_case_count",
        "active_run_count",
        "archived_run_count",
    )
    assert built["benchmarks"].keys() == loopx_doc["benchmarks"].keys()
    for bid, bnode in loopx_doc["benchmarks"].items():
        mine = built["benchmarks"][bid]
        assert {k: mine[k] for k in count_keys} == {k: bnode[k] for k in count_keys}
        for cid, cnode in bnode["cases"].items():
            for key in ("active_run_count", "archived_run_count", "case_id"):
                assert mine["cases"][cid][key] == cnode[key]


def test_runs_keep_loopx_order(built: dict, loopx_doc: dict) -> None:
    for bid, cid, cnode in _cases(loopx_doc):
        mine = [r["run_id"] for r in built["benchmarks"][bid]["cases"][cid]["runs"]]
        assert mine == [r["run_id"] for r in cnode["runs"]]


def test_update_policy_written_only_when_given() -> None:
    row = {
        "run_id": "a",
        "benchmark_id": "b",
        "case_id": "c",
        "recorded_at": "2026-01-01T00:00:00Z",
    }
    with_policy = build_document([row], updated_at="t", update_policy=DEFAULT_UPDATE_POLICY)
    without = build_document([row], updated_at="t", update_policy=None)
    assert with_policy["update_policy"] == DEFAULT_UPDATE_POLICY
    assert "update_policy" not in without
    assert without["schema_version"] == "benchmark_run_ledger_v0"
    assert without["updated_at"] == "t"


def test_rows_are_placed_unchanged(loopx_doc: dict) -> None:
    rows = copy.deepcopy(list(rows_from_document(loopx_doc)))
    before = copy.deepcopy(rows)
    doc = build_document(rows, updated_at="t", update_policy=None)
    assert sorted(map(json.dumps, rows)) == sorted(map(json.dumps, before))
    assert {id(r) for r in _rows(doc)} == {id(r) for r in rows}


def test_missing_ids_fall_back_to_node_keys_without_mutating() -> None:
    doc = {"benchmarks": {"bench": {"cases": {"case": {"runs": [{"run_id": "r1"}]}}}}}
    (row,) = rows_from_document(doc)
    assert row["benchmark_id"] == "bench" and row["case_id"] == "case"
    assert doc["benchmarks"]["bench"]["cases"]["case"]["runs"][0] == {"run_id": "r1"}
    loose = build_document([{"run_id": "x"}], updated_at="t", update_policy=None)
    assert list(loose["benchmarks"]) == ["unknown-benchmark"]
    assert list(loose["benchmarks"]["unknown-benchmark"]["cases"]) == ["unknown-case"]


# --- JSON ---------------------------------------------------------------------------------------


def test_dump_json_is_loopx_bytes(built: dict, fixture_dir: Path) -> None:
    out = dump_json(built)
    reference = json.dumps(built, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert out == reference.encode("utf-8")
    assert out == (fixture_dir / "benchmark-run-ledger.json").read_bytes()


def test_dump_json_round_trips_every_row(built: dict, loopx_doc: dict) -> None:
    reread = json.loads(dump_json(built))
    original = {r["run_id"]: r for r in _rows(loopx_doc)}
    rows = _rows(reread)
    assert len(rows) == len(original) == 303
    for row in rows:
        assert row == original[row["run_id"]]


@pytest.mark.parametrize(
    "value",
    [
        1e16,
        1.5e17,
        1e-5,
        1.5e-7,
        -2.5e-9,
        5e-324,
        -0.0,
        0.0,
        1e-4,
        0.1,
        9999999999999998.0,
        math.nan,
        math.inf,
        -math.inf,
        2**70,
        -(2**63),
        (1, 2.5),
        'ünïcode \u2028 \x00\x1f \\ "',
    ],
)
def test_dump_json_matches_json_module_for_awkward_values(value: object) -> None:
    doc = {"benchmarks": {"b": {"x": [value, {"nested": value}], "z": 1.0}}, "a": value}
    reference = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert dump_json(doc) == reference.encode("utf-8")


def test_dump_json_handles_non_string_keys_like_json() -> None:
    doc = {"a": {1: "x", 2: "y"}}
    reference = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert dump_json(doc) == reference.encode("utf-8")


# --- deliberate differences from loopx 0.4.8 ---------------------------------------------------


def _row(run_id: str, arm: str, recorded_at: str, **extra: object) -> dict:
    return {
        "run_id": run_id,
        "benchmark_id": "bench",
        "case_id": "case",
        "arm_id": arm,
        "recorded_at": recorded_at,
        **extra,
    }


def test_deliberate_order_by_instant_not_string(tmp_path: Path) -> None:
    """§6.3 / §13 #7: loopx sorted timestamps as strings; benchledger compares instants."""
    early_string_late_instant = _row(
        "bbbb",
        "codex_goal_mode_baseline",
        "2026-06-14T17:00:00Z",
        failure_scope="passed",
        official_score=1.0,
        official_passed=True,
    )
    late_string_early_instant = _row(
        "aaaa",
        "codex_goal_mode_baseline",
        "2026-06-15T00:30:00+08:00",
        failure_scope="case_or_solution",
        official_score=0.0,
    )
    doc = build_document(
        [early_string_late_instant, late_string_early_instant], updated_at="t", update_policy=None
    )
    case = doc["benchmarks"]["bench"]["cases"]["case"]
    assert [r["run_id"] for r in case["runs"]] == ["aaaa", "bbbb"]  # string order: bbbb, aaaa
    assert case["latest_decision"] == {
        "decision": "baseline_passed_not_current_treatment_priority",
        "baseline_run_id": "bbbb",
        "failure_scope": "passed",
    }
    runs_table = render_markdown(doc).split("## Runs\n\n", 1)[1]
    assert runs_table.index("`0.0`") < runs_table.index("`1.0`")


def test_deliberate_explicit_arm_role_respected() -> None:
    """§5.4 / §13 #3: an explicit arm_role wins over what the arm name suggests."""
    rows = [
        _row(
            "r1",
            "probe_baseline_lookalike",
            "2026-06-14T17:00:00Z",
            arm_role="other",
            failure_scope="passed",
            official_score=1.0,
        ),
        _row(
            "r2",
            "codex_loopx_treatment",
            "2026-06-14T18:00:00Z",
            failure_scope="passed",
            official_score=1.0,
        ),
    ]
    doc = build_document(rows, updated_at="t", update_policy=None)
    decision = doc["benchmarks"]["bench"]["cases"]["case"]["latest_decision"]
    # loopx 0.4.8 paired these two (the arm contains "baseline").
    assert decision == {"decision": "single_arm_recorded", "latest_run_id": "r2"}


def test_deliberate_runner_setup_decision_is_backed_by_a_backlog_row(loopx_doc: dict) -> None:
    """§13 #9: loopx decided `baseline_runner_or_setup_repair_required` for jax-computing-basics
    with no backlog row; benchledger's rows carry the generic `runner_or_setup_triage` route,
    so the same decision names the route and the backlog lists the case."""
    rows = copy.deepcopy(list(rows_from_document(loopx_doc)))
    for row in rows:
        if row["case_id"] == "jax-computing-basics":
            row.update(
                repair_priority="P1",
                repair_class="runner_or_setup_triage",
                next_action="triage the runner or setup failure from compact evidence",
            )
    doc = build_document(rows, updated_at=loopx_doc["updated_at"], update_policy=None)
    decision = doc["benchmarks"]["skillsbench@1.1"]["cases"]["jax-computing-basics"][
        "latest_decision"
    ]
    assert decision["decision"] == "baseline_runner_or_setup_repair_required"
    assert decision["repair_class"] == "runner_or_setup_triage"
    backlog = render_markdown(doc).split("## Repair Backlog\n\n", 1)[1].split("\n\n", 1)[0]
    jax_lines = [line for line in backlog.split("\n") if "`jax-computing-basics`" in line]
    assert jax_lines == [
        "| `P1` | `skillsbench@1.1` | `jax-computing-basics` | `codex_app_server_goal_baseline` "
        "| `runner_or_setup_triage` | `skillsbench_runner_error` |  | "
        "triage the runner or setup failure from compact evidence |"
    ]


def test_deliberate_duplicate_run_ids_collapse_last_wins() -> None:
    """§6.4: duplicates by run_id collapse across the whole ledger (the read model's key)."""
    first = _row("dup", "arm_a", "2026-06-14T17:00:00Z", official_score=0.0)
    moved = {**_row("dup", "arm_a", "2026-06-14T17:00:00Z", official_score=1.0), "case_id": "c2"}
    doc = build_document([first, moved], updated_at="t", update_policy=None)
    cases = doc["benchmarks"]["bench"]["cases"]
    assert list(cases) == ["c2"]
    assert cases["c2"]["runs"] == [moved]
    assert doc["benchmarks"]["bench"]["run_count"] == 1


def test_only_archive_state_archived_counts_as_archived() -> None:
    """§6.4: archive fields mean nothing without archive_state == "archived"."""
    rows = [
        _row("a", "x", "2026-06-14T17:00:00Z", archive_state="archived"),
        _row("b", "x", "2026-06-14T18:00:00Z", archive_state="pending", archive_reason="r"),
    ]
    bench = build_document(rows, updated_at="t", update_policy=None)["benchmarks"]["bench"]
    assert (bench["active_run_count"], bench["archived_run_count"]) == (1, 1)
    assert bench["cases"]["case"]["latest_decision"]["latest_run_id"] == "b"


# --- Markdown cells -----------------------------------------------------------------------------


def _single_case_markdown(*rows: dict) -> str:
    return render_markdown(build_document(list(rows), updated_at="t", update_policy=None))


def test_round_rewards_cell() -> None:
    rewards = [
        {"agent_round": 1, "reward": 0.0, "passed": False, "reward_present": True},
        {"agent_round": 2, "reward": 1.0, "passed": True, "reward_present": True},
        {"agent_round": 3, "reward": 0.5, "reward_present": True},
        {"agent_round": 4, "reward_present": False},
        {"agent_round": 5},
    ]
    text = _single_case_markdown(_row("r", "a", "2026-06-14T17:00:00Z", round_rewards=rewards))
    assert "`1:0,2:1*,3:0.5,4:missing,5:unknown`" in text


def test_runs_cells_attempt_score_artifact() -> None:
    text = _single_case_markdown(
        _row(
            "r1",
            "a",
            "2026-06-14T17:00:00Z",
            official_score=0.25,
            first_success_round=2,
            launcher_attempt_countable=True,
            artifact_refs={"artifact_ref": "x/a.json", "history_ref": "goals/g/runs/h.json"},
        ),
        _row(
            "r2",
            "a",
            "2026-06-14T18:00:00Z",
            official_score=True,
            verifier_attempt_countable=True,
            attempt_accounting={"verifier_attempt_countable": True},
            artifact_refs={"history_ref": "goals/g/runs/h.json"},
        ),
        _row("r3", "a", "2026-06-14T19:00:00Z", case_attempt_countable=True),
    )
    # As loopx 0.4.8 renders them: the attempt comes from ``attempt_accounting``, then the row's
    # own case flag; a non-numeric score is shown as stored.
    assert "| `bench` | `case` | `a` | `` | `0.25` | `2` | `` | `none` | `x/a.json` |" in text
    assert (
        "| `bench` | `case` | `a` | `verifier_attempt` | `True` | `` | `` | `none` "
        "| `goals/g/runs/h.json` |"
    ) in text
    assert "| `bench` | `case` | `a` | `case_attempt` | `missing` | `` | `` | `none` | `` |" in text


def test_optional_sections_are_omitted() -> None:
    text = _single_case_markdown(_row("r", "a", "2026-06-14T17:00:00Z"))
    assert "## Repair Backlog" not in text and "## Archived Run Summary" not in text
    assert "| `bench` | `case` | `single_arm_recorded` | - | - | `1` |" in text


def test_backlog_profiles_and_next_action_cut() -> None:
    long_action = "word " * 60
    rows = [
        _row(
            "m",
            "arm_m",
            "2026-06-14T17:00:00Z",
            repair_priority="P0",
            repair_class="runner_model_access",
            failure_class="codex_model_access_unsupported",
            next_action=long_action.strip(),
            repair_profile={
                "repair_class": "runner_model_access",
                "blocked_model_route": "gpt-x",
                "recommended_model_route": "gpt-y",
                "required_preflight": ["codex_cli_minimal_model_probe"],
            },
        ),
        _row(
            "s",
            "arm_s",
            "2026-06-14T17:00:00Z",
            repair_priority="P0",
            repair_class="runner_setup_timeout",
            failure_class="agent_setup_timeout",
            repair_profile={
                "repair_class": "runner_setup_timeout",
                "required_launch_overrides": {
                    "agent_setup_timeout_multiplier": 8,
                    "agent_timeout_multiplier": 8,
                    "codex_install_strategy": "require_existing_codex",
                },
                "disallowed_launch_overrides": {
                    "codex_install_strategy": "runtime_install_if_missing"
                },
            },
        ),
        _row(
            "p",
            "arm_p",
            "2026-06-14T17:00:00Z",
            repair_priority="P1",
            repair_class="skillsbench_setup_preflight_selection",
            failure_class="f",
            repair_profile={
                "repair_class": "skillsbench_setup_preflight_selection",
                "required_preflight": ["a", "b", "c", "d"],
            },
        ),
        _row(
            "q",
            "arm_q",
            "2026-06-14T17:00:00Z",
            repair_priority="P2",
            repair_class="runner_codex_cli_materialization",
            failure_class="f",
            repair_profile={
                "repair_class": "runner_codex_cli_materialization",
                "required_preflight": ["a"],
            },
        ),
        _row("old", "arm_q", "2026-06-14T16:00:00Z", repair_priority="P0", repair_class="older"),
    ]
    backlog = _single_case_markdown(*rows).split("## Repair Backlog\n\n", 1)[1].split("\n\n")[0]
    lines = backlog.split("\n")[2:]
    assert [line.split(" | ")[4] for line in lines] == [
        "`runner_model_access`",
        "`runner_setup_timeout`",
        "`skillsbench_setup_preflight_selection`",
        "`runner_codex_cli_materialization`",
    ]  # `old` is not the latest run of its arm
    cells = [line.split(" | ")[6] for line in lines]
    assert cells == [
        "blocked_model=gpt-x; rerun_model=gpt-y; preflight=codex_cli_minimal_model_probe",
        "codex_install_strategy=require_existing_codex; agent_setup_timeout_multiplier=8; "
        "agent_timeout_multiplier=8; disallow=runtime_install_if_missing",
        "skillsbench_setup_preflight_selection",  # loopx summarises only some classes' preflights
        "runner_codex_cli_materialization",
    ]
    next_action = lines[0].split(" | ")[7].removesuffix(" |")
    assert len(next_action) == 180 and next_action.endswith("...")


def test_product_pair_cell() -> None:
    blind = {
        "official_score": 1.0,
        "failure_scope": "passed",
        "max_rounds_budget": 5,
        "official_feedback_blinded": True,
        "reward_feedback_forwarded": False,
        "best_round_reward": 1.0,
    }
    baseline = _row("b", "raw_codex_autonomous_max5_baseline", "2026-06-14T17:00:00Z", **blind)
    ready = _row(
        "t",
        "loopx_product_mode_treatment",
        "2026-06-14T18:00:00Z",
        loopx_inside_case=True,
        product_mode_lifecycle_contract={"satisfied": True},
        **blind,
    )
    assert "| `paired_baseline_solved_treatment_preserved` | `main_table_ready` | - |" in (
        _single_case_markdown(baseline, ready)
    )
    blocked = {**ready, "loopx_inside_case": False}
    assert (
        "| `product_mode_pair_incomplete` | `treatment_loopx_inside_case_not_confirmed` | - |"
        in _single_case_markdown(baseline, blocked)
    )
