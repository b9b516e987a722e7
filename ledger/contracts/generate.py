"""Write the JSON Schema of every contract into ``schemas/`` (run after changing a model):

    python -m benchledger.ledger.contracts.generate

Each file is the model's ``model_json_schema()`` with a ``$schema`` and ``$id``, as indented,
key-stable JSON ending in a newline, so a change to a model shows as a small diff.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchledger.ledger.contracts.catalog import SCHEMA_MODELS
from benchledger.ledger.contracts.schema_files import SUFFIX

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def render_schemas() -> dict[str, str]:
    """File name -> text for every contract, exactly as shipped."""
    out = {}
    for name, model in SCHEMA_MODELS.items():
        schema = {"$schema": DIALECT, "$id": f"urn:benchledger:{name}", **model.model_json_schema()}
        out[name + SUFFIX] = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    return out


def write_schemas(directory: Path = SCHEMA_DIR) -> list[str]:
    """Replace the shipped files with freshly generated ones; returns the names written."""
    directory.mkdir(parents=True, exist_ok=True)
    rendered = render_schemas()
    for stale in directory.glob("*" + SUFFIX):
        if stale.name not in rendered:
            stale.unlink()
    for file_name, text in rendered.items():
        (directory / file_name).write_text(text, encoding="utf-8")
    return sorted(rendered)


if __name__ == "__main__":
    for written in write_schemas():
        print(f"wrote {SCHEMA_DIR.name}/{written}")
