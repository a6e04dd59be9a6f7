"""``python -m service import-transactions`` keeps stderr for what matters: no line per OFX element."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from service.cli import main
from tests.service.conftest import Api
from tests.service.test_imports_api import ACCOUNT, SECLIST, _portfolio, ofx_v2, priced

__all__ = ["priced"]  # the module-scoped fixture of the import tests, reused


def test_import_transactions_logs_no_ofxtools_info(
    priced: Api,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, headers = priced.user("quiet")
    pid = _portfolio(priced, headers)
    monkeypatch.setenv("QC_DATABASE_URL", priced.settings.database)
    monkeypatch.setenv("QC_DATA_DIR", str(tmp_path))
    path = tmp_path / "statement.qfx"
    path.write_bytes(ofx_v2(ACCOUNT, seclist=SECLIST))
    caplog.set_level(logging.INFO)
    try:
        assert main(["import-transactions", str(pid), str(path), "--dry-run"]) == 0
    finally:
        logging.getLogger("ofxtools").setLevel(logging.NOTSET)
    assert json.loads(capsys.readouterr().out)["added"] == 9
    noisy = [r for r in caplog.records if r.name.startswith("ofxtools") and r.levelno < logging.WARNING]
    assert noisy == []
