"""``benchledger benchmark run {terminal-bench|skillsbench}``: flags, then the shared pipeline."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import click

from benchledger.commands.grouped_help import GroupedHelpCommand
from benchledger.commands.output import emit, format_option, progress_bar, resolve_format
from benchledger.commands.runtime import command_metadata
from benchledger.ledger.core.gc_pause import collector_paused
from benchledger.ledger.core.readable import word
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.requests.benchmark_run_rules import validate_benchmark_run_options
from benchledger.ledger.requests.goal_default import default_goal_source, with_default_goal_id
from benchledger.ledger.rules.history.goal_runs import (
    DELIVERY_BATCH_SCALE_CHOICES,
    DELIVERY_OUTCOMES,
)
from benchledger.ledger.rules.record.vocabulary import MULTIPLIER_KEYS
from benchledger.ledger.sources.planned.skillsbench_route_names import ROUTE_NAMES
from benchledger.projections.publishing.goal_runs import render_append_markdown
from benchledger.projections.reports.run_summary import short_markdown, with_summary
from benchledger.services.benchmark_run import run_benchmark

TITLE = "Benchmark Run Append"

MODES = (
    "hardened-codex",
    "passive-observed-codex",
    "codex-goal-mode",
    "codex-app-server-goal",
    "codex-loopx",
    "loopx-managed-codex",
)


def _argparse_float(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """Float with argparse's message; ``nan``/``inf`` parse here and are refused by rule 9."""
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise click.BadParameter(f"invalid float value: {value!r}", ctx, param) from None


