"""A store URL as messages and metadata may show it: without its credentials.

Its own module because both the location resolver (``ledger/store/database.py``) and the PostgreSQL
driver's connection error (``ledger/store/postgresql.py``) show a URL, and the resolver imports
the driver: sharing it through either would make the two import each other.

A URL carries credentials in its userinfo (``user:password@``) and in query parameters
(``?password=…``, ``&sslpassword=…``, ``&token=…``, a SAS ``&sig=…``): both are shown as ``***``
(issue 36). The scan is linear: one regular expression per part, no backtracking over the URL.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MASK = "***"
_SCRUB_MIN = 4
_PASSWORD = re.compile(r"^([A-Za-z][\w+.-]*://[^:/@]*):([^@/]*)@")
_QUERY_PARAM = re.compile(r"([?&;])([^=&;#]*)=([^&;#]*)")
# A parameter whose name holds one of these words carries a credential.
_SECRET_NAME = re.compile(r"pass|pwd|secret|token|key|sig|auth|credential", re.IGNORECASE)


def _is_secret_name(name: str) -> bool:
    return _SECRET_NAME.search(unquote(name)) is not None


def display_url(url: str) -> str:
    """``url`` with its password and credential-named query values replaced by ``***``
    (the userinfo as SQLAlchemy renders it)."""
    shown = _PASSWORD.sub(r"\1:" + MASK + "@", url, count=1)
    if "?" not in shown:
        return shown
    head, query = shown.split("?", 1)

    def mask(match: re.Match[str]) -> str:
        sep, name, value = match.groups()
        return f"{sep}{name}={MASK}" if value and _is_secret_name(name) else match.group()

    return head + "?" + _QUERY_PARAM.sub(mask, "?" + query)[1:]


def url_secrets(url: str) -> list[str]:
    """The credential values inside ``url`` (raw and percent-decoded), longest first, for
    scrubbing them from a driver's message that may quote them."""
    found: set[str] = set()
    userinfo = _PASSWORD.match(url)
    if userinfo and userinfo.group(2):
        found.add(userinfo.group(2))
    if "?" in url:
        for _sep, name, value in _QUERY_PARAM.findall("?" + url.split("?", 1)[1]):
            if value and _is_secret_name(name):
                found.add(value)
    found |= {unquote(value) for value in found}
    # A value shorter than this is not scrubbed: replacing every ``x`` or ``ab`` in a message
    # would garble it, and a driver quotes a credential only whole.
    return sorted((value for value in found if len(value) >= _SCRUB_MIN), key=len, reverse=True)


def scrub_url_secrets(text: str, url: str) -> str:
    """``text`` with every credential value of ``url`` replaced by ``***``."""
    for secret in url_secrets(url):
        text = text.replace(secret, MASK)
    return text
