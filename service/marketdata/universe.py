"""The simulated asset universe: 47 assets and the factor model behind their prices.

Every asset loads on one **market** factor and at most one **group** factor (its
sector, ``Rates`` for the bond ETFs, ``Crypto`` for the coins) and has its own
idiosyncratic noise. Volatilities and drifts are annual and chosen to look like
the real asset class (large caps 20-35 %, SPY about 16 %, long Treasuries about
14 %, bitcoin about 60 %). The tickers and names are familiar on purpose; the
prices are not theirs (every asset says ``data_source="simulated"``).

Six listings trade outside the US, in their own currency (``currency``, ISO 4217;
every other asset, crypto included, is in US dollars): SAP.DE and SIE.DE in euros,
HSBA.L and AZN.L in pounds (pounds, not the pence London quotes in), 7203.T and
6758.T in yen. They load on the same market and sector factors as the US stocks
and trade in the same simulated session (exchange hours are not modelled). They
are appended at the end of :data:`UNIVERSE`: every draw is keyed by the symbol or
the factor, never by a position in the universe, so adding them left the bars of
the other 41 assets bit-identical (``tests/service/test_asset_currencies.py``).

Bond ETFs (TLT, IEF, AGG, BND) have ``asset_type="bond"``: the API's
``asset_type`` filter has a ``bond`` value, and a user filtering on it expects
exactly these funds.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from service.marketdata.provider import AssetType

__all__ = [
    "FACTOR_VOLS",
    "MARKET_VOL",
    "START_DATE",
    "UNIVERSE",
    "AssetSpec",
    "spec_for",
]

#: First day of simulated history (a Friday). History is generated forward from
#: here, so it never changes when "today" advances.
START_DATE = dt.date(2015, 1, 2)

#: Annual volatility of the market factor.
MARKET_VOL = 0.16

#: Annual volatility of each group factor (an asset's ``loading`` scales it).
FACTOR_VOLS: dict[str, float] = {
    "Technology": 0.12,
    "Healthcare": 0.09,
    "Financials": 0.11,
    "Energy": 0.18,
    "Consumer": 0.08,
    "Industrials": 0.09,
    "Utilities": 0.10,
    "Rates": 0.10,
    "Crypto": 0.55,
}


@dataclass(frozen=True, slots=True)
class AssetSpec:
    """One simulated asset and its factor loadings.

    Attributes:
        symbol: Ticker.
        name: Display name.
        asset_type: ``stock``, ``etf``, ``bond`` or ``crypto``.
        sector: Sector label shown by the API.
        factor: Group factor the asset loads on (a key of :data:`FACTOR_VOLS`) or ``""``.
        beta: Loading on the market factor.
        loading: Loading on the group factor.
        idio: Annual idiosyncratic volatility.
        drift: Expected annual (arithmetic) return.
        price0: Price on :data:`START_DATE`.
        shares: Units outstanding (shares, fund units, coins), for the market cap.
        volume: Typical daily volume in units.
        currency: ISO 4217 code of the prices (and of ``price0``).
    """

    symbol: str
    name: str
    asset_type: AssetType
    sector: str
    factor: str
    beta: float
    loading: float
    idio: float
    drift: float
    price0: float
    shares: float
    volume: float
    currency: str = "USD"

    @property
    def trades_weekends(self) -> bool:
        """Whether the asset trades every calendar day (crypto) or business days only."""
        return self.asset_type == "crypto"

    @property
    def annual_vol(self) -> float:
        """Total annual volatility implied by the loadings (before the volatility regime)."""
        group = self.loading * FACTOR_VOLS.get(self.factor, 0.0)
        return float((self.beta**2 * MARKET_VOL**2 + group**2 + self.idio**2) ** 0.5)


def _stock(
    symbol: str,
    name: str,
    sector: str,
    beta: float,
    idio: float,
    drift: float,
    price0: float,
    shares_m: float,
    volume_m: float,
    currency: str = "USD",
) -> AssetSpec:
    return AssetSpec(
        symbol, name, "stock", sector, sector, beta, 1.0, idio, drift, price0,
        shares_m * 1e6, volume_m * 1e6, currency,
    )  # fmt: skip


def _fund(
    symbol: str,
    name: str,
    asset_type: AssetType,
    sector: str,
    factor: str,
    beta: float,
    loading: float,
    idio: float,
    drift: float,
    price0: float,
    units_m: float,
    volume_m: float,
) -> AssetSpec:
    return AssetSpec(
        symbol, name, asset_type, sector, factor, beta, loading, idio, drift, price0,
        units_m * 1e6, volume_m * 1e6,
    )  # fmt: skip


UNIVERSE: tuple[AssetSpec, ...] = (
    # symbol, name, sector, beta, idio vol, drift, price on 2015-01-02, shares (M), daily volume (M)
    _stock("AAPL", "Apple Inc.", "Technology", 1.15, 0.20, 0.16, 27.3, 15_400, 60.0),
    _stock("MSFT", "Microsoft Corporation", "Technology", 1.05, 0.17, 0.15, 46.8, 7_430, 25.0),
    _stock("NVDA", "NVIDIA Corporation", "Technology", 1.60, 0.38, 0.25, 20.1, 2_450, 45.0),
    _stock("GOOGL", "Alphabet Inc.", "Technology", 1.05, 0.20, 0.13, 529.6, 680, 1.8),
    _stock("JNJ", "Johnson & Johnson", "Healthcare", 0.65, 0.13, 0.07, 104.5, 2_400, 7.0),
    _stock("UNH", "UnitedHealth Group Inc.", "Healthcare", 0.80, 0.20, 0.13, 101.6, 920, 3.5),
    _stock("PFE", "Pfizer Inc.", "Healthcare", 0.70, 0.18, 0.05, 31.3, 5_600, 28.0),
    _stock("MRK", "Merck & Co., Inc.", "Healthcare", 0.65, 0.17, 0.07, 57.1, 2_530, 10.0),
    _stock("JPM", "JPMorgan Chase & Co.", "Financials", 1.10, 0.16, 0.11, 62.5, 2_880, 11.0),
    _stock("BAC", "Bank of America Corporation", "Financials", 1.25, 0.20, 0.09, 17.9, 8_000, 45.0),
    _stock("GS", "The Goldman Sachs Group, Inc.", "Financials", 1.20, 0.18, 0.10, 193.9, 325, 2.5),
    _stock("V", "Visa Inc.", "Financials", 0.95, 0.16, 0.13, 65.6, 2_040, 7.0),
    _stock("XOM", "Exxon Mobil Corporation", "Energy", 0.85, 0.16, 0.05, 92.8, 4_200, 17.0),
    _stock("CVX", "Chevron Corporation", "Energy", 0.90, 0.17, 0.05, 112.6, 1_880, 8.0),
    _stock("COP", "ConocoPhillips", "Energy", 1.05, 0.22, 0.06, 69.9, 1_230, 7.0),
    _stock("AMZN", "Amazon.com, Inc.", "Consumer", 1.20, 0.25, 0.17, 15.4, 10_400, 70.0),
    _stock("WMT", "Walmart Inc.", "Consumer", 0.55, 0.15, 0.08, 28.7, 8_060, 20.0),
    _stock("KO", "The Coca-Cola Company", "Consumer", 0.60, 0.12, 0.06, 42.1, 4_310, 13.0),
    _stock("PG", "The Procter & Gamble Company", "Consumer", 0.55, 0.12, 0.06, 91.0, 2_360, 7.0),
    _stock("MCD", "McDonald's Corporation", "Consumer", 0.65, 0.14, 0.08, 93.9, 714, 3.5),
    _stock("CAT", "Caterpillar Inc.", "Industrials", 1.10, 0.20, 0.10, 91.7, 505, 3.5),
    _stock("BA", "The Boeing Company", "Industrials", 1.25, 0.26, 0.06, 130.6, 608, 6.0),
    _stock("GE", "General Electric Company", "Industrials", 1.10, 0.24, 0.06, 80.0, 1_090, 8.0),
    _stock("HON", "Honeywell International Inc.", "Industrials", 0.95, 0.15, 0.08, 99.5, 650, 3.0),
    _stock("NEE", "NextEra Energy, Inc.", "Utilities", 0.45, 0.15, 0.08, 26.6, 2_050, 9.0),
    _stock("DUK", "Duke Energy Corporation", "Utilities", 0.40, 0.13, 0.06, 83.6, 772, 3.0),
    _stock("SO", "The Southern Company", "Utilities", 0.40, 0.13, 0.06, 49.2, 1_090, 4.5),
    # ETFs: broad market and sector funds (sector label = what the fund holds).
    _fund(
        "SPY",
        "SPDR S&P 500 ETF Trust",
        "etf",
        "Broad Market",
        "",
        1.00,
        0.0,
        0.01,
        0.10,
        205.4,
        1_000,
        80.0,
    ),
    _fund(
        "QQQ",
        "Invesco QQQ Trust",
        "etf",
        "Broad Market",
        "Technology",
        1.15,
        0.60,
        0.04,
        0.14,
        102.9,
        560,
        40.0,
    ),
    _fund(
        "IWM",
        "iShares Russell 2000 ETF",
        "etf",
        "Broad Market",
        "",
        1.15,
        0.0,
        0.10,
        0.08,
        118.9,
        300,
        28.0,
    ),
    _fund(
        "DIA",
        "SPDR Dow Jones Industrial Average ETF Trust",
        "etf",
        "Broad Market",
        "",
        0.95,
        0.0,
        0.03,
        0.09,
        177.7,
        120,
        3.5,
    ),
    _fund(
        "XLK",
        "Technology Select Sector SPDR Fund",
        "etf",
        "Technology",
        "Technology",
        1.10,
        1.0,
        0.03,
        0.15,
        41.3,
        450,
        8.0,
    ),
    _fund(
        "XLF",
        "Financial Select Sector SPDR Fund",
        "etf",
        "Financials",
        "Financials",
        1.10,
        1.0,
        0.03,
        0.09,
        24.7,
        1_100,
        40.0,
    ),
    _fund(
        "XLE",
        "Energy Select Sector SPDR Fund",
        "etf",
        "Energy",
        "Energy",
        0.90,
        1.0,
        0.04,
        0.05,
        79.1,
        500,
        18.0,
    ),
    _fund(
        "XLV",
        "Health Care Select Sector SPDR Fund",
        "etf",
        "Healthcare",
        "Healthcare",
        0.70,
        1.0,
        0.03,
        0.09,
        68.1,
        270,
        8.0,
    ),
    # Bond ETFs: a rates factor (loading ~ duration) and a small negative equity beta.
    _fund(
        "TLT",
        "iShares 20+ Year Treasury Bond ETF",
        "bond",
        "Fixed Income",
        "Rates",
        -0.15,
        1.30,
        0.02,
        0.03,
        127.2,
        500,
        15.0,
    ),
    _fund(
        "IEF",
        "iShares 7-10 Year Treasury Bond ETF",
        "bond",
        "Fixed Income",
        "Rates",
        -0.08,
        0.65,
        0.01,
        0.025,
        106.2,
        290,
        6.0,
    ),
    _fund(
        "AGG",
        "iShares Core U.S. Aggregate Bond ETF",
        "bond",
        "Fixed Income",
        "Rates",
        -0.02,
        0.40,
        0.01,
        0.025,
        110.5,
        1_150,
        7.0,
    ),
    _fund(
        "BND",
        "Vanguard Total Bond Market ETF",
        "bond",
        "Fixed Income",
        "Rates",
        -0.02,
        0.40,
        0.01,
        0.025,
        82.7,
        1_300,
        6.0,
    ),
    # Crypto: trades 7 days a week; units are coins.
    _fund(
        "BTC-USD",
        "Bitcoin USD",
        "crypto",
        "Crypto",
        "Crypto",
        0.60,
        1.0,
        0.30,
        0.45,
        315.0,
        19.7,
        0.02,
    ),
    _fund(
        "ETH-USD",
        "Ethereum USD",
        "crypto",
        "Crypto",
        "Crypto",
        0.70,
        1.15,
        0.45,
        0.50,
        3.0,
        120,
        0.35,
    ),
    # Non-US listings, in their own currency (always appended: see the module docstring).
    # Prices on 2015-01-02 split-adjusted; London in pounds (Yahoo's .L quotes are pence).
    _stock("SAP.DE", "SAP SE", "Technology", 1.00, 0.20, 0.11, 58.3, 1_229, 2.0, "EUR"),
    _stock("SIE.DE", "Siemens AG", "Industrials", 1.00, 0.19, 0.07, 93.7, 850, 1.8, "EUR"),
    _stock(
        "HSBA.L", "HSBC Holdings plc", "Financials", 0.95, 0.22, 0.04, 6.10, 19_200, 30.0, "GBP"
    ),
    _stock("AZN.L", "AstraZeneca PLC", "Healthcare", 0.60, 0.18, 0.09, 46.0, 1_264, 2.0, "GBP"),
    _stock(
        "7203.T",
        "Toyota Motor Corporation",
        "Consumer",
        0.80,
        0.22,
        0.07,
        1_513.0,
        16_300,
        25.0,
        "JPY",
    ),
    _stock(
        "6758.T",
        "Sony Group Corporation",
        "Technology",
        1.00,
        0.28,
        0.12,
        490.0,
        6_300,
        10.0,
        "JPY",
    ),
)

_BY_SYMBOL: dict[str, AssetSpec] = {spec.symbol: spec for spec in UNIVERSE}


def spec_for(symbol: str) -> AssetSpec:
    """The simulated asset ``symbol`` (case-insensitive).

    Raises:
        KeyError: ``symbol`` is not in the universe.
    """
    try:
        return _BY_SYMBOL[symbol.strip().upper()]
    except KeyError:
        raise KeyError(f"unknown symbol {symbol!r}") from None
