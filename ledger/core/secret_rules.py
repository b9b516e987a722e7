"""The secret rules of the public-safety filter, as (first character, rest of pattern) pairs.

``ledger/core/safety.py`` joins them, with its local-path rules, into one compiled alternation
dispatched on the first character. Every rule keeps the filter linear in the text: a rule's
unbounded runs are over characters that cannot start the same rule again, or are possessive
(``++``), so no start position rescans text another start already scanned (issue 36).

Three kinds (docs/benchmark_run_v0.md §3):

* keyword rules (case-insensitive): a credential-bearing name, then a value;
* generic named values: a flag, variable or URL query parameter whose last name segment says
  key, token, secret, password (or a spelling of them), then a value that looks like a secret;
* provider shapes (case-sensitive): the prefixes of real credentials. They follow the rules of
  gitleaks (``config/gitleaks.toml``; the rule id is named beside each shape) with the lengths
  relaxed to a minimum, so a cut or partly masked key still fails.
"""

from __future__ import annotations

# --- keyword rules (case-insensitive) ----------------------------------------------------------
# A keyword counts wherever it starts, except that the short ``ak``/``sk``/``sig`` and ``bearer``
# must not be glued to a preceding letter or digit (``task-123…``, ``risk: high``, ``design=``
# are not keys). Key/value forms tolerate a quote after the key and before the value so the
# JSON/YAML spellings fail too. A value that is only an environment reference (``${NAME}`` or
# ``$NAME``) is a name, not a secret, so it passes: launch previews legitimately carry
# ``--agent-env OPENAI_API_KEY=${OPENAI_API_KEY}``.
NG = r"(?<![A-Za-z0-9][\s\S])"  # "not glued": the character before the first is no alnum
_Q = r"[\"']?"
NOT_ENV_REF = r"(?!\$\{?[A-Za-z_][A-Za-z0-9_]*+\}?(?=[\s\"'`]|\Z))"
_KV = _Q + r"\s*+[=:]\s*+" + _Q + NOT_ENV_REF
# Common words (``token``, ``secret``, ``password``) also end task names, and ``:`` joins the
# parts of our ids (``…:vulnerable-secret:codex:…``), so for them a ``:`` counts only when
# quoted (``"token": "…"``) or followed by a space (``token: …``, the YAML spelling).
_KV_WORD = _Q + r"(?:\s*+=\s*+|\s*+:\s++|(?<=[\"'])\s*+:\s*+)" + _Q + NOT_ENV_REF
_VALUE = r"[^\s\"']"
# A value that looks like a secret rather than a word: 8+ characters with a digit among the
# first 41, or 16+ characters. ``token=abcdefghijk`` and ``--token flag`` stay public.
_SECRETISH = r"(?:(?=[^\s\"'`]{0,40}[0-9])[^\s\"'`]{8}|[^\s\"'`]{16})"
_AK_SK_TAIL = r"k(?:" + _KV + _VALUE + r"|[-_=:][a-z0-9_=-]{10,})"
KEYWORD_RULES: tuple[tuple[str, str], ...] = (
    ("b", NG + r"earer\s++[a-z0-9._~+/=-]{16}"),
    ("b", NG + r"asic\s++(?=[a-z0-9+/]{0,40}[0-9+/=])[a-z0-9+/]{12}"),  # basic auth credentials
    ("a", r"(?:ccess|ccount)[\s_-]?key" + _KV + _VALUE),
    ("p", r"rivate[\s_-]?key" + _KV + _VALUE),
    ("s", r"ecret[\s_-]?key" + _KV + _VALUE),
    ("s", r"ecret" + _KV_WORD + _VALUE),
    ("a", NG + _AK_SK_TAIL),
    ("s", NG + _AK_SK_TAIL),
    ("t", r"oken" + _KV_WORD + _VALUE + "{12}"),
    ("a", r"uthorization" + _Q + r"\s*+:"),
    ("a", r"pi[\s_-]?key" + _KV + _VALUE),
    ("p", r"ass(?:w(?:or)?d|phrase)" + _KV_WORD + _VALUE),
    ("p", NG + r"wd" + _KV_WORD + _VALUE),  # ``MYSQL_PWD=…``
    ("s", r"shpass\s++-p\s*+[^\s\"'-]"),  # ``sshpass -p <password>``
    # Azure SAS and signed-URL signatures (``sig=``, ``X-Amz-Signature=``)
    ("s", NG + r"ig" + _KV_WORD + r"[a-z0-9%+/=_-]{10}"),
    ("s", r"ignature" + _KV_WORD + r"[a-z0-9%+/=_-]{16}"),
)

