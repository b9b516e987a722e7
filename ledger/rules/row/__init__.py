"""Rules of one ledger row: identity, score, failure class, repair route, refs
(docs/formats/ledger_v0.md)."""
