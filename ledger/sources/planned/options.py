"""Option constants of ``benchmark run``: benchmarks, modes, defaults and choices
(docs/formats/cli.md §5).

The planner reads its defaults here; the command layer and the validation
(``ledger.requests.benchmark_run_rules``) read the choices. Nothing here reads a request.
"""

from __future__ import annotations

from benchledger.ledger.rules.record.vocabulary import ARM_ROLE_CHOICES
from benchledger.ledger.sources.planned import skillsbench_route_names as skillsbench
from benchledger.ledger.sources.planned.timeout_policy import TIMEOUT_PRESETS

# --- benchmarks and modes -------------------------------------------------------------------

BENCHMARK_NAMES: tuple[str, ...] = ("terminal-bench", "skillsbench", "inspect")

MODE_LOOPX_MANAGED = "loopx-managed-codex"
MODE_CODEX_LOOPX = "codex-loopx"
MODE_HARDENED = "hardened-codex"
MODE_PASSIVE = "passive-observed-codex"
MODE_GOAL = "codex-goal-mode"
MODE_APP_SERVER_GOAL = "codex-app-server-goal"

TERMINAL_BENCH_MODES: tuple[str, ...] = (
    MODE_HARDENED,
    MODE_PASSIVE,
    MODE_GOAL,
    MODE_APP_SERVER_GOAL,
    MODE_CODEX_LOOPX,
    MODE_LOOPX_MANAGED,
)
DEFAULT_MODE = MODE_LOOPX_MANAGED

# --- defaults used by the planned-run builders (ingest derives these from artifacts) --------

TERMINAL_BENCH_DEFAULT_DATASET = "terminal-bench@2.0"
TERMINAL_BENCH_DEFAULT_TASK = "build-cython-ext"
DEFAULT_MODEL = "gpt-5.5"
DEFAULT_AGENT = "codex"
DEFAULT_RUNNER = "harbor"
RUNNERS: tuple[str, ...] = ("harbor",)
DEFAULT_RUNNER_REF = "harbor==0.25.0"
DEFAULT_N_ATTEMPTS = 1
DEFAULT_N_CONCURRENT = 1

SKILLSBENCH_DEFAULT_DATASET = skillsbench.DEFAULT_DATASET
SKILLSBENCH_DEFAULT_TASK = skillsbench.DEFAULT_TASK
SKILLSBENCH_DEFAULT_ROUTE = skillsbench.DEFAULT_ROUTE

# --- choices ---------------------------------------------------------------------------------

INSTALL_RUNTIME_IF_MISSING = "runtime_install_if_missing"
INSTALL_REQUIRE_EXISTING = "require_existing_codex"
CODEX_INSTALL_STRATEGIES: tuple[str, ...] = (INSTALL_RUNTIME_IF_MISSING, INSTALL_REQUIRE_EXISTING)
DEFAULT_CODEX_INSTALL_STRATEGY = INSTALL_RUNTIME_IF_MISSING

MATERIALIZATION_PREPROVISIONED = "worker_path_preprovisioned"
MATERIALIZATION_EXTENDED_SETUP = "runtime_install_extended_setup"
WORKER_CODEX_MATERIALIZATION_STRATEGIES: tuple[str, ...] = (
    MATERIALIZATION_PREPROVISIONED,
    MATERIALIZATION_EXTENDED_SETUP,
)

SELECTION_POLICIES: tuple[str, ...] = ("benchflow_canonical", "all_attempts", "newest")
DEFAULT_SELECTION_POLICY = "benchflow_canonical"
TIMEOUT_PRESET_NAMES: tuple[str, ...] = tuple(TIMEOUT_PRESETS)
ARM_ROLES: tuple[str, ...] = ARM_ROLE_CHOICES

#: Env var names preflight checks for presence (values are never read).
DEFAULT_AUTH_ENV_NAMES: dict[str, tuple[str, ...]] = {
    "codex": ("CODEX_FORCE_AUTH_JSON", "OPENAI_API_KEY"),
}

#: Repair profile requirements (docs/formats/cli.md §6.6, rule 19).
REPAIR_PROFILE_MULTIPLIER = 8.0
REPAIR_PROFILE_PREFLIGHT_TIMEOUT_SEC = 45

FAKE_WORKER_MODES: tuple[str, ...] = (MODE_CODEX_LOOPX, MODE_LOOPX_MANAGED)
PREFLIGHT_GUARD_MODES: tuple[str, ...] = (
    MODE_HARDENED,
    MODE_GOAL,
    MODE_APP_SERVER_GOAL,
    MODE_CODEX_LOOPX,
    MODE_LOOPX_MANAGED,
)