# --- generic named values (case-insensitive) ---------------------------------------------------
# A flag, variable or query parameter whose last name segment says it holds a credential.
# ``key`` and ``token`` count only as a whole segment: ``monkey``, ``max_tokens`` and
# ``token_count`` are not credentials. The word is found by first-character dispatch and must
# begin a segment (start, or after a non-alphanumeric character) and end the name.
_NAME_WORDS = (
    "key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "credential",
    "credentials",
    "auth",
    "pat",
)
_NAME_WORD = "(?:" + "|".join(_NAME_WORDS) + ")"
_NAME_END = r"(?![A-Za-z0-9])"
# A flag's earlier name segments (``--openai-api-``): bounded, each run possessive.
_NAME_HEAD = r"(?:[A-Za-z0-9]++[_.-]){0,8}"
# ``--name value``: a flag at the start of a word; a value that is a flag or an environment
# reference is no secret.
_FLAG = r"(?<![^\s\"'(\[=][\s\S])-?" + _NAME_HEAD + _NAME_WORD + _NAME_END
NAMED_VALUE_RULES: tuple[tuple[str, str], ...] = (
    # ``AZURE_OPENAI_KEY=…``, ``"db_password": "…"``, ``--api-key=…``
    *(
        (
            first,
            NG
            + "(?:"
            + "|".join(w[1:] for w in _NAME_WORDS if w[0] == first)
            + ")"
            + _NAME_END
            + _KV_WORD
            + _SECRETISH,
        )
        for first in dict.fromkeys(word[0] for word in _NAME_WORDS)
    ),
    ("-", _FLAG + r"\s++(?!-)" + _Q + NOT_ENV_REF + _SECRETISH),
    # a password flag's value need not look random: ``--password hunter2``
    (
        "-",
        r"(?<![^\s\"'(\[=][\s\S])-?"
        + _NAME_HEAD
        + r"(?:password|passwd|pwd|passphrase|secret)"
        + _NAME_END
        + r"\s++(?!-)"
        + _Q
        + NOT_ENV_REF
        + r"[^\s\"'`]{4}",
    ),
    # a URL query parameter (``?password=…``, ``&sig=…``, ``&X-Amz-Signature=…``): any value
    *(
        (
            first,
            _NAME_HEAD
            + "(?:"
            + "|".join((*_NAME_WORDS, "sig", "signature"))
            + ")"
            + r"=(?![&#\s])",
        )
        for first in "?&"
    ),
)

# --- case-sensitive named values -----------------------------------------------------------------
_UPPER_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PWD", "CREDENTIALS")
CASED_RULES: tuple[tuple[str, str], ...] = (
    # an environment variable and its value split by a space: ``OPENAI_API_KEY 0a1b…``
    *(
        (
            word[0],
            r"(?<=[A-Z0-9]_"
            + word[0]
            + r")"
            + word[1:]
            + _NAME_END
            + r"\s++"
            + _Q
            + NOT_ENV_REF
            + _SECRETISH,
        )
        for word in _UPPER_WORDS
    ),
    # camelCase: ``openaiKey: "…"``
    ("K", r"(?<=[a-z0-9]K)ey" + _NAME_END + _KV_WORD + _SECRETISH),
    # ``curl -u user:password``, ``--user user:password``
    ("-", r"(?<![^\s\"'][\s\S])(?:u\s*+|-user[\s=]++)" + _Q + r"[^\s:\"'/@]++:[^\s\"'@]"),
)

