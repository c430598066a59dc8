"""One redaction for everything judgelab writes or prints, so an API key never reaches a file, a log or a message.

:func:`redact` returns a copy of a text, or of a mapping / list / DataFrame (recursively), with every
secret replaced by ``***``:

* user-info in URLs: ``https://user:KEY@host/v1`` -> ``https://***@host/v1``;
* secret query parameters: ``?api-key=KEY``, ``&key=``, ``token=``, ``sig=`` ... -> ``=***``;
* secret headers, written out (``Authorization: Bearer KEY``, ``'api-key': 'KEY'``, ``x-api-key=KEY``) or as
  the keys of a mapping (``{"extra_headers": {"api-key": KEY}}``), and ``Bearer KEY`` / ``Basic <base64>``
  anywhere;
* any value equal to a key judgelab was given (:func:`register_secret`; the runner, the batch runner, the
  router and the CLI register every key they receive, including keys found inside an ``api_base`` or
  ``extra_params`` headers) or held in a secret-looking environment variable (``OPENAI_API_KEY``,
  ``HF_TOKEN``, ``*_SECRET`` ...), also in its URL-encoded form.

:class:`RedactingFilter` applies the same function to log records; :func:`install_log_redaction` puts it on
judgelab's, litellm's and the HTTP clients' loggers (every level, tracebacks included).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit

__all__ = ["MASK", "SECRET_FIELDS", "SECRET_QUERY_PARAMS", "RedactingFilter", "install_log_redaction",
           "known_secrets", "redact", "register_secret", "secrets_in"]

MASK = "***"
MIN_SECRET_LENGTH = 8  # shorter values are not masked by value (they would mask ordinary words); patterns still apply

# query parameters that carry credentials (Azure-style ``api-key``, Google ``key``, SAS ``sig``, OAuth ``token`` ...)
SECRET_QUERY_PARAMS: frozenset[str] = frozenset({
    "key", "api-key", "api_key", "apikey", "token", "access_token", "auth_token", "id_token", "refresh_token",
    "sig", "signature", "secret", "client_secret", "password", "code", "subscription-key",
})
# header names and mapping keys whose value is a credential (compared lower-case, with "_" read as "-")
SECRET_FIELDS: frozenset[str] = frozenset({
    "authorization", "proxy-authorization", "api-key", "apikey", "x-api-key", "x-goog-api-key",
    "ocp-apim-subscription-key", "access-token", "client-secret", "password", "aws-secret-access-key",
    "aws-session-token", "cookie", "set-cookie",
})

_URL_USERINFO = re.compile(r"\b([a-z][a-z0-9+.\-]*://)[^\s/?#@'\"<>]+@", re.IGNORECASE)
_QUERY = re.compile(
    r"([?&;](?:" + "|".join(re.escape(p) for p in sorted(SECRET_QUERY_PARAMS, key=len, reverse=True))
    + r")=)[^&#\s'\"<>]+", re.IGNORECASE)
_HEADER = re.compile(
    r"(?<![\w-])((?:proxy-)?authorization|api[-_]?key|x-api-key|x-goog-api-key|ocp-apim-subscription-key)"
    r"(['\"]?\s*[:=]\s*['\"]?)((?:bearer|basic|token)\s+)?[^\s'\",;}&)\]]+", re.IGNORECASE)
_BEARER = re.compile(r"\b(bearer\s+)[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE)
# "Basic <base64 of user:password>"; a digit, + / or = is required so that prose ("basic understanding") stays
_BASIC = re.compile(r"\b(basic\s+)(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{12,}={0,2}", re.IGNORECASE)
# a text none of the patterns above can match lacks all of these (most texts): their substitutions are skipped
_MAYBE = re.compile(r"://|=|authorization|api[-_]?key|subscription-key|bearer|basic", re.IGNORECASE)
_ENV_NAME = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)(?:_|$)", re.IGNORECASE)

# the registered keys, replaced (never mutated) under the lock, so a reader always sees a whole set
_REGISTERED: frozenset[str] = frozenset()
_REGISTER_LOCK = threading.Lock()


def register_secret(*values: str | None) -> None:
    """Remember keys judgelab was given, so every later :func:`redact` masks them wherever they appear."""
    global _REGISTERED
    found = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH}
    if found - _REGISTERED:
        with _REGISTER_LOCK:
            _REGISTERED = frozenset(_REGISTERED) | found


# Scanning os.environ costs ~50 us, and redaction runs several times per model call: the secrets found are
# kept with a snapshot of the environment they came from, and scanned again whenever the environment differs
# from the snapshot (a variable set, changed or removed since). The comparison is one C-level dict equality
# over the same objects, so an unchanged environment costs about a microsecond.
_ENV_STATE: tuple[object, frozenset[str]] = (None, frozenset())


def _env_secrets() -> frozenset[str]:
    global _ENV_STATE
    data = getattr(os.environ, "_data", None)  # CPython's os._Environ keeps the encoded variables here
    if not isinstance(data, dict):  # an os.environ replaced by something else: scan it every time
        return _scan_env()
    snapshot, found = _ENV_STATE
    if snapshot == data:
        return found
    snapshot = dict(data)
    found = _scan_env()
    _ENV_STATE = (snapshot, found)  # one assignment: another thread sees the old pair or the new one
    return found


def _scan_env() -> frozenset[str]:
    return frozenset(v for k, v in os.environ.items() if len(v) >= MIN_SECRET_LENGTH and _ENV_NAME.search(k))


def known_secrets(extra: Iterable[str | None] = ()) -> frozenset[str]:
    """Every value masked by value: registered keys, secret-looking environment variables and ``extra``."""
    values = frozenset(_REGISTERED) | _env_secrets()
    added = {v for v in extra if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH and v not in values}
    return values | added if added else values


_FIELD_MEMO: dict[str, bool] = {}  # _field_is_secret of the (few) distinct names met, bounded below


def _field_is_secret(name: Any) -> bool:
    if not isinstance(name, str):
        return False
    secret = _FIELD_MEMO.get(name)
    if secret is None:
        secret = name.strip().lower().replace("_", "-") in SECRET_FIELDS
        if len(_FIELD_MEMO) < 4096:
            _FIELD_MEMO[name] = secret
    return secret


def secrets_in(value: Any) -> set[str]:
    """The credentials inside a URL (user-info, secret query parameters) or a mapping (secret header values,
    ``api_key`` fields), searched recursively; used to register what a user passed in."""
    found: set[str] = set()
    if isinstance(value, str):
        if "://" in value:
            try:
                parts = urlsplit(value)
            except ValueError:
                return found
            found.update(s for s in (parts.username, parts.password) if s)
            found.update(v for k, v in parse_qsl(parts.query) if k.lower() in SECRET_QUERY_PARAMS)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            if _field_is_secret(k) and isinstance(v, str):
                found.add(v.split(None, 1)[1] if v.lower().startswith(("bearer ", "basic ")) else v)
            else:
                found |= secrets_in(v)
    elif isinstance(value, list | tuple):
        for v in value:
            found |= secrets_in(v)
    return {s for s in found if len(s) >= MIN_SECRET_LENGTH}


class _Redactor:
    """The patterns plus one compiled alternation of the secret values known at construction."""

    def __init__(self, secrets: frozenset[str]) -> None:
        forms = set(secrets)
        for s in secrets:
            forms.update((quote(s, safe=""), quote_plus(s, safe="")))
        ordered = sorted(forms, key=len, reverse=True)  # a longer form first, so no half of a key is left behind
        self.values = re.compile("|".join(re.escape(s) for s in ordered)) if ordered else None

    def text(self, text: str) -> str:
        if self.values is not None:
            text = self.values.sub(MASK, text)
        if _MAYBE.search(text) is None:
            return text
        if "://" in text:
            text = _URL_USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
        if "=" in text:
            text = _QUERY.sub(lambda m: m.group(1) + MASK, text)
        text = _HEADER.sub(lambda m: m.group(1) + m.group(2) + (m.group(3) or "") + MASK, text)
        text = _BEARER.sub(lambda m: m.group(1) + MASK, text)
        return _BASIC.sub(lambda m: m.group(1) + MASK, text)

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if value is None or isinstance(value, int | float):  # bools too: nothing to mask, returned as they are
            return value
        if isinstance(value, Mapping):
            out = {}
            for k, v in value.items():
                if isinstance(v, str):  # a non-empty value under a secret name is masked whole
                    out[k] = MASK if v and _field_is_secret(k) else self.text(v)
                else:
                    out[k] = self.value(v)
            return out
        if isinstance(value, list | tuple | set | frozenset):
            return type(value)(self.value(v) for v in value)
        frame = _frame_copy(value, self.value)
        return value if frame is None else frame


def _frame_copy(value: Any, each: Any) -> Any:
    """A copy of a DataFrame / Series with every object or string cell redacted; None for anything else."""
    import pandas as pd

    if isinstance(value, pd.Series):
        if value.dtype == object or isinstance(value.dtype, pd.StringDtype):
            # built with the column's own dtype, not Series.map: pandas 3 infers map's result dtype, so an
            # all-missing string column came back as null[pyarrow] (which refuses any string: the report's
            # fillna raised NotImplementedError) and an object column as str
            cells = [v if v is None or v is pd.NA or isinstance(v, float) else each(v) for v in value]
            return pd.Series(cells, index=value.index, name=value.name, dtype=value.dtype)
        return value.copy()
    if isinstance(value, pd.DataFrame):
        out = value.copy()
        for column in out.columns:
            out[column] = _frame_copy(out[column], each)
        return out
    return None


def redact(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """``value`` with every secret masked (see the module docstring); ``secrets`` adds values to mask.

    Text gives text; a mapping, list or tuple gives a new one of the same shape (values under secret
    header or field names become ``***``); a DataFrame or Series gives a copy with its text cells
    redacted; anything else is returned as it is.
    """
    return _redactor(known_secrets(secrets)).value(value)


@functools.lru_cache(maxsize=64)
def _redactor(secrets: frozenset[str]) -> _Redactor:
    """The redactor of a set of secrets, built once (its alternation is compiled from every form of each key)."""
    return _Redactor(secrets)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's message, arguments, traceback and stack in place."""

    def filter(self, record: logging.LogRecord) -> bool:
        redactor = _redactor(known_secrets())
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave its formatting error to the handler
            return True
        record.msg, record.args = redactor.text(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = redactor.text(record.stack_info)
        return True


_FILTER = RedactingFilter()
_LOGGER_PREFIXES = ("judgelab", "LiteLLM", "litellm", "httpx", "httpcore", "openai", "aiohttp", "urllib3")


def install_log_redaction() -> None:
    """Put the redacting filter on judgelab's, litellm's and the HTTP clients' loggers and their handlers.

    A filter on a logger sees only the records created by that logger, so it goes on every logger of
    these families that exists now; judgelab calls this again at the start of each run (it is cheap and
    idempotent) to cover loggers created since.
    """
    names = [n for n in list(logging.root.manager.loggerDict) if n.startswith(_LOGGER_PREFIXES)]
    for name in {*names, *_LOGGER_PREFIXES}:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
        for handler in logger.handlers:
            if _FILTER not in handler.filters:
                handler.addFilter(_FILTER)
