"""The projection code revision ``0002_ledger_render_cache`` ran, frozen as it was then.

A historical revision must build the same schema and data forever, so it cannot import live
code: an edit to ``projections/ledger_cases.py`` would otherwise rewrite what an old upgrade
does. These modules are copies (imports rewritten to point at each other) of the live modules
the backfill used; nothing live imports them, and ``tests/test_migrations_frozen.py`` checks
both directions. They are not to be edited or kept in step with the live code.
"""
