"""Our packages import each other in one direction: no module reaches back into one that
imports it, function-level imports included (they hide a cycle until the function runs).

Imports under ``if TYPE_CHECKING:`` are left out: they never execute, so they cannot form a
cycle at run time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ledger", "commands", "services", "projections", "migrations")

# Cycles that exist and are not yet removed, named so that a new one fails and a removed one
# must be taken off the list (issue #15). None is left.
KNOWN_CYCLES: set[frozenset[str]] = set()


def module_name(path: Path) -> str:
    """The installed name: the repository's layer folders are subpackages of ``benchledger``."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(["benchledger", *(parts[:-1] if parts[-1] == "__init__" else parts)])


def layer(name: str) -> str:
    """``ledger`` for ``benchledger.ledger.store.events``."""
    return name.split(".")[1]


def our_modules() -> dict[str, Path]:
    return {
        module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")
    }


def _is_type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement at any depth, but those inside ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        if _is_type_checking_block(node):
            pending.extend(node.orelse)  # type: ignore[attr-defined]
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def imported_names(name: str, path: Path) -> set[str]:
    """Every dotted name a module's imports may refer to (a module, or a module's attribute)."""
    names: set[str] = set()
    for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
            anchor = package[: len(package) - (node.level - 1)]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        names.add(base)
        names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    modules = our_modules()
    return {
        name: {dep for dep in imported_names(name, path) if dep in modules and dep != name}
        for name, path in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_the_cycle_finder_finds_a_cycle_and_only_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [frozenset({"a", "b", "c"})]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_function_level_and_relative_imports_are_edges_type_checking_ones_are_not(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from benchledger.ledger.store import event_store\n"
        "else:\n    import benchledger.ledger.core.clock\n"
        "def f():\n    from benchledger.commands.cli import cli\n"
        "from . import sibling\n",
        encoding="utf-8",
    )
    names = imported_names("benchledger.ledger.probe", probe)
    wanted = {
        "benchledger.commands.cli",
        "benchledger.commands.cli.cli",
        "benchledger.ledger.sibling",
        "benchledger.ledger.core.clock",
    }
    assert wanted <= names
    assert "benchledger.ledger.store.event_store" not in names


def test_our_packages_have_no_import_cycle_but_the_named_ones():
    found = set(cycles(import_graph()))
    assert found - KNOWN_CYCLES == set(), f"new import cycles: {found - KNOWN_CYCLES}"
    assert KNOWN_CYCLES - found == set(), (
        f"cycles gone, take them off KNOWN_CYCLES: {KNOWN_CYCLES - found}"
    )


def test_no_command_module_imports_the_root_command():
    """The root names the command modules (lazily); a module reaching back made every command
    depend on all the others. Only ``python -m benchledger`` starts it."""
    graph = import_graph()
    importers = sorted(name for name, deps in graph.items() if "benchledger.commands.cli" in deps)
    assert importers == []


def test_no_command_module_imports_another():
    """Command modules share only the click helpers (``output``, ``runtime``, ...); a decision
    one command module needs from another belongs in a handler under ``ledger/handlers/``."""
    graph = import_graph()
    crossing = sorted(
        f"{name} -> {dep}"
        for name, deps in graph.items()
        if name.startswith("benchledger.commands.") and name.endswith("_commands")
        for dep in deps
        if dep.startswith("benchledger.commands.") and dep.endswith("_commands")
    )
    assert crossing == []


# (importer, imports it must not make): areas are the top layers and the subpackages of
# ``ledger`` and ``projections`` (``area``), a rule on ``ledger`` covers all of ``ledger.*``.
LAYER_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # the write side never reaches the read side, the services or the CLI
    ("ledger", ("projections", "services", "commands")),
    ("projections", ("services", "commands")),
    ("services", ("commands",)),
    ("migrations", ("services", "commands")),
    # the store and the shared core sit under every rule, source adapter and handler
    ("ledger.store", ("ledger.rules", "ledger.handlers", "ledger.sources", "ledger.requests")),
    ("ledger.core", ("ledger.rules", "ledger.handlers", "ledger.sources", "ledger.requests")),
    # runner adapters read runner output into records; they neither decide nor store
    ("ledger.sources", ("ledger.store", "ledger.handlers", "ledger.requests")),
    # pure rules know no store, handler or request
    ("ledger.rules", ("ledger.store", "ledger.handlers", "ledger.requests")),
    # read models are folded from events; the files and reports are made from them
    ("projections.read_models", ("projections.reports", "projections.publishing")),
)