def _argparse_int(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise click.BadParameter(f"invalid int value: {value!r}", ctx, param) from None


def _float_option(name: str, dest: str | None = None, *, help_text: str):  # noqa: ANN202
    names = (name, dest) if dest else (name,)
    return click.option(
        *names, metavar="FLOAT", default=None, callback=_argparse_float, help=help_text
    )


def _int_option(name: str, help_text: str):  # noqa: ANN202
    return click.option(
        name, metavar="INTEGER", default=None, callback=_argparse_int, help=help_text
    )


# What each of Harbor's timeout multipliers scales in a planned run's launch preview
# (docs/formats/cli.md §5.1, §7.2); an ingest reads the policy from the job instead.
MULTIPLIER_HELP = {
    "timeout_multiplier": "Scale every Harbor timeout of the launch preview (planned runs).",
    "agent_timeout_multiplier": "Scale the agent's timeout (wins over --timeout-multiplier).",
    "verifier_timeout_multiplier": "Scale the verifier's timeout.",
    "agent_setup_timeout_multiplier": "Scale the agent set-up timeout.",
    "environment_build_timeout_multiplier": "Scale the environment build timeout.",
}


def _skillsbench_routes() -> tuple[str, ...]:
    """The route table's names, read when the CLI loads (click wants its choices then): from
    the names-only module, since the route table (``ledger.sources.planned.skillsbench_routes``) and
    ``ledger.requests.benchmark_run_rules`` build dataclasses every other command would pay for."""
    return ROUTE_NAMES


def _delivery_scales() -> tuple[str, ...]:
    return DELIVERY_BATCH_SCALE_CHOICES


def _delivery_outcomes() -> tuple[str, ...]:
    return DELIVERY_OUTCOMES


def _flag(name: str, help_text: str):  # noqa: ANN202
    return click.option(name, is_flag=True, default=False, help=help_text)


def _loopx_switch(name: str, help_text: str):  # noqa: ANN202
    """A loopx fixture switch: kept for loopx compatibility, hidden from ``--help``
    (docs/cli.md lists them)."""
    return click.option(name, is_flag=True, default=False, hidden=True, help=help_text)


def _run_options(func):  # noqa: ANN001, ANN202
    """Every flag of docs/formats/cli.md §5.1, in one place so help lists them together."""
    options = [
        click.argument(
            "benchmark_name", type=click.Choice(["terminal-bench", "skillsbench", "inspect"])
        ),
        click.option(
            "--goal-id",
            default=None,
            help="Goal whose run history records the runs (default for an ingest: the name of "
            "the job directory, result root, log directory or log file read).",
        ),
        click.option(
            "--mode",
            type=click.Choice(MODES),
            default=None,
            help="Harness variant (default loopx-managed-codex).",
        ),
        click.option(
            "--dataset",
            "--benchmark-id",
            "dataset",
            default=None,
            help="Dataset id; ingest derives it from artifacts when unset.",
        ),
        click.option(
            "--include-task-name",
            multiple=True,
            help="Task (repeatable): planned cases, or an ingest filter.",
        ),
        click.option(
            "--runner", type=click.Choice(["harbor"]), default=None, help="Runner of a planned run."
        ),
        click.option("--agent", default=None, help="Agent for planned runs (default codex)."),
        click.option("--model", default=None, help="Model for planned runs (default gpt-5.5)."),
        click.option(
            "--skillsbench-route",
            type=click.Choice(_skillsbench_routes()),
            default=None,
            help="SkillsBench route of a planned run.",
        ),
        click.option(
            "--skillsbench-result-json",
            default=None,
            metavar="PATH",
            help="One BenchFlow result.json to ingest.",
        ),
        click.option(
            "--skillsbench-result-root",
            default=None,
            metavar="DIR",
            help="A BenchFlow jobs tree to ingest (one run per task).",
        ),
        click.option(
            "--selection-policy",
            type=click.Choice(["benchflow_canonical", "all_attempts", "newest"]),
            default=None,
            help="Which of several results per task is kept.",
        ),
        _flag(
            "--keep-corrupt",
            "Record corrupt BenchFlow results as corrupt attempts instead of refusing the input.",
        ),
        click.option(
            "--harbor-job-dir",
            default=None,
            metavar="DIR",
            help="A Harbor 0.25 job directory to ingest.",
        ),
        click.option(
            "--log-dir", default=None, metavar="DIR", help="[inspect] Inspect AI log directory."
        ),
        click.option(
            "--log", multiple=True, metavar="FILE", help="[inspect] One Inspect log (repeatable)."
        ),
        click.option(
            "--scorer", default=None, help="[inspect] Primary scorer (default: the first)."
        ),
        click.option(
            "--arm-map",
            multiple=True,
            metavar="AGENT[:MODEL]=ARM",
            help="Name the arm of an agent (and model) in a multi-agent job.",
        ),
        click.option(
            "--arm-role",
            type=click.Choice(["baseline", "treatment", "other"]),
            default=None,
            help="Role of the arm in comparisons (default: from the arm's name, else other).",
        ),
        _flag("--loopx-worker-artifacts", "Also read loopx worker artifacts of a Harbor job."),
        *[
            _float_option("--" + m.replace("_", "-"), m, help_text=MULTIPLIER_HELP[m])
            for m in MULTIPLIER_KEYS
        ],
        click.option(
            "--timeout-preset",
            type=click.Choice(["official", "long-horizon-8x"]),
            default=None,
            help="Named multipliers: official (all 1) or long-horizon-8x (agent and set-up 8x).",
        ),
        click.option(
            "--codex-install-strategy",
            type=click.Choice(["runtime_install_if_missing", "require_existing_codex"]),
            default=None,
            help="[loopx] Install Codex in the task container if missing (default), or require it.",
        ),
        _int_option(
            "--codex-preflight-timeout-sec", "[loopx] Seconds the Codex preflight check may take."
        ),
        click.option(
            "--worker-codex-materialization-strategy",
            type=click.Choice(["worker_path_preprovisioned", "runtime_install_extended_setup"]),
            default=None,
            help="[loopx] How a worker gets Codex: already on its PATH, or installed at set-up.",
        ),
        _loopx_switch("--worker-materialization-probe-only", "[loopx] probe-only record."),
        _loopx_switch("--setup-timeout-repair-profile", "[loopx] 8x setup-timeout repair profile."),
        _loopx_switch("--fake-worker", "[loopx] fake worker fixture record."),
        _loopx_switch("--cli-bridge-contract", "[loopx] CLI bridge contract fixture record."),
        _loopx_switch("--worker-cli-bridge-fixture", "[loopx] worker CLI bridge fixture record."),
        _loopx_switch("--active-cli-bridge", "[loopx] active CLI bridge record."),
        _loopx_switch("--active-user-assisted-treatment", "[loopx] active-user treatment record."),
        _loopx_switch(
            "--active-user-observation-fixture", "[loopx] active-user observation fixture."
        ),
        _flag("--preflight-guard", "Check the machine is ready before the run is launched."),
        _flag("--require-task-material-ready", "Make missing task material a blocker."),
        click.option("--auth-env-name", multiple=True, help="Auth variable NAME to check."),
        click.option("--job-name", default=None, help="Harbor job name of a planned run."),
        _int_option("--n-attempts", "Attempts per task in the launch preview (default 1)."),
        _int_option("--n-concurrent", "Trials run at once in the launch preview (default 1)."),
        click.option(
            "--runner-ref", default=None, help="Runner reference to record (planned runs)."
        ),
        click.option("--classification", default=None, help="Classification label to record."),
        click.option(
            "--recommended-action", default=None, help="Recommended next action to record."
        ),
        _flag("--update-run-ledger", "Upsert the records into the run ledger."),
        click.option(
            "--run-ledger-path",
            default=None,
            help="Ledger JSON (default: the one the store knows, else benchmark-run-ledger.json).",
        ),
        click.option(
            "--ledger-id",
            default=None,
            help="Ledger key in the store (default: the ledger path relative to the project).",
        ),
        click.option(
            "--run-group-id", default=None, help="Group id shared by runs compared together."
        ),
        click.option(
            "--arm-id", default=None, help="Arm of every record (default: agent and model)."
        ),
        click.option("--run-ledger-note", default=None, help="A note kept on the ledger rows."),
        click.option(
            "--delivery-batch-scale",
            type=click.Choice(_delivery_scales()),
            default=None,
            help="[loopx] Batch-scale label kept on the record and its rollout event.",
        ),
        click.option(
            "--delivery-outcome",
            type=click.Choice(_delivery_outcomes()),
            default=None,
            help="[loopx] Delivery outcome label kept on the record and its rollout event.",
        ),
        click.option(
            "--agent-kwarg",
            multiple=True,
            metavar="KEY=VALUE",
            help="Extra agent kwarg for the launch preview (repeatable).",
        ),
        _flag("--dry-run", "Compute and show everything, write nothing (the default)."),
        _flag("--execute", "Append the events and render the files."),
        _flag("--no-global-sync", "Do not sync the goal into the runtime root's global registry."),
        _flag("--no-render", "Append events only; render files later with `benchledger render`."),
        click.option(
            "--jobs",
            metavar="N",
            default=None,
            callback=_argparse_int,
            help=(
                "Read a Harbor job's trials or an Inspect directory's logs on N cores "
                "(default 1); the records are the same."
            ),
        ),
        _flag(
            "--verbose",
            "List every run in full (the default summary shows the first few and how many more).",
        ),
        format_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


SECTIONS = (
    ("Source (what to read)", (
        "benchmark_name", "harbor_job_dir", "skillsbench_result_root", "skillsbench_result_json",
        "log_dir", "log", "scorer", "dataset", "jobs",
    )),
    ("Selection", (
        "include_task_name", "selection_policy", "keep_corrupt", "arm_map", "arm_role", "arm_id",
        "run_group_id",
    )),
    ("Recording", (
        "goal_id", "execute", "dry_run", "update_run_ledger", "run_ledger_path", "ledger_id",
        "run_ledger_note", "no_global_sync", "no_render", "classification",
        "recommended_action", "delivery_batch_scale", "delivery_outcome", "output_format",
        "verbose",
    )),
    ("Planning a run (no runner output yet)", (
        "mode", "runner", "agent", "model", "skillsbench_route", "job_name", "n_attempts",
        "n_concurrent", "runner_ref", "agent_kwarg", "timeout_preset", "timeout_multiplier",
        "agent_timeout_multiplier", "verifier_timeout_multiplier",
        "agent_setup_timeout_multiplier", "environment_build_timeout_multiplier",
        "preflight_guard", "require_task_material_ready", "auth_env_name",
    )),
    ("loopx compatibility", (
        "loopx_worker_artifacts", "codex_install_strategy", "codex_preflight_timeout_sec",
        "worker_codex_materialization_strategy",
    )),
)  # fmt: skip


@click.command("run", cls=GroupedHelpCommand, sections=SECTIONS)
@_run_options
@click.pass_context
def run(ctx: click.Context, output_format: str | None, **opts: Any) -> None:
    """Record a benchmark run: ingest a Harbor job / BenchFlow results / Inspect logs, or plan one.

    Dry run unless --execute. Examples:

      benchledger benchmark run terminal-bench --harbor-job-dir jobs/J --execute

      benchledger benchmark run skillsbench --goal-id demo --skillsbench-result-root jobs

      benchledger benchmark run inspect --goal-id demo --log-dir logs
    """
    # The collector stays paused from the imports to the printed payload: with it back on for
    # the print, one collection walked every object of the payload (~9 ms at 3,000 trials).
    with collector_paused():
        payload = _run(ctx, output_format, opts)
    if not payload.get("ok", True):
        ctx.exit(1)


def _run(ctx: click.Context, output_format: str | None, opts: dict[str, Any]) -> dict[str, Any]:
    fmt = resolve_format(ctx, output_format)
    root = ctx.find_root().obj
    verbose = opts.pop("verbose")
    given = BenchmarkRunRequest.from_options(opts)
    request = with_default_goal_id(given)
    goal_source = default_goal_source(given) if given.goal_id is None else None
    validate_benchmark_run_options(request)
    with progress_bar("reading trials") as progress:
        payload = run_benchmark(
            request,
            db=root.get("db"),
            registry=root.get("registry"),
            runtime_root=root.get("runtime_root"),
            metadata=command_metadata(),
            progress=progress,
        )
    goal_default = goal_source[0] if goal_source else None
    emit(payload, fmt, TITLE, markdown=partial(_markdown, verbose=verbose, goal=goal_default))
    return payload


def _markdown(payload: dict[str, Any], *, verbose: bool, goal: str | None) -> str:
    """The summary and the first runs; with ``--verbose``, the summary and every run in full
    (projections/reports/run_summary.py)."""
    if verbose:
        details = render_append_markdown(payload, scalar=word)
        return with_summary(details, payload, cwd=Path.cwd(), goal_default=goal)
    return short_markdown(payload, cwd=Path.cwd(), goal_default=goal)
