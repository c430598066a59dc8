"""One redaction for everything judgelab writes or prints, so an API key never reaches a file, a log or a message.

:func:`redact` returns a copy of a text, or of a mapping / list / DataFrame (recursively), with every
secret replaced by ``***``:

* user-info in URLs: ``https://user:KEY@host/v1`` -> ``https://***@host/v1``;
* secret query parameters: ``?api-key=KEY``, ``&key=``, ``token=``, ``sig=`` ... -> ``=***``;
* secret headers, written out (``Authorization: Bearer KEY``, ``'api-key': 'KEY'``, ``x-api-key=KEY``), the
  value of a secret-named field of a mapping (``{"api_key": KEY}``), EVERY value of a header mapping whatever
  the header's name (``{"extra_headers": {"X-Auth-Token": KEY}}``, also ``headers`` and ``default_headers``),
  and ``Bearer KEY`` / ``Basic <base64>`` anywhere;
* by value, wherever it appears inside any text (an answer that echoes it, an error body, a log line): every
  credential judgelab was given (:func:`register_credentials`: ``api_key``, the user-info and secret query
  parameters of an ``api_base``, every header value and secret-named field of ``extra_params``; the runner, the
  batch runner, the router and the CLI register what they receive) and every value of a secret-looking
  environment variable (``OPENAI_API_KEY``, ``HF_TOKEN``, ``*_SECRET`` ...), also URL-, JSON-, repr- and
  HTML-escaped.

A credential shorter than :data:`MIN_SECRET_LENGTH` characters is refused (:class:`ShortCredentialError`): it
could not be masked by value without masking ordinary text (a key "1" would mask every "1" of every answer).
A server that needs no key needs no ``api_key``: judgelab sends a placeholder of its own.

:class:`RedactingFilter` applies the same function to log records; :func:`install_log_redaction` puts it on
judgelab's, litellm's and the HTTP clients' loggers (every level, tracebacks included).
"""

from __future__ import annotations

import base64
import binascii
import functools
import html
import json
import logging
import os
import re
import sys
import threading
import warnings
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

from judgelab.errors import ConfigError

__all__ = ["HEADER_FIELDS", "MASK", "MIN_SECRET_LENGTH", "SECRET_FIELDS", "SECRET_QUERY_PARAMS", "RedactingFilter",
           "ShortCredentialError", "credentials_in", "install_log_redaction", "known_secrets", "redact",
           "register_credentials", "register_secret", "secrets_in"]

MASK = "***"
# a credential judgelab is given must be at least this long (shorter ones are refused: masking them by value would
# mask ordinary text); shorter values met elsewhere (the environment) are masked by the patterns only
MIN_SECRET_LENGTH = 8

# query parameters that carry credentials (Azure-style ``api-key``, Google ``key``, SAS ``sig``, OAuth ``token`` ...)
SECRET_QUERY_PARAMS: frozenset[str] = frozenset({
    "key", "api-key", "api_key", "apikey", "token", "access_token", "auth_token", "id_token", "refresh_token",
    "sig", "signature", "secret", "client_secret", "password", "code", "subscription-key",
})
# header names and mapping keys whose value is a credential (compared lower-case, with "_" read as "-")
SECRET_FIELDS: frozenset[str] = frozenset({
    "authorization", "proxy-authorization", "api-key", "apikey", "x-api-key", "x-goog-api-key",
    "ocp-apim-subscription-key", "access-token", "client-secret", "password", "aws-secret-access-key",
    "aws-session-token", "cookie", "set-cookie", "api-secret", "auth-token", "x-auth-token", "x-api-token",
    "azure-ad-token", "private-key", "secret-key", "x-access-token",
})  # (not a bare "token": logprob entries are {"token": ..., "logprob": ...})
# mappings of HTTP headers (litellm's ``extra_headers`` / ``headers``, the openai client's ``default_headers``):
# every value in them is a credential, whatever the header is called
HEADER_FIELDS: frozenset[str] = frozenset({"extra-headers", "headers", "default-headers"})

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


def _is_header_mapping(name: Any) -> bool:
    return isinstance(name, str) and name.strip().lower().replace("_", "-") in HEADER_FIELDS


_SCHEMES = ("bearer ", "basic ", "token ", "apikey ", "key ")


