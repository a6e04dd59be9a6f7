"""Rolling volatility, Sharpe ratio and beta: against a direct per-window computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from quantcore import metrics, risk
from quantcore._parallel import PARALLEL_MIN_CELLS
from quantcore.rolling import rolling_beta, rolling_sharpe, rolling_volatility


def _windows(x: np.ndarray, window: int) -> np.ndarray:
    """(n - window + 1, k, window) views of every full window of each column."""
    return sliding_window_view(x, window, axis=0)


def _direct_vol(x: np.ndarray, window: int, ddof: int = 1, ppy: float = 252) -> np.ndarray:
    out = np.full(x.shape, np.nan)
    out[window - 1 :] = np.std(_windows(x, window), axis=-1, ddof=ddof) * np.sqrt(ppy)
    return out


def _direct_sharpe(x: np.ndarray, window: int, rf: float = 0.0) -> np.ndarray:
    win = _windows(x - rf, window)
    out = np.full(x.shape, np.nan)
    out[window - 1 :] = win.mean(axis=-1) / win.std(axis=-1, ddof=1) * np.sqrt(252)
    return out


def _direct_beta(x: np.ndarray, b: np.ndarray, window: int) -> np.ndarray:
    wx, wb = _windows(x, window), _windows(b, window)
    dx = wx - wx.mean(axis=-1, keepdims=True)
    db = wb - wb.mean(axis=-1, keepdims=True)
    out = np.full(x.shape, np.nan)
    out[window - 1 :] = (dx * db).sum(axis=-1) / (db * db).sum(axis=-1)
    return out


def _assert_close(
    got: np.ndarray, want: np.ndarray, x: np.ndarray, window: int, atol: float = 0.0
) -> None:
    """Within 1e-12 relative, widened only by the conditioning of each window's variance:
    any float64 method (numpy's two-pass included) loses about ``eps * max(x**2) / var``
    of the variance of a window whose values are nearly equal."""
    win = _windows(x, window)
    cond = np.full(x.shape, np.nan)
    cond[window - 1 :] = (np.abs(win).max(axis=-1) ** 2) / win.var(axis=-1)
    tol = atol + np.abs(want) * (1e-12 + 4 * np.finfo(float).eps * cond)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = np.isnan(want) | (np.abs(got - want) <= tol)
    assert ok.all(), np.abs(got - want)[~ok]


@pytest.fixture
def long_panel(rng: np.random.Generator) -> np.ndarray:
    """20,000 rows x 3 columns with volatility regimes a thousandfold apart, so that
    drift of running sums from a high-volatility stretch would show in a calm one."""
    n = 20_000
    scale = np.where((np.arange(n) // 2_000) % 2 == 0, 0.05, 0.00005)[:, None]
    return rng.standard_t(4, size=(n, 3)) * scale + 0.0004


@pytest.mark.parametrize("window", [2, 5, 63, 252])
def test_volatility_matches_direct_computation_on_long_series(
    long_panel: np.ndarray, window: int
) -> None:
    got = rolling_volatility(long_panel, window)
    _assert_close(got, _direct_vol(long_panel, window), long_panel, window)
    got0 = rolling_volatility(long_panel, window, ddof=0, periods_per_year=12)
    _assert_close(got0, _direct_vol(long_panel, window, 0, 12), long_panel, window)


@pytest.mark.parametrize("window", [2, 63, 252])
def test_sharpe_matches_direct_computation_on_long_series(
    long_panel: np.ndarray, window: int
) -> None:
    got = rolling_sharpe(long_panel, window, risk_free=0.0001)
    want = _direct_sharpe(long_panel, window, 0.0001)
    _assert_close(got, want, long_panel - 0.0001, window, atol=1e-12)  # a mean near 0


@pytest.mark.parametrize("window", [3, 63, 252])
def test_beta_matches_direct_computation_on_long_series(
    long_panel: np.ndarray, window: int
) -> None:
    b = long_panel[:, :1] * 0.7 + 0.3 * long_panel[:, 1:2]
    got = rolling_beta(long_panel, b, window)
    want = _direct_beta(long_panel, np.repeat(b, 3, axis=1), window)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # one benchmark per column
    per_column = rolling_beta(long_panel, long_panel[:, ::-1], window)
    want2 = _direct_beta(long_panel, long_panel[:, ::-1], window)
    np.testing.assert_allclose(per_column, want2, rtol=1e-12, atol=1e-12)


def test_first_window_minus_one_rows_are_nan_and_window_longer_than_data() -> None:
    r = np.array([0.01, -0.02, 0.03, 0.0, 0.01])
    v = rolling_volatility(r, 3)
    assert np.isnan(v[:2]).all() and np.isfinite(v[2:]).all()
    assert np.isnan(rolling_volatility(r, 6)).all()
    assert np.isnan(rolling_sharpe(r, 6)).all()
    assert np.isnan(rolling_beta(r, r[::-1], 6)).all()
    assert rolling_volatility(r, 5)[-1] == pytest.approx(risk.volatility(r), rel=1e-14)
    assert rolling_sharpe(r, 5)[-1] == pytest.approx(metrics.sharpe_ratio(r), rel=1e-14)
    assert rolling_beta(r, r[::-1], 5)[-1] == pytest.approx(risk.beta(r, r[::-1]), rel=1e-14)


@pytest.mark.parametrize("window", [1, 0, -3, 2.5, True, "5"])
def test_bad_window_is_a_clear_value_error(window: object) -> None:
    r = np.zeros(10)
    with pytest.raises(ValueError, match="window"):
        rolling_volatility(r, window)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="window"):
        rolling_sharpe(r, window)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="window"):
        rolling_beta(r, r, window)  # type: ignore[arg-type]


def test_other_bad_arguments() -> None:
    r = np.linspace(-0.01, 0.01, 10)
    with pytest.raises(ValueError, match="ddof"):
        rolling_volatility(r, 3, ddof=3)
    with pytest.raises(ValueError, match="periods_per_year"):
        rolling_volatility(r, 3, periods_per_year=0)
    with pytest.raises(ValueError, match="risk_free"):
        rolling_sharpe(r, 3, risk_free=float("nan"))
    with pytest.raises(ValueError, match="same length"):
        rolling_beta(r, r[:-1], 3)
    with pytest.raises(ValueError, match="columns"):
        rolling_beta(np.zeros((10, 3)), np.zeros((10, 2)), 3)


def test_nan_or_inf_makes_exactly_the_windows_holding_it_nan() -> None:
    rng = np.random.default_rng(7)
    r = rng.normal(0.0, 0.01, (40, 2))
    r[10, 0] = np.nan
    r[25, 1] = np.inf
    b = rng.normal(0.0, 0.01, (40, 1))
    b[30, 0] = np.nan
    window = 4
    for got in (rolling_volatility(r, window), rolling_sharpe(r, window)):
        assert np.isnan(got[10:14, 0]).all() and np.isfinite(got[14:, 0]).all()
        assert np.isnan(got[25:29, 1]).all() and np.isfinite(got[29:, 1]).all()
        assert np.isfinite(got[3:10, 0]).all()
    # the values after the gap equal a fresh computation on the NaN-free tail
    np.testing.assert_allclose(
        rolling_volatility(r, window)[14:, 0], _direct_vol(r[11:, :1], window)[3:, 0], rtol=1e-12
    )
    beta = rolling_beta(r, b, window)
    assert np.isnan(beta[30:34]).all() and np.isfinite(beta[34:, 0]).all()
    assert np.isnan(beta[10:14, 0]).all() and np.isfinite(beta[14:30, 0]).all()
    # same as pandas' rolling window, which also gives NaN for a window with a NaN
    pd_vol = pd.DataFrame(r).replace(np.inf, np.nan).rolling(window).std() * np.sqrt(252)
    np.testing.assert_allclose(rolling_volatility(r, window), pd_vol.to_numpy(), rtol=1e-12)


def test_constant_returns() -> None:
    r = np.r_[np.linspace(-0.05, 0.05, 30), np.full(30, 0.001)]
    window = 10
    vol = rolling_volatility(r, window)
    assert (vol[39:] == 0.0).all()  # exactly zero, not a rounding residue
    assert np.isfinite(vol[9:]).all() and (vol[9:39] > 0).all()
    sharpe = rolling_sharpe(r, window)
    assert np.isnan(sharpe[39:]).all() and np.isfinite(sharpe[9:39]).all()
    # a constant benchmark has no variance: beta NaN
    b = np.r_[np.linspace(0.02, -0.02, 30), np.full(30, 0.002)]
    beta = rolling_beta(r, b, window)
    assert np.isnan(beta[39:]).all() and np.isfinite(beta[9:39]).all()


def test_pandas_in_same_kind_out(returns_panel: pd.DataFrame) -> None:
    window = 21
    vol = rolling_volatility(returns_panel, window)
    assert isinstance(vol, pd.DataFrame)
    assert vol.index.equals(returns_panel.index) and vol.columns.equals(returns_panel.columns)
    expected = returns_panel.rolling(window).std() * np.sqrt(252)
    pd.testing.assert_frame_equal(vol, expected, rtol=1e-10)
    s = returns_panel["SP500"]
    sharpe = rolling_sharpe(s, window)
    assert isinstance(sharpe, pd.Series) and sharpe.name == "SP500" and sharpe.index.equals(s.index)
    beta = rolling_beta(returns_panel, returns_panel["SP500"], window)
    assert isinstance(beta, pd.DataFrame) and beta.columns.equals(returns_panel.columns)
    valid = beta["SP500"].dropna()
    np.testing.assert_allclose(valid.to_numpy(), 1.0, rtol=1e-12)
    with pytest.raises(ValueError, match="same index"):
        rolling_beta(s, s.iloc[::-1], window)


@pytest.mark.parametrize("k", [1, 3, 130, 813])  # 813: a C panel split into column chunks
def test_c_and_f_order_bit_identical_serial_and_parallel(k: int) -> None:
    rng = np.random.default_rng(3)
    n = max(50, PARALLEL_MIN_CELLS // k + 10)  # the wide panels take the parallel path
    r = rng.standard_t(3, size=(n, k)) * 0.02
    r[5, 0] = np.nan
    b = rng.normal(0.0, 0.01, (n, 1))
    c, f = np.ascontiguousarray(r), np.asfortranarray(r)
    for fn in (rolling_volatility, rolling_sharpe):
        a1, a2 = fn(c, 17), fn(f, 17)
        assert np.array_equal(a1, a2, equal_nan=True)
    assert np.array_equal(rolling_beta(c, b, 17), rolling_beta(f, b, 17), equal_nan=True)
    # a column of a panel gives what the column alone gives
    assert np.array_equal(
        rolling_volatility(c, 17)[:, -1], rolling_volatility(r[:, -1], 17), equal_nan=True
    )


def test_the_tear_sheet_figure_draws_these_functions() -> None:
    # quantcore.plot.rolling_sharpe_volatility computes nothing itself: its lines are
    # exactly the rolling functions' values (one engine), including the NaN windows
    from quantcore import plot

    rng = np.random.default_rng(8)
    r = pd.Series(rng.normal(0.0004, 0.01, 400))
    r.iloc[100] = np.nan
    r.iloc[200:230] = 0.001  # a flat stretch: volatility exactly 0, Sharpe NaN
    fig = plot.rolling_sharpe_volatility(r, window=20, periods_per_year=52)
    top, bottom = fig.axes
    want_sr = rolling_sharpe(r, 20, periods_per_year=52).to_numpy()
    want_vol = rolling_volatility(r, 20, periods_per_year=52).to_numpy()
    assert np.array_equal(top.lines[0].get_ydata(), want_sr, equal_nan=True)
    assert np.array_equal(bottom.lines[0].get_ydata(), want_vol, equal_nan=True)
    assert np.isnan(want_sr[100:120]).all() and (want_vol[229] == 0.0)
    with pytest.raises(ValueError, match="window"):
        plot.rolling_sharpe_volatility(r, window=1)
    with pytest.raises(ValueError, match="periods_per_year"):
        plot.rolling_sharpe_volatility(r, window=5, periods_per_year=0)
