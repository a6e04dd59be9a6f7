"""``python -m quantcore``: metrics table, sweep file, one-line errors with exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from quantcore.__main__ import build_parser, main, parse_grid_value, parse_value
from quantcore.backtest import run_strategy, sweep


@pytest.fixture(scope="module")
def goog_csv(goog: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("prices") / "goog.csv"
    goog.to_csv(path)
    return path


def test_backtest_prints_the_metrics(
    goog_csv: Path, goog: pd.DataFrame, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["backtest", str(goog_csv), "--strategy", "moving_average", "--param", "short_window=10",
            "--param", "long_window=50", "--fees", "0.001", "--fill", "next_open"]  # fmt: skip
    assert main(argv) == 0
    lines = dict(line.split() for line in capsys.readouterr().out.strip().splitlines())
    res = run_strategy(
        goog, "moving_average", short_window=10, long_window=50, fees=0.001, fill="next_open"
    )
    assert int(lines["total_trades"]) == res.total_trades
    assert float(lines["sharpe_ratio"]) == pytest.approx(res.sharpe_ratio, abs=1e-6)
    assert float(lines["max_drawdown"]) == pytest.approx(res.max_drawdown, abs=1e-6)


def test_sweep_writes_parquet(goog_csv: Path, goog: pd.DataFrame, tmp_path: Path) -> None:
    out = tmp_path / "res.parquet"
    argv = ["sweep", str(goog_csv), "--strategy", "moving_average", "--grid", "short_window=5:25:5",
            "--grid", "long_window=20:60:10", "--grid", "ma_type=sma,ema", "--fees", "0.002",
            "--out", str(out), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    written = pd.read_parquet(out)
    grid = {
        "short_window": range(5, 25, 5),
        "long_window": range(20, 60, 10),
        "ma_type": ["sma", "ema"],
    }
    expected = sweep(goog, "moving_average", grid, fees=0.002)
    # one asset's OHLC file: the asset is named after the file, not its "Close" column
    assert written["asset"].astype(str).unique().tolist() == ["goog"]
    expected["asset"] = expected["asset"].cat.rename_categories(["goog"])
    pd.testing.assert_frame_equal(written, expected, check_dtype=False)


def test_sweep_of_a_close_panel_keeps_its_column_names(goog: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "panel.csv"
    panel = pd.DataFrame({"GOOG": goog["Close"], "HALF": goog["Close"] / 2}).iloc[:400]
    panel.to_csv(path)
    out = tmp_path / "res.csv"
    argv = ["sweep", str(path), "--strategy", "moving_average", "--grid", "short_window=5,10",
            "--param", "long_window=30", "--out", str(out), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    assert sorted(pd.read_csv(out)["asset"].unique()) == ["GOOG", "HALF"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            [
                "backtest",
                "{csv}",
                "--strategy",
                "moving_average",
                "--param",
                "short_window=60",
                "--param",
                "long_window=50",
            ],
            "short_window must be < long_window",
        ),
        (["backtest", "{csv}", "--strategy", "nope"], "strategy must be one of"),
        (
            ["backtest", "{csv}", "--strategy", "rsi", "--param", "window"],
            "--param must look like NAME=VALUE",
        ),
        (["backtest", "{csv}", "--strategy", "rsi", "--fees", "-1"], "fees"),
        (["backtest", "{missing}", "--strategy", "rsi"], "price file not found"),
        (["backtest", "{bad}", "--strategy", "rsi"], "cannot read bad.parquet"),
        (["sweep", "{csv}", "--strategy", "rsi", "--grid", "window=a:b"], "grid range must be"),
    ],
)
def test_errors_are_one_line_exit_2(
    argv: list[str],
    message: str,
    goog_csv: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    paths = {"csv": str(goog_csv), "missing": str(tmp_path / "x.csv"), "bad": str(bad)}
    assert main([a.format(**paths) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("quantcore: error: ") and message in err


def test_module_entry_point(goog_csv: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "quantcore", "backtest", str(goog_csv), "--strategy", "buy_hold"],
        capture_output=True, text=True, check=False, cwd=Path(__file__).parents[2],
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "total_return" in proc.stdout


def test_parsers() -> None:
    assert parse_value("10") == 10 and parse_value("0.5") == 0.5 and parse_value("ema") == "ema"
    assert parse_grid_value("5:8") == [5, 6, 7] and parse_grid_value("10:30:10") == [10, 20]
    assert parse_grid_value("sma,ema") == ["sma", "ema"]
    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(subparsers.choices) == {"backtest", "sweep", "report", "warm"}
    assert np.isfinite(parse_value("1e-3"))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["report", "{missing}"], "price file not found"),
        (["report", "{bad}"], "cannot read bad.parquet"),
        (["report", "{two}"], "choose one with --column"),
        (["report", "{csv}", "--benchmark", "{missing}"], "price file not found"),
        (["backtest", "{missing}", "--strategy", "rsi"], "price file not found"),
        (["sweep", "{csv}", "--strategy", "rsi", "--grid", "window=a:b"], "grid range must be"),
    ],
)
def test_error_paths_as_a_process(
    argv: list[str], message: str, goog_csv: Path, tmp_path: Path
) -> None:
    # ``python -m`` runs __main__.py as a second module beside quantcore.__main__: an
    # error class defined there and imported back would escape main() as a traceback
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    two = tmp_path / "two.csv"
    pd.DataFrame({"A": [1.0, 2.0], "B": [2.0, 1.0]}, index=pd.date_range("2024-01-01", periods=2)).to_csv(two)
    paths = {"csv": str(goog_csv), "missing": str(tmp_path / "missing.csv"), "bad": str(bad), "two": str(two)}
    proc = subprocess.run(
        [sys.executable, "-m", "quantcore", *(a.format(**paths) for a in argv)],
        capture_output=True, text=True, check=False, cwd=Path(__file__).parents[2],
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("quantcore: error: ")
    assert message in proc.stderr and proc.stdout == ""


def test_warm_compiles_a_group_and_reports_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warm", "--only", "returns", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("compiled and cached:") and "total" in out
