"""``benchledger compare``: arms of one benchmark side by side, with honest uncertainty.

Parses the options into a ``CompareRequest``, reads the ledger rows of the benchmark from the
store, hands them to ``projections.reports.compare.document.build_compare`` and prints the
document. numpy and
scipy are imported only when this command runs.
"""

from __future__ import annotations

from typing import Any

import click

from benchledger.commands.as_of import as_of_note, as_of_option, replay_progress
from benchledger.commands.output import emit, format_option, resolve_format
from benchledger.ledger.core.errors import InputError
from benchledger.ledger.requests.compare import MAX_BOOTSTRAP, CompareRequest, check_bootstrap
from benchledger.services.compare import default_metric, run_compare

TITLE = "Benchmark Compare"


def _bounded_bootstrap(_ctx: click.Context, _param: click.Parameter, value: int) -> int:
    """Refused at parsing, before any store is read (``check_bootstrap`` says why)."""
    try:
        return check_bootstrap(value)
    except InputError as err:
        raise click.BadParameter(err.message) from None


@click.command("compare")
@click.option("--benchmark-id", required=True, help="Benchmark to compare (name@version, or a "
              "bare name for every version of it).")  # fmt: skip
@click.option("--arm", "arms", multiple=True, help="An arm to include (repeatable; default: "
              "every arm with a countable run).")  # fmt: skip
@click.option("--reference", default=None, help="The arm others are paired against "
              "(default: the first arm).")  # fmt: skip
@click.option("--metric", type=click.Choice(["score", "pass"]), default=None,
              help="score: the primary reward; pass: the attempt verdict as 1/0 "
              "(default: pass with --per-case pass@k:K, else score).")  # fmt: skip
@click.option("--per-case", default="mean", show_default=True, metavar="POLICY",
              help="How a case's attempts become one value: mean, pass@k:K, best-of, first, "
              "latest.")  # fmt: skip
@click.option("--bootstrap", type=int, default=2000, show_default=True,
              callback=_bounded_bootstrap,
              help=f"Resamples of cases for the bootstrap interval (0: off; at most "
              f"{MAX_BOOTSTRAP:,}).")  # fmt: skip
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Bootstrap seed."
)
@click.option("--effect", type=float, default=0.05, show_default=True,
              help="Difference to plan for: the cases and attempts per case that would "
              "detect it.")  # fmt: skip
@click.option("--confidence", type=float, default=0.95, show_default=True,
              help="Interval level.")  # fmt: skip
@click.option("--allow-incomparable", is_flag=True,
              help="Pair runs that the comparability guard refuses; every output then carries "
              "a banner.")  # fmt: skip
@click.option("--pool-versions", is_flag=True,
              help="Keep runs of one arm with different agent versions or timeout multipliers "
              "in one arm (default: one arm per setting); every output then carries a "
              "banner.")  # fmt: skip
@click.option("--run-ledger-path", default=None,
              help="Ledger JSON whose rows to read "
              "(default: benchmark-run-ledger.json).")  # fmt: skip
@click.option("--ledger-id", default=None, help="Ledger key in the store.")
@as_of_option
@format_option
@click.pass_context
def compare(ctx: click.Context, output_format: str | None, **opts: Any) -> None:
    """Compare arms of one benchmark case by case: mean, standard error and interval per arm,
    paired differences against the reference (t-test, Holm, bootstrap, McNemar for pass), power,
    coverage with every exclusion named, cost per case and the score-cost Pareto front.

    Refuses (exit 1) to pair runs whose benchmark version, dataset, task digest or timeout
    policy differ, unless --allow-incomparable.
    """
    from benchledger.projections.reports.compare.document import render_compare_markdown

    fmt = resolve_format(ctx, output_format)
    request = CompareRequest(
        benchmark_id=opts["benchmark_id"],
        arms=tuple(opts["arms"]),
        reference=opts["reference"],
        metric=default_metric(opts["per_case"], opts["metric"]),
        per_case=opts["per_case"],
        bootstrap=opts["bootstrap"],
        seed=opts["seed"],
        effect=opts["effect"],
        allow_incomparable=opts["allow_incomparable"],
        confidence=opts["confidence"],
        pool_versions=opts["pool_versions"],
    )
    with replay_progress() as progress:
        payload = run_compare(
            request,
            run_ledger_path=opts["run_ledger_path"],
            ledger_id=opts["ledger_id"],
            as_of=opts["as_of"],
            db=ctx.find_root().obj.get("db"),
            progress=progress,
        )
    moment = payload.get("as_of")
    emit(
        payload,
        fmt,
        TITLE,
        lambda shown: as_of_note(moment) + render_compare_markdown(shown["compare"]),
    )
