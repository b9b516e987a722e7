"""``benchledger report``: the ledger as one static HTML page people look at.

The page is a projection like the ledger files: built from the read models (and, for the
overview, from ``compare``), written atomically into a directory and recorded by an
``export_written`` event. Modules: ``contents`` gathers what the page shows, ``grid`` and
``timeline`` shape the two large views, ``charts`` draws SVG with matplotlib, ``audit`` proves
where the numbers came from, ``site`` renders and writes the directory.

Everything here that needs the ``report`` extra (Jinja2, matplotlib) is imported inside the
functions that use it, so no other command pays for it.
"""