def _header_credentials(where: str, value: Any) -> list[tuple[str, str]]:
    """A header value as credentials: the whole value, and without its scheme ("Bearer KEY" -> KEY); for Basic,
    also the password inside the base64."""
    text = value if isinstance(value, str) else str(value)
    found = [(where, text)]
    scheme = next((s for s in _SCHEMES if text.lower().startswith(s)), None)
    if scheme:
        token = text[len(scheme):].strip()
        found = [(where, token)] + ([(where + " (whole)", text)] if len(token) >= MIN_SECRET_LENGTH else [])
        if scheme == "basic ":
            try:
                password = base64.b64decode(token, validate=True).decode("utf-8").partition(":")[2]
            except (binascii.Error, UnicodeDecodeError, ValueError):
                password = ""
            if len(password) >= MIN_SECRET_LENGTH:
                found.append((where + " (password)", password))
    return found


def credentials_in(value: Any, where: str = "") -> list[tuple[str, str]]:
    """(where, credential) for every credential inside ``value``, searched recursively: a URL's user-info (its
    password, or its user name when there is no password) and secret query parameters; a mapping's values
    under secret field names (``api_key``, ``Authorization`` ...) and EVERY value of a header mapping
    (``extra_headers``, ``headers``, ``default_headers``), whatever the header's name. Any length."""
    found: list[tuple[str, str]] = []
    if isinstance(value, str):
        if "://" in value:
            try:
                parts = urlsplit(value)
                username, password = parts.username, parts.password
            except ValueError:
                return found
            # user-info as written and decoded (the client sends it decoded); the decoded one is checked first
            if password:
                found += [(f"{where} (user-info password)", p) for p in dict.fromkeys((unquote(password), password))]
                if username and len(unquote(username)) >= MIN_SECRET_LENGTH:  # a name beside a password: masked
                    found += [(f"{where} (user-info name)", u) for u in dict.fromkeys((unquote(username), username))]
            elif username:
                found += [(f"{where} (user-info)", u) for u in dict.fromkeys((unquote(username), username))]
            found += [(f"{where} (query parameter {k})", v) for k, v in parse_qsl(parts.query)
                      if k.lower() in SECRET_QUERY_PARAMS and v]
    elif isinstance(value, Mapping):
        for k, v in value.items():
            inner = f"{where}[{k!r}]"
            if _is_header_mapping(k) and isinstance(v, Mapping):
                for name, header in v.items():
                    if header is not None and header != "":
                        found += _header_credentials(f"{inner}[{name!r}]", header)
            elif _field_is_secret(k) and isinstance(v, str) and v:
                found += _header_credentials(inner, v)
            else:
                found += credentials_in(v, inner)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            found += credentials_in(v, f"{where}[{i}]")
    return found


def secrets_in(value: Any) -> set[str]:
    """The credentials inside a URL or a mapping (see :func:`credentials_in`) long enough to be masked by value."""
    return {s for _, s in credentials_in(value) if len(s) >= MIN_SECRET_LENGTH}


class ShortCredentialError(ConfigError):
    """A credential too short to be masked by value (see :data:`MIN_SECRET_LENGTH`)."""


def register_credentials(api_key: Any = None, api_base: Any = None, params: Any = None) -> None:
    """Check and remember every credential a run was given: ``api_key``, those inside ``api_base`` and inside the
    litellm parameters ``params`` (``extra_params``), so that every later :func:`redact` masks them.

    Raises :class:`ShortCredentialError` (one sentence naming where it was given) for a credential shorter than
    :data:`MIN_SECRET_LENGTH` characters.
    """
    found = [("api_key", api_key)] if isinstance(api_key, str) and api_key else []
    found += credentials_in(api_base, "api_base") + credentials_in(params, "extra_params")
    for where, value in found:
        if len(value) < MIN_SECRET_LENGTH:
            raise ShortCredentialError(
                f"the credential given in {where} is {len(value)} character(s) long; judgelab masks every credential "
                f"it is given wherever it could appear (tables, cache, reports, logs, errors), which a value shorter "
                f"than {MIN_SECRET_LENGTH} characters cannot be without masking ordinary text: give the real key "
                "(a server that needs no key needs no api_key at all)")
    register_secret(*(value for _, value in found))


def _fragments(secret: str) -> set[str]:
    """What is left of ``secret`` when something masked its start by shape before judgelab saw the text (litellm
    masks "Bearer <word characters>", stopping at the first other character): every suffix starting after a
    non-alphanumeric character, long enough to be masked by value. (A key's head is often shared by every key of
    its provider, "sk-ant-api03", so prefixes are not masked.)"""
    return {secret[i + 1:] for i, c in enumerate(secret)
            if not c.isalnum() and len(secret) - i - 1 >= MIN_SECRET_LENGTH}


