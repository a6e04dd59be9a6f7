"""Tear sheets: one self-contained HTML page with the metrics table and the figures.

:func:`tearsheet` renders the figures of :mod:`quantcore.plot` into the page
(base64 PNG or inline SVG, no external file, script or stylesheet), next to the
:func:`quantcore.metrics.summary` table, the worst drawdowns and, for dated
returns, the calendar-year returns. ``python -m quantcore report PRICES
--benchmark BENCH --out report.html`` does the same from price files
(:func:`report_from_files`).

>>> import numpy as np
>>> from quantcore.report import tearsheet
>>> r = np.random.default_rng(0).normal(0.0005, 0.01, 300)
>>> page = tearsheet(r, title="Demo")
>>> page.startswith("<!DOCTYPE html>"), page.count("<img ")
(True, 4)
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from quantcore._deprecation import warn_renamed

# The analytics modules (and their numba kernels) are imported by the functions that
# use them, so that ``python -m quantcore``, which registers ``add_cli_parser``, stays
# quick to start for its other subcommands.

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["add_cli_parser", "figure_html", "report_from_files", "tearsheet"]

#: Metrics shown as percentages in the table (the others are ratios or counts).
_PERCENT = frozenset(
    {
        "total_return",
        "annualized_return",
        "volatility",
        "max_drawdown",
        "value_at_risk",
        "expected_shortfall",
        "alpha",
        "tracking_error",
    }
)

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;
max-width:1100px;color:#1b1b1b;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;
border-bottom:1px solid #ddd;padding-bottom:.2rem}
.meta{color:#666;margin-top:0}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:.5rem 0}
th,td{padding:.25rem .8rem;border-bottom:1px solid #eee;text-align:right}
th:first-child,td:first-child{text-align:left}thead th{border-bottom:2px solid #bbb}
.neg{color:#b71c1c}figure{margin:1rem 0}img,svg{max-width:100%;height:auto}
.tables{display:flex;gap:2.5rem;flex-wrap:wrap;align-items:flex-start}
"""


def figure_html(fig: Figure, *, image_format: Literal["png", "svg"] = "png", dpi: int = 96) -> str:
    """One figure as an HTML fragment that needs no other file.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to render.
    image_format : {"png", "svg"}
        ``"png"``: an ``<img>`` with a base64 ``data:`` URI (compact for long
        series); ``"svg"``: the inline ``<svg>`` element (vector, searchable).
    dpi : int, default 96
        Resolution of the PNG.

    Returns
    -------
    str
        The ``<img>`` or ``<svg>`` element.

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.plot import equity_curve
    >>> figure_html(equity_curve(np.array([0.01, -0.02]))).startswith('<img src="data:image/png;base64,')
    True
    """
    if image_format not in ("png", "svg"):
        raise ValueError(f"image_format must be 'png' or 'svg', got {image_format!r}")
    buf = io.BytesIO()
    fig.savefig(buf, format=image_format, dpi=dpi, metadata={"Date": None})
    if image_format == "png":
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        return f'<img src="data:image/png;base64,{data}" alt="figure">'
    text = buf.getvalue().decode("utf-8")
    return text[text.index("<svg") :]


