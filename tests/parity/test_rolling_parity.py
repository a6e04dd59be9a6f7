"""Rolling metrics against empyrical-reloaded's ``roll_*`` on real returns (S&P 500, NASDAQ, GOOG).

empyrical returns only the full windows (our rows ``window - 1`` onward) and
skips NaNs inside a window, where ours gives NaN (the calendars of the three
series differ, and GOOG starts five years after the others); so ours must be
NaN exactly on the windows that hold a NaN and agree with empyrical on all
the others. Agreement: 1e-9 relative (absolute floor 1e-14).
"""

from __future__ import annotations

from typing import Any

import empyrical as ep
import numpy as np
import pandas as pd
import pytest

from quantcore import rolling

RTOL = 1e-9
ATOL = 1e-14
WINDOWS = (2, 21, 63, 252)


def _check(ours: pd.Series, ref: Any, window: int, *inputs: pd.Series) -> None:
    """``ours`` NaN exactly where a window of ``inputs`` holds a NaN, else empyrical's value."""
    a = ours.to_numpy()[window - 1 :]
    b = np.asarray(ref, dtype=np.float64)
    assert a.shape == b.shape
    holes = np.zeros(len(ours), dtype=bool)
    for x in inputs:
        holes |= x.isna().to_numpy()
    gap = np.convolve(holes, np.ones(window), mode="valid") > 0
    np.testing.assert_array_equal(np.isnan(a), gap)
    assert (~gap).sum() > 100
    np.testing.assert_allclose(a[~gap], b[~gap], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("window", WINDOWS)
def test_volatility_and_sharpe_on_each_column(returns_panel: pd.DataFrame, window: int) -> None:
    vol = rolling.rolling_volatility(returns_panel, window)
    sharpe = rolling.rolling_sharpe(returns_panel, window, risk_free=0.0001)
    for name in returns_panel.columns:
        r = returns_panel[name]
        _check(vol[name], ep.roll_annual_volatility(r, window), window, r)
        _check(sharpe[name], ep.roll_sharpe_ratio(r, window, risk_free=0.0001), window, r)
        # the column alone (a Series) gives the same as within the panel
        alone = rolling.rolling_volatility(r, window)
        assert np.array_equal(alone.to_numpy(), vol[name].to_numpy(), equal_nan=True)
    assert vol.iloc[: window - 1].isna().all().all()


@pytest.mark.parametrize("window", WINDOWS)
def test_beta_of_sp500_on_nasdaq(sp500: pd.DataFrame, nasdaq: pd.DataFrame, window: int) -> None:
    r = sp500["Adj Close"].pct_change(fill_method=None).iloc[1:]
    b = nasdaq["Adj Close"].pct_change(fill_method=None).iloc[1:]
    r, b = r.align(b, join="inner")
    ours = rolling.rolling_beta(r, b, window)
    _check(ours, ep.roll_beta(r, b, window), window, r, b)
    ours_vol = rolling.rolling_volatility(r, window, periods_per_year=52)
    _check(ours_vol, ep.roll_annual_volatility(r, window, annualization=52), window, r)


@pytest.mark.parametrize("window", (21, 252))
def test_beta_of_the_panel_on_sp500(returns_panel: pd.DataFrame, window: int) -> None:
    bench = returns_panel["SP500"]
    beta = rolling.rolling_beta(returns_panel, bench, window)
    for name in returns_panel.columns:
        r = returns_panel[name]
        _check(beta[name], ep.roll_beta(r, bench, window), window, r, bench)


@pytest.mark.parametrize("window", (21, 63))
def test_c_and_f_order_bit_identical_on_real_data(returns_panel: pd.DataFrame, window: int) -> None:
    x = returns_panel.to_numpy()
    wide = np.tile(x, (1, 40))  # 120 columns: several column blocks, the parallel path
    c, f = np.ascontiguousarray(wide), np.asfortranarray(wide)
    b = x[:, :1]
    pairs = [
        (rolling.rolling_volatility(c, window), rolling.rolling_volatility(f, window)),
        (rolling.rolling_sharpe(c, window), rolling.rolling_sharpe(f, window)),
        (rolling.rolling_beta(c, b, window), rolling.rolling_beta(f, b, window)),
    ]
    for in_c, in_f in pairs:
        assert np.isfinite(in_c).any()
        assert np.array_equal(in_c, in_f, equal_nan=True)