# --- provider shapes (case-sensitive, found anywhere) ----------------------------------------
# gitleaks rule ids in comments; lengths are minimums (a cut key still fails).
TOKEN_RULES: tuple[tuple[str, str], ...] = (
    ("s", r"k-(?:proj|ant|svcacct|admin|or|None)-[A-Za-z0-9_-]{8}"),  # openai-api-key, anthropic
    ("s", r"k-(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[0-9])[A-Za-z0-9]{20}"),
    ("s", NG + r"k-[a-z0-9]{32}"),  # lower-case hex ``sk-`` keys (DeepSeek, Moonshot, …)
    ("T", r"3BlbkFJ"),  # openai-api-key: base64 of "OpenAI" inside legacy keys
    ("s", r"k_(?:live|test)_[A-Za-z0-9]{10}"),  # stripe-access-token
    ("r", r"k_(?:live|test)_[A-Za-z0-9]{10}"),
    ("w", r"hsec_[A-Za-z0-9]{20}"),  # stripe webhook secret
    ("g", r"h[pousr]_[A-Za-z0-9]{20}|ithub_pat_[A-Za-z0-9_]{20}"),  # github-pat, github-oauth, …
    # gitlab-pat, gitlab-ptt, gitlab-deploy-token, gitlab-runner-authentication-token, …
    ("g", r"l(?:pat|ptt|dt|rt|soat|cbt|ffct|imt|agent|oas|wt)-[A-Za-z0-9_-]{20}"),
    ("g", r"sk_[A-Za-z0-9]{20}"),  # groq-api-key
    ("g", r"lc_[A-Za-z0-9+/]{32}|lsa_[A-Za-z0-9]{32}"),  # grafana-cloud-api-token, -service-account
    ("x", r"ai-[A-Za-z0-9]{32}"),  # xai-api-key
    ("n", r"vapi-[A-Za-z0-9_-]{20}"),  # nvidia-api-key
    ("p", r"plx-[A-Za-z0-9]{20}"),  # perplexity-api-key
    ("l", r"sv2_(?:pt|sk)_[A-Za-z0-9_]{16}"),  # langsmith-api-key
    ("l", r"in_(?:api|oauth)_[A-Za-z0-9]{20}"),  # linear-api-key
    ("r", r"8_[A-Za-z0-9]{20}"),  # replicate-api-token
    ("f", r"w_[A-Za-z0-9]{20}"),  # fireworks-api-key
    ("c", r"sk-[A-Za-z0-9]{20}"),  # cerebras-api-key
    ("t", r"vly-[A-Za-z0-9_-]{20}"),  # tavily-api-key
    ("e", r"2b_[A-Za-z0-9]{30}"),  # e2b-api-key
    ("h", r"f_[A-Za-z0-9]{20}"),  # huggingface-access-token
    ("a", r"pi_org_[A-Za-z0-9]{30}"),  # huggingface-organization-api-token
    ("n", r"pm_[A-Za-z0-9]{30}"),  # npm-access-token
    ("p", r"ypi-AgE[A-Za-z0-9_-]{20}"),  # pypi-upload-token
    ("x", r"ox[abposre]-[A-Za-z0-9-]{10}|app-[0-9]-[A-Za-z0-9-]{10}"),  # slack-*-token
    ("h", r"ooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20}"),  # slack-webhook
    ("d", r"iscord(?:app)?\.com/api/webhooks/[0-9]++/[A-Za-z0-9_-]{20}"),  # discord-webhook
    ("A", r"Iza[0-9A-Za-z_-]{20}"),  # gcp-api-key (35 characters; a cut one fails too)
    ("y", r"a29\.[A-Za-z0-9_-]{20}"),  # google oauth access token
    ("e", r"yJ[A-Za-z0-9_-]{10}"),  # jwt (base64url of ``{"``)
    (
        "A",
        r"(?<![A-Z0-9][\s\S])(?:KIA|SIA|GPA|IDA|ROA|IPA|NPA|NVA|BIA|CCA)[A-Z0-9]{16}(?![A-Z0-9])",
    ),  # aws-access-token
    ("-", r"----\s?BEGIN[A-Z ]{0,40}PRIVATE KEY"),  # private-key
    ("S", r"G\.[A-Za-z0-9_-]{16,}+\.[A-Za-z0-9_-]{16}"),  # sendgrid-api-token
    ("S", NG + r"K[0-9a-fA-F]{32}"),  # twilio-api-key
    ("k", NG + r"ey-[0-9a-z]{32}"),  # mailgun-private-api-token
    ("s", r"hp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),  # shopify-*-token
    ("d", r"o[opr]_v1_[a-f0-9]{32}"),  # digitalocean-*
    ("d", r"api[a-f0-9]{32}"),  # databricks-api-token
    ("d", r"p\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{30}"),  # doppler-api-token
    ("d", r"tn_[A-Za-z0-9]{30}"),  # daytona api key
    ("p", r"ul-[a-f0-9]{40}"),  # pulumi-api-token
    ("n", r"tn_[A-Za-z0-9]{40}"),  # notion api token
    ("s", r"ecret_[A-Za-z0-9]{40}"),  # notion legacy integration token
    ("s", r"ntry[su]_[A-Za-z0-9_=+/-]{20}"),  # sentry-org-token, sentry-user-token
    ("h", r"v[sbr]\.[A-Za-z0-9_-]{24}"),  # vault-service-token, vault-batch-token
    ("A", r"TATT3[A-Za-z0-9_=-]{30}"),  # atlassian-api-token
    ("P", r"MAK-[A-Za-z0-9]{24,}+-[A-Za-z0-9]{20}"),  # postman-api-token
    ("Q", r"(?<=[A-Za-z0-9_~.]{3}[0-9]Q)~[A-Za-z0-9_~.-]{30}"),  # azure-ad-client-secret
    # telegram-bot-api-token: ``123456789:AA…``
    (":", r"(?<=[0-9]{7}:)AA[A-Za-z0-9_-]{30}"),
)
