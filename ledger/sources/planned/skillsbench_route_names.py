"""The SkillsBench route names and defaults alone, without the route table.

The CLI needs the names when it loads (click builds ``--skillsbench-route``'s choices then) and
option validation needs them and the defaults on every ``benchmark run``; importing the route
table (``skillsbench_routes``: its dataclass, rows and record builder) for that would cost every
command, Harbor ingests included, a few milliseconds at start. ``skillsbench_routes.ROUTES`` is
the source of truth for the rows; ``tests/test_benchflow_source.py`` asserts ``ROUTE_NAMES``
names exactly them, in their order. The defaults live only here.
"""

from __future__ import annotations

DEFAULT_ROUTE = "codex-cli-goal-baseline"
DEFAULT_DATASET = "skillsbench@1.1"
DEFAULT_TASK = "citation-check"

ROUTE_NAMES: tuple[str, ...] = (
    "codex-acp-blind-loop-baseline",
    "codex-cli-goal-baseline",
    "codex-app-server-goal-baseline",
    "curated-skills-baseline",
    "raw-codex-autonomous-max5",
    "loopx-product-mode",
    "loopx-goal-start-product-mode",
    "loopx-turn-agent-cli",
)
