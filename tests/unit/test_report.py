"""quantcore.report: a self-contained tear sheet, and the ``python -m quantcore report`` command."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser
from pathlib import Path

import empyrical
import numpy as np
import pandas as pd
import pytest

from quantcore.__main__ import main
from quantcore.report import tearsheet


class _Collect(HTMLParser):
    """Tags, attributes, and the text of every table cell of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.cells: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("td", "th"):
            self._in_cell = True
            self.cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.cells[-1] += data


def _parse(page: str) -> _Collect:
    p = _Collect()
    p.feed(page)
    p.close()
    return p


def _row(cells: list[str], name: str, width: int) -> list[str]:
    i = cells.index(name)
    return cells[i + 1 : i + 1 + width]


@pytest.fixture(scope="module")
def spx(sp500: pd.DataFrame) -> pd.Series:
    return sp500["Adj Close"].pct_change(fill_method=None).iloc[1:].rename("SP500")


@pytest.fixture(scope="module")
def ndx(nasdaq: pd.DataFrame) -> pd.Series:
    return nasdaq["Adj Close"].pct_change(fill_method=None).iloc[1:].rename("NASDAQ")


def test_tearsheet_is_self_contained_with_metrics_and_figures(
    spx: pd.Series, ndx: pd.Series
) -> None:
    page = tearsheet(spx, ndx, title="S&P <500>")
    doc = _parse(page)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<title>S&amp;P &lt;500&gt;</title>" in page
    # nothing external: no scripts, stylesheets links, or non-data image sources
    assert not [t for t, _ in doc.tags if t in ("script", "link", "iframe")]
    imgs = [a["src"] for t, a in doc.tags if t == "img"]
    assert len(imgs) == 4
    for src in imgs:
        assert src is not None and src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(b"\x89PNG")
    # metrics table: strategy and benchmark columns, values equal empyrical's
    assert _row(doc.cells, "metric", 2) == ["SP500", "NASDAQ"]
    sharpe = _row(doc.cells, "sharpe_ratio", 2)
    assert sharpe == [f"{empyrical.sharpe_ratio(spx):.3f}", f"{empyrical.sharpe_ratio(ndx):.3f}"]
    assert _row(doc.cells, "max_drawdown", 1) == [f"{empyrical.max_drawdown(spx):.2%}"]
    assert _row(doc.cells, "beta", 2) == [f"{empyrical.beta(spx, ndx):.3f}", "\u2013"]
    # calendar years compound the daily returns
    years = [c for c in doc.cells if re.fullmatch(r"(19|20)\d\d", c)]
    assert years == [str(y) for y in range(1999, 2019)]
    y2008 = (1 + spx.loc["2008"]).prod() - 1
    assert _row(doc.cells, "2008", 1) == [f"{y2008:.2%}"]
    assert "1999-01-05 to 2018-12-31, 5030 periods" in page


def test_tearsheet_worst_drawdowns_table(spx: pd.Series) -> None:
    doc = _parse(tearsheet(spx, top_drawdowns=3))
    i = doc.cells.index("#")
    header = doc.cells[i : i + 6]
    assert header == ["#", "peak", "valley", "recovery", "depth", "periods"]
    first = doc.cells[i + 6 : i + 12]
    wealth = (1 + spx).cumprod()
    valley = (wealth / wealth.cummax() - 1).idxmin()
    assert first[0] == "1" and first[2] == f"{valley:%Y-%m-%d}"
    assert first[4] == f"{empyrical.max_drawdown(spx):.2%}"
    assert doc.cells[i + 18] == "3" and "4" not in doc.cells[i + 18 : i + 25 : 6]


def test_tearsheet_svg_and_short_undated_series() -> None:
    r = np.random.default_rng(7).normal(0.0, 0.01, 100)
    page = tearsheet(r, image_format="svg", window=126)
    assert page.count("<svg") == 3  # rolling figure left out: fewer than two windows
    assert tearsheet(r, image_format="svg", window=20).count("<svg") == 4
    with pytest.warns(DeprecationWarning, match="window"):  # the old keyword still works
        assert tearsheet(r, image_format="svg", rolling_window=20).count("<svg") == 4
    assert "<img" not in page and "year" not in _parse(page).cells
    with pytest.raises(ValueError, match="image_format"):
        tearsheet(r, image_format="jpg")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 2"):
        tearsheet(np.array([0.01, np.nan]))
    with pytest.raises(ValueError, match="top_drawdowns"):
        tearsheet(r, top_drawdowns=-1)


