"""The log filter both servers install: secrets become [redacted], log lines keep their shape."""

from __future__ import annotations

import logging

import pytest
from uvicorn.logging import AccessFormatter

from service.logsafe import REDACTED, RedactSecrets, redact, uvicorn_log_config


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("GET /ws/realtime/?token=qct_abcdefgh1234", "qct_abcdefgh1234"),
        ("GET /api/x/?api_key=qck_zzzzzzzz9999&page=2", "qck_zzzzzzzz9999"),
        ("GET /v1/models?key=sk-tg-Abc_def-123456", "sk-tg-Abc_def-123456"),
        ('{"password": "hunter2hunter2"}', "hunter2hunter2"),
        ("Cookie: qc_session=s3cr3tSessionValue", "s3cr3tSessionValue"),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload", "eyJhbGciOiJIUzI1NiJ9.payload"),
        ("a bare token qct_0123456789abcdef in text", "qct_0123456789abcdef"),
    ],
)
def test_redact_removes_the_secret(line: str, secret: str) -> None:
    cleaned = redact(line)
    assert secret not in cleaned and REDACTED in cleaned


def test_redact_leaves_ordinary_text_alone() -> None:
    line = 'GET /api/portfolios/?page=2&page_size=50 HTTP/1.1" 200'
    assert redact(line) == line


def test_access_log_line_keeps_its_arguments_and_loses_the_token() -> None:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/ws/realtime/?token=qct_secretsecret", "1.1", 101), None,
    )  # fmt: skip
    assert RedactSecrets().filter(record)
    text = AccessFormatter("%(message)s", use_colors=False).format(record)
    assert text == f'127.0.0.1:5000 - "GET /ws/realtime/?token={REDACTED} HTTP/1.1" 101'


def test_traceback_text_is_redacted() -> None:
    try:
        raise ValueError("bad credential qct_leakedleaked")
    except ValueError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", None, sys.exc_info())
    RedactSecrets().filter(record)
    assert "qct_leakedleaked" not in logging.Formatter().format(record)


def test_every_uvicorn_handler_and_the_root_carry_the_filter() -> None:
    config = uvicorn_log_config()
    assert all(h["filters"] == ["redact"] for h in config["handlers"].values())
    assert config["root"]["handlers"] == ["default"]
