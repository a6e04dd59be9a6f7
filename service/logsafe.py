"""Secrets never reach a log line: a logging filter on every handler of both servers.

A browser cannot send an ``Authorization`` header with a WebSocket handshake, so the
finance API accepts ``?token=`` there, and uvicorn's access log prints the whole
request line. The filter rewrites each record's message once it is formatted: the
values of secret-named query parameters and fields, and anything shaped like one of
our credentials, become ``[redacted]``. It has no dependency beyond the standard
library, so the Responses server (``textgen``) uses it too.
"""

from __future__ import annotations

import logging
import re
from typing import Any

__all__ = ["REDACTED", "RedactSecrets", "redact", "uvicorn_log_config"]

REDACTED = "[redacted]"

#: Names whose value is a secret, in a query string, a form, a JSON body or ``name=value`` text.
_SECRET_NAMES = (
    "token|access_token|refresh_token|api_key|apikey|key|password|passwd|secret|"
    "session|sessionid|session_id|qc_session|csrftoken|csrf_token|x-csrftoken|authorization"
)
_NAMED = re.compile(
    rf"""(?ix)
    (?P<name>\b(?:{_SECRET_NAMES})\b)
    (?P<sep>\s*(?:=|:)\s*"?|"\s*:\s*")
    (?P<value>[^\s&"',;]+)
    """
)
#: Credentials by their shape: finance tokens and keys, Responses keys, bearer values.
_SHAPED = re.compile(r"\b(?:qct_|qck_|sk-tg-)[A-Za-z0-9_\-]{6,}|(?i:\bBearer\s+)[A-Za-z0-9._~+/\-]{8,}=*")


def redact(text: str) -> str:
    """``text`` with every secret value replaced by :data:`REDACTED`.

    >>> redact('"WebSocket /ws/realtime?token=qct_G6j6FvHt3" [accepted]')
    '"WebSocket /ws/realtime?token=[redacted]" [accepted]'
    >>> redact("login failed for bob, password=hunter2")
    'login failed for bob, password=[redacted]'
    """
    text = _SHAPED.sub(REDACTED, text)  # first: "Authorization: Bearer x" is two words
    return _NAMED.sub(lambda m: f"{m['name']}{m['sep']}{REDACTED}", text)


def _redact_arg(value: object) -> object:
    """A string argument redacted; another object only when its text holds a secret."""
    if isinstance(value, int | float) or value is None:
        return value
    text = value if isinstance(value, str) else str(value)
    cleaned = redact(text)
    return cleaned if isinstance(value, str) or cleaned != text else value


class RedactSecrets(logging.Filter):
    """Redacts the record's message template, its string arguments and its traceback.

    The arguments keep their places: uvicorn's access formatter unpacks them.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redact_arg(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: _redact_arg(v) for k, v in record.args.items()}
        if record.exc_info and record.exc_text is None and record.exc_info[0] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True


def uvicorn_log_config() -> dict[str, Any]:
    """uvicorn's default logging configuration with :class:`RedactSecrets` on every handler.

    The application's own loggers propagate to the root logger, which gets the same
    handler at ``WARNING`` (what Python's last-resort handler would print, redacted).
    """
    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = {
        **LOGGING_CONFIG,
        "filters": {"redact": {"()": RedactSecrets}},
        "handlers": {
            name: {**handler, "filters": ["redact"]}
            for name, handler in LOGGING_CONFIG["handlers"].items()
        },
        "root": {"handlers": ["default"], "level": "WARNING"},
    }
    return config