def test_cli_report_writes_the_page(
    sp500: pd.DataFrame, nasdaq: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sp500.iloc[-600:].to_csv(tmp_path / "spx.csv")
    nasdaq.iloc[-600:].to_parquet(tmp_path / "ndx.parquet")
    out = tmp_path / "report.html"
    code = main(["report", str(tmp_path / "spx.csv"), "--benchmark", str(tmp_path / "ndx.parquet"),
                 "--out", str(out), "--format", "svg"])  # fmt: skip
    assert code == 0 and f"wrote {out}" in capsys.readouterr().out
    doc = _parse(out.read_text(encoding="utf-8"))
    assert _row(doc.cells, "metric", 2) == ["spx", "ndx"]
    r = sp500["Close"].iloc[-600:].pct_change(fill_method=None).iloc[1:]
    assert _row(doc.cells, "total_return", 1) == [f"{(1 + r).prod() - 1:.2%}"]
    assert "<title>Tear sheet: spx</title>" in out.read_text(encoding="utf-8")


def test_cli_report_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = pd.DataFrame(
        {"A": [1.0, 2.0, 3.0], "B": [3.0, 2.0, 1.0]}, index=pd.date_range("2024-01-01", periods=3)
    )
    frame.to_csv(tmp_path / "two.csv")
    assert main(["report", str(tmp_path / "two.csv"), "--out", str(tmp_path / "x.html")]) == 2
    assert "choose one with --column" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "two.csv"), "--column", "C"]) == 2
    assert "--column 'C' is not a column" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.csv")]) == 2
    assert "price file not found" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def test_tearsheet_benchmark_with_the_same_name(sp500: pd.DataFrame, nasdaq: pd.DataFrame) -> None:
    # arch.data names both close columns "Adj Close": the benchmark must not take the
    # strategy's column in the metrics and year tables, nor its legend entry
    r = sp500["Adj Close"].pct_change(fill_method=None).iloc[1:]
    b = nasdaq["Adj Close"].pct_change(fill_method=None).iloc[1:]
    assert r.name == b.name == "Adj Close"
    doc = _parse(tearsheet(r, b, image_format="svg"))
    assert _row(doc.cells, "metric", 2) == ["Adj Close", "Adj Close (benchmark)"]
    assert _row(doc.cells, "total_return", 2) == [
        f"{empyrical.cum_returns_final(r):.2%}",
        f"{empyrical.cum_returns_final(b):.2%}",
    ]
    assert _row(doc.cells, "beta", 2) == [f"{empyrical.beta(r, b):.3f}", "\u2013"]
    assert _row(doc.cells, "year", 2) == ["Adj Close", "Adj Close (benchmark)"]
    y2008 = [(1 + s.loc["2008"]).prod() - 1 for s in (r, b)]
    assert _row(doc.cells, "2008", 2) == [f"{v:.2%}" for v in y2008]
    # the drawdown table is the strategy's
    i = doc.cells.index("#")
    assert doc.cells[i + 10] == f"{empyrical.max_drawdown(r):.2%}"


def test_plot_benchmark_with_the_same_name() -> None:
    from quantcore.plot import equity_curve

    idx = pd.date_range("2024-01-01", periods=3)
    r = pd.Series([0.1, -0.1, 0.0], index=idx, name="close")
    b = pd.Series([0.0, 0.2, 0.0], index=idx, name="close")
    ax = equity_curve(r, b).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["close", "close (benchmark)"]
    assert ax.lines[0].get_ydata().tolist() == pytest.approx([1.1, 0.99, 0.99])
    assert ax.lines[1].get_ydata().tolist() == pytest.approx([1.0, 1.2, 1.2])
    # unnamed arrays take the defaults, which differ already
    ax = equity_curve(np.array([0.1, 0.0]), np.array([0.0, 0.1])).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["strategy", "benchmark"]
