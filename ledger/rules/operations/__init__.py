"""Rules of whole-ledger operations: aggregate, archive, merge, drift check, case analysis,
parity."""
