"""The read models as they stood at a past moment: ``--as-of`` replays and snapshots."""
