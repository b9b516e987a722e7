"""Command handlers: decide what happened and which events say so.

A handler reads what it needs through the ``reads`` object the composition root hands it (the
read models), returns a plan (events plus the payload to print), and never writes a file: files
are projections rendered after the events commit.
"""
