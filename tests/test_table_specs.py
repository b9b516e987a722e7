"""The schema is declared once, in the SQLAlchemy models: the plain table specs statements are
built from are generated from them (``python -m benchledger.migrations.snapshot``), and stay so."""

from __future__ import annotations

import pytest

import benchledger.projections.read_models.schema  # noqa: F401 - registers the read-model tables on the metadata
from benchledger.ledger.store import tables as ledger_tables
from benchledger.ledger.store.schema import metadata
from benchledger.migrations.table_specs import SPEC_FILES, render
from benchledger.projections.read_models import tables as rm_tables


@pytest.mark.parametrize("spec_file", SPEC_FILES, ids=lambda f: f"{f.path.parent.name}/tables")
def test_the_generated_specs_are_what_the_models_say(spec_file):
    """Fails after a model changes until ``python -m benchledger.migrations.snapshot`` is run."""
    assert spec_file.path.read_text(encoding="utf-8") == render(spec_file)


def test_every_model_has_exactly_one_spec_with_its_columns_and_key():
    specs = [
        value
        for module in (ledger_tables, rm_tables)
        for value in vars(module).values()
        if isinstance(value, ledger_tables.TableSpec)
    ]
    assert sorted(s.name for s in specs) == sorted(metadata.tables)
    for spec in specs:
        model = metadata.tables[spec.name]
        assert spec.columns == tuple(c.name for c in model.columns)
        assert spec.primary_key == tuple(c.name for c in model.primary_key.columns)


def test_a_long_spec_is_laid_out_one_column_a_line():
    from sqlalchemy import Column, Integer, MetaData, Table

    from benchledger.migrations.table_specs import _spec

    columns = [Column(f"column_number_{i}", Integer, primary_key=i == 0) for i in range(9)]
    wide = Table("t", MetaData(), *columns)
    text = _spec("wide", wide)
    assert text.startswith('WIDE = TableSpec(\n    "t",\n    (\n        "column_number_0",\n')
    assert text.endswith('    ),\n    ("column_number_0",),\n)\n')
    assert max(len(line) for line in text.splitlines()) <= 100
