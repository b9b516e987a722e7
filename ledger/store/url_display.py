"""A store URL as messages and metadata may show it: without its password.

Its own module because both the location resolver (``ledger/store/database.py``) and the PostgreSQL
driver's connection error (``ledger/store/postgresql.py``) show a URL, and the resolver imports
the driver: sharing it through either would make the two import each other.
"""

from __future__ import annotations

import re

_PASSWORD = re.compile(r"^([A-Za-z][\w+.-]*://[^:/@]*):[^@/]*@")


def display_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (as SQLAlchemy renders it)."""
    return _PASSWORD.sub(r"\1:***@", url, count=1)
