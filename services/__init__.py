"""Application services: one per command family, between the click layer and the handlers.

A service opens the store (through the composition root), lets the handler decide inside one
transaction, appends the plan's events, and renders the projections after the commit. It
decides nothing itself: every rule it applies is a handler's or a projection's.
"""
