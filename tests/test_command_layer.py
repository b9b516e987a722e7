"""The click layer stays thin (issue #15): ``commands/`` defines no class, so no state or
decision can hide in it; a class belongs to a request, a handler or a service."""

from __future__ import annotations

import ast

from tests.test_import_graph import ROOT


def test_commands_define_no_class():
    found = []
    for path in sorted((ROOT / "commands").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [
            f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef)
        ]
    assert found == []