class _Redactor:
    """The patterns plus one compiled alternation of the secret values known at construction."""

    def __init__(self, secrets: frozenset[str]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            for s in {secret, *_fragments(secret)}:  # the escaped forms a key takes in a URL, a JSON text, a Python
                # repr and an HTML page, and JSON inside JSON (an answer's JSON text inside a logged response body)
                escaped = {s, json.dumps(s)[1:-1], json.dumps(s, ensure_ascii=False)[1:-1], repr(s)[1:-1]}
                escaped |= {json.dumps(e)[1:-1] for e in escaped} | {repr(e)[1:-1] for e in escaped}
                forms |= escaped | {quote(s, safe=""), quote_plus(s, safe=""), html.escape(s), html.escape(s, quote=False)}
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
                elif isinstance(v, Mapping) and _is_header_mapping(k):  # every header value, whatever its name
                    out[k] = {name: MASK if h is not None and h != "" else h for name, h in v.items()}
                else:
                    out[k] = self.value(v)
            return out
        if isinstance(value, list | tuple | set | frozenset):
            return type(value)(self.value(v) for v in value)
        frame = _frame_copy(value, self.value)
        return value if frame is None else frame


def _holds_text(dtype: Any) -> bool:
    """Object, string and category columns, and Arrow columns of any text kind (large_string, string_view)."""
    import pandas as pd

    if pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype | pd.CategoricalDtype):
        return True
    return isinstance(dtype, pd.ArrowDtype) and not (
        pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
        or pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype))


def _frame_copy(value: Any, each: Any) -> Any:
    """A copy of a DataFrame / Series with every object, string or category cell redacted; None for anything else."""
    import pandas as pd

    if isinstance(value, pd.Series):
        if not _holds_text(value.dtype):
            return value.copy()
        # built with the column's own dtype, not Series.map: pandas 3 infers map's result dtype, so an
        # all-missing string column came back as null[pyarrow] (which refuses any string: the report's
        # fillna raised NotImplementedError) and an object column as str. Categories are text too:
        # redacted, two may merge ("***"), so they are rebuilt.
        cells = [v if v is None or v is pd.NA or isinstance(v, float) else each(v) for v in value]
        dtype = "category" if isinstance(value.dtype, pd.CategoricalDtype) else value.dtype
        return pd.Series(cells, index=value.index, name=value.name, dtype=dtype)
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


def _no_unmasked_prints() -> None:
    """Switch off litellm's deprecated ``set_verbose``: it ``print``s every request, keys and headers included,
    straight to stdout, where no logging filter can mask it. Its debug logs (``litellm._turn_on_debug()``,
    ``LITELLM_LOG=DEBUG``) go through logging and stay available, masked."""
    litellm = sys.modules.get("litellm")
    modules = [m for m in (litellm, sys.modules.get("litellm._logging")) if m is not None]
    if any(getattr(m, "set_verbose", False) is True for m in modules):
        for m in modules:
            m.set_verbose = False
        warnings.warn("litellm.set_verbose prints every request, keys included, to stdout where judgelab cannot mask "
                      "them, so judgelab turned it off; use litellm._turn_on_debug() or LITELLM_LOG=DEBUG for "
                      "litellm's debug logs (judgelab masks those)", stacklevel=3)


def install_log_redaction() -> None:
    """Put the redacting filter on judgelab's, litellm's and the HTTP clients' loggers and their handlers.

    A filter on a logger sees only the records created by that logger, so it goes on every logger of
    these families that exists now; judgelab calls this again at the start of each run (it is cheap and
    idempotent) to cover loggers created since. litellm's ``set_verbose`` (plain prints) is switched off.
    """
    _no_unmasked_prints()
    names = [n for n in list(logging.root.manager.loggerDict) if n.startswith(_LOGGER_PREFIXES)]
    for name in {*names, *_LOGGER_PREFIXES}:
        logger = logging.getLogger(name)
        # first in line: a filter that masks by shape (litellm's own) would otherwise cut a key before this one
        # sees it whole; filters run in the order of the list
        for owner in (logger, *logger.handlers):
            if not owner.filters or owner.filters[0] is not _FILTER:
                if _FILTER in owner.filters:
                    owner.filters.remove(_FILTER)
                owner.filters.insert(0, _FILTER)