def _fmt(name: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "&ndash;"
    text = f"{value:.2%}" if name in _PERCENT else f"{value:.3f}"
    return f'<span class="neg">{text}</span>' if value < 0 else text


def _table(frame: pd.DataFrame, *, index_name: str, all_percent: bool = False) -> str:
    """An HTML table; cells formatted by their row's metric name, or all as percentages."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for name, row in frame.iterrows():
        key = str(name)
        kind = "total_return" if all_percent else key
        cells = "".join(f"<td>{_fmt(kind, v)}</td>" for v in row.tolist())
        rows.append(f"<tr><td>{html.escape(key)}</td>{cells}</tr>")
    return (
        f"<table><thead><tr><th>{html.escape(index_name)}</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _worst_drawdowns(r: pd.Series, top: int) -> pd.DataFrame:
    from quantcore import drawdown as _drawdown

    rec = np.sort(_drawdown.drawdown_periods(r.to_numpy()), order="depth")[:top]
    idx = r.index

    def when(i: int) -> str:
        if i < 0:
            return "open" if i == -1 else "start"
        v = idx[i]
        return v.strftime("%Y-%m-%d") if isinstance(v, pd.Timestamp) else str(v)

    return pd.DataFrame(
        {
            "peak": [when(int(i)) for i in rec["peak"]],
            "valley": [when(int(i)) for i in rec["valley"]],
            "recovery": [when(int(i)) for i in rec["recovery"]],
            "depth": rec["depth"],
            "periods": rec["duration"],
        },
        index=pd.RangeIndex(1, len(rec) + 1),
    )


def _drawdown_table(frame: pd.DataFrame) -> str:
    rows = "".join(
        f"<tr><td>{k}</td><td>{p}</td><td>{v}</td><td>{rc}</td>"
        f"<td>{_fmt('max_drawdown', d)}</td><td>{n}</td></tr>"
        for k, (p, v, rc, d, n) in zip(frame.index, frame.itertuples(index=False), strict=True)
    )
    return (
        "<table><thead><tr><th>#</th><th>peak</th><th>valley</th><th>recovery</th>"
        f"<th>depth</th><th>periods</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def tearsheet(
    returns: Any,
    benchmark: Any = None,
    *,
    title: str = "Tear sheet",
    periods_per_year: float = 252,
    risk_free: float = 0.0,
    level: float = 0.95,
    window: int = 126,
    top_drawdowns: int = 5,
    image_format: Literal["png", "svg"] = "png",
    rolling_window: int | None = None,
) -> str:
    """A quantstats-style tear sheet of one return series, as one HTML document.

    Parameters
    ----------
    returns : ndarray, Series or one-column DataFrame
        Simple returns per period (a DatetimeIndex adds dates and yearly returns).
    benchmark : same kinds, optional
        Benchmark returns; pandas inputs are aligned on their common dates.
        Adds the benchmark curve, its own column and the relative metrics
        (beta, alpha, correlation, tracking error, information ratio).
    title : str
        Page title (HTML-escaped).
    periods_per_year, risk_free, level
        As in :func:`quantcore.metrics.summary`.
    window : int, default 126
        Window of the rolling Sharpe/volatility figure; the figure is left out
        when the series is shorter than two windows.
    top_drawdowns : int, default 5
        Rows of the worst-drawdowns table.
    image_format : {"png", "svg"}
        How figures are embedded (see :func:`figure_html`).
    rolling_window : int, optional
        The old name of ``window``: still works, with a ``DeprecationWarning``.

    Returns
    -------
    str
        A complete HTML5 document (UTF-8), with no external resources.

    Notes
    -----
    The metrics are :func:`quantcore.metrics.summary` (formulas in
    :mod:`quantcore.metrics`); the year table compounds each calendar year,
    :math:`R_y = \\prod_{t \\in y}(1 + r_t) - 1`. Figures:
    :func:`quantcore.plot.equity_curve`, :func:`~quantcore.plot.underwater`,
    :func:`~quantcore.plot.return_distribution` and
    :func:`~quantcore.plot.rolling_sharpe_volatility`.

    Examples
    --------
    >>> import numpy as np
    >>> page = tearsheet(np.array([0.01, -0.02, 0.015, 0.003] * 20), image_format="svg")
    >>> page.count("<svg") >= 3, "sharpe_ratio" in page
    (True, True)
    """
    from quantcore import _figures as _fig
    from quantcore import metrics as _metrics
    from quantcore import plot as _plot
    from quantcore import returns as _returns

    if rolling_window is not None:
        warn_renamed("tearsheet(rolling_window=...)", "tearsheet(window=...)")
        window = rolling_window
    if not isinstance(top_drawdowns, int) or top_drawdowns < 0:
        raise ValueError(f"top_drawdowns must be an integer >= 0, got {top_drawdowns!r}")
    r, b = _fig.aligned(_fig.series(returns, "returns", "strategy"), benchmark)
    if r.count() < 2:
        raise ValueError("returns needs at least 2 non-NaN values")
    opts: dict[str, Any] = {
        "periods_per_year": periods_per_year,
        "risk_free": risk_free,
        "level": level,
    }
    table = _metrics.summary(r, b, **opts).rename(str(r.name)).to_frame()
    if b is not None:
        table[str(b.name)] = _metrics.summary(b, **opts)
    figures = [
        _plot.equity_curve(r, b),
        _plot.underwater(r),
        _plot.return_distribution(r, level=level),
    ]
    if r.count() >= 2 * window:
        figures.append(
            _plot.rolling_sharpe_volatility(
                r, window=window, periods_per_year=periods_per_year
            )
        )
    index = r.index
    dated = isinstance(index, pd.DatetimeIndex)
    span = (
        f"{index[0]:%Y-%m-%d} to {index[-1]:%Y-%m-%d}, " if dated else ""
    ) + f"{len(r)} periods, {periods_per_year:g} per year"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="meta">{html.escape(span)}</p>',
        '<h2>Metrics</h2><div class="tables">',
        _table(table, index_name="metric"),
    ]
    if isinstance(index, pd.DatetimeIndex):
        yearly = pd.DataFrame(
            {
                str(s.name): s.groupby(index.year).apply(_returns.total_return)
                for s in (r, b)
                if s is not None
            }
        )
        parts.append(_table(yearly, index_name="year", all_percent=True))
    parts.append("</div>")
    if top_drawdowns:
        parts += ["<h2>Worst drawdowns</h2>", _drawdown_table(_worst_drawdowns(r, top_drawdowns))]
    parts.append("<h2>Figures</h2>")
    for fig in figures:
        parts.append(f"<figure>{figure_html(fig, image_format=image_format)}</figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _close(frame: pd.DataFrame, column: str | None, what: str, flag: str) -> pd.Series:
    lower = {str(c).lower(): c for c in frame.columns}
    if column is not None:
        if column not in frame.columns:
            raise ValueError(
                f"{flag} {column!r} is not a column of the {what} file: {list(frame.columns)}"
            )
        return frame[column]
    if "close" in lower:
        return frame[lower["close"]]
    if frame.shape[1] != 1:
        raise ValueError(f"{what} file has {frame.shape[1]} price columns; choose one with {flag}")
    return frame.iloc[:, 0]


def report_from_files(
    prices: str | Path,
    out: str | Path,
    *,
    benchmark: str | Path | None = None,
    column: str | None = None,
    benchmark_column: str | None = None,
    **options: Any,
) -> Path:
    """Write the tear sheet of a price file (and a benchmark price file) to ``out``.

    Parameters
    ----------
    prices, benchmark : str or Path
        CSV (first column: dates) or Parquet price files, read as
        ``python -m quantcore backtest`` reads them; an OHLC file uses its close.
    out : str or Path
        The HTML file to write.
    column, benchmark_column : str, optional
        The price column of a file with several assets.
    **options
        Passed to :func:`tearsheet` (``title`` defaults to the file's name).

    Returns
    -------
    Path
        ``out``.
    """
    from quantcore import returns as _returns
    from quantcore._price_files import read_prices

    close = _close(read_prices(str(prices)), column, "prices", "--column")
    r = _returns.simple_returns(close).iloc[1:].rename(column or Path(prices).stem)
    b = None
    if benchmark is not None:
        bclose = _close(
            read_prices(str(benchmark)), benchmark_column, "benchmark", "--benchmark-column"
        )
        b = (
            _returns.simple_returns(bclose)
            .iloc[1:]
            .rename(benchmark_column or Path(benchmark).stem)
        )
    options.setdefault("title", f"Tear sheet: {Path(prices).stem}")
    page = tearsheet(r, b, **options)
    target = Path(out)
    target.write_text(page, encoding="utf-8")
    return target


def _cli(args: Any) -> int:
    path = report_from_files(
        args.prices,
        args.out,
        benchmark=args.benchmark,
        column=args.column,
        benchmark_column=args.benchmark_column,
        periods_per_year=args.periods_per_year,
        level=args.level,
        image_format=args.format,
        **({"title": args.title} if args.title else {}),
    )
    print(f"wrote {path}")
    return 0


def add_cli_parser(sub: Any) -> Callable[[Any], int]:
    """Add the ``report`` subcommand to ``python -m quantcore``'s subparsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of :func:`quantcore.__main__.build_parser`.

    Returns
    -------
    callable
        The handler (also set as the parser's ``handler`` default).
    """
    p = sub.add_parser("report", help="write an HTML tear sheet of a price file")
    p.add_argument("prices", help="price file: .csv (first column dates) or .parquet")
    p.add_argument("--benchmark", help="benchmark price file")
    p.add_argument("--out", default="report.html", help="HTML file to write (report.html)")
    p.add_argument("--column", help="price column of a several-asset file")
    p.add_argument("--benchmark-column", help="price column of a several-asset benchmark file")
    p.add_argument("--title", help="page title")
    p.add_argument("--periods-per-year", type=float, default=252.0)
    p.add_argument("--level", type=float, default=0.95, help="VaR/ES confidence level")
    p.add_argument("--format", choices=("png", "svg"), default="png", help="figure format")
    p.set_defaults(handler=_cli)
    return _cli