# Imports against LAYER_RULES that exist today, named so that a new one fails and a removed one
# must be taken off the list (the way KNOWN_CYCLES works).
KNOWN_UPWARD: set[str] = {
    # the ledger read models pre-render row fragments with the publishing code
    "benchledger.projections.read_models.ledger_cases -> "
    "benchledger.projections.publishing.ledger_fragments",
    "benchledger.projections.read_models.ledger_rows -> "
    "benchledger.projections.publishing.ledger_v0",
    # compare's cache keeps the report's per-row facts
    "benchledger.projections.read_models.compare_facts -> "
    "benchledger.projections.reports.compare.document",
    "benchledger.projections.read_models.compare_facts -> "
    "benchledger.projections.reports.compare.guard",
    "benchledger.projections.read_models.compare_facts -> "
    "benchledger.projections.reports.compare.rows",
}


def area(name: str) -> str:
    """``ledger.store`` for ``benchledger.ledger.store.events``; ``services`` for
    ``benchledger.services.compare``; ``ledger`` for ``benchledger.ledger`` itself."""
    parts = name.split(".")
    if parts[1] in ("ledger", "projections") and len(parts) > 2:
        return ".".join(parts[1:3])
    return parts[1]


def _within(name_area: str, rule_area: str) -> bool:
    return name_area == rule_area or name_area.startswith(rule_area + ".")


def upward_imports(graph: dict[str, set[str]]) -> set[str]:
    """Every ``importer -> imported`` edge that LAYER_RULES forbids."""
    return {
        f"{name} -> {dep}"
        for name, deps in graph.items()
        for importer, forbidden in LAYER_RULES
        if _within(area(name), importer)
        for dep in deps
        if any(_within(area(dep), f) for f in forbidden)
    }


def test_area_names_the_subpackage_of_ledger_and_projections():
    assert area("benchledger.ledger.store.events") == "ledger.store"
    assert area("benchledger.ledger.sources.harbor.reading") == "ledger.sources"
    assert area("benchledger.projections.read_models.engine") == "projections.read_models"
    assert area("benchledger.services.compare") == "services"
    assert area("benchledger.ledger.store") == "ledger.store"  # the package's __init__
    assert area("benchledger.ledger") == "ledger"
    graph = {
        "benchledger.ledger.sources.x": {"benchledger.ledger.store.events"},
        "benchledger.ledger.store.events": {"benchledger.ledger.core.clock"},
        "benchledger.projections.read_models.m": {"benchledger.projections.reports.r"},
    }
    assert upward_imports(graph) == {
        "benchledger.ledger.sources.x -> benchledger.ledger.store.events",
        "benchledger.projections.read_models.m -> benchledger.projections.reports.r",
    }


def test_layers_import_downward_only_but_the_named_exceptions():
    found = upward_imports(import_graph())
    assert sorted(found - KNOWN_UPWARD) == [], "new upward imports"
    assert sorted(KNOWN_UPWARD - found) == [], "gone: take them off KNOWN_UPWARD"


def test_only_the_command_layer_imports_click_or_the_commands():
    """``commands`` is the click layer and the top: click stays out of every other package
    (a service is called the same way from a test or a library), and nothing but a command
    module (and ``python -m benchledger``) imports one."""
    graph = import_graph()
    below = {n for n in graph if area(n) != "commands"}
    click_users = sorted(
        n for n in below if any(d.split(".")[0] == "click" for d in _all_imports(n))
    )
    assert click_users == []
    reaching_up = sorted(f"{n} -> {d}" for n in below for d in graph[n] if area(d) == "commands")
    assert reaching_up == []


def _all_imports(name: str) -> set[str]:
    """Every dotted name ``name`` imports, ours or not."""
    return imported_names(name, our_modules()[name])


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_is_walked(package):
    assert any(layer(name) == package for name in our_modules())
