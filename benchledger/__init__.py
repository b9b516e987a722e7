"""benchledger: an auditable, event-sourced ledger of AI-agent benchmark runs.

The installed package holds the repository's layers as subpackages: ``ledger`` (the write
side), ``projections`` (the read side), ``services`` (one application service per command
family), ``commands`` (the click layer) and ``migrations`` (Alembic). docs/architecture.md
maps the folders.
"""

__version__ = "0.1.0"
