"""The worked corporate-action examples of ``docs/tax.md`` ("Corporate actions: worked
examples"), run over HTTP: every position and Form 8949 row the page shows is the
service's answer, and the page shows exactly these numbers (the test reads it).

Rules: IRS Publication 550 ("Stock Splits", cash in lieu of a fractional share is a
sale of it) and the issuer's Form 8937 (a spin-off's ratio and basis allocation).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service.conftest import Api

DOC = Path(__file__).resolve().parents[2] / "docs" / "tax.md"

# (name, [(request body without "portfolio", positions after it or None)], 8949 year, rows)
# positions: "| SYMBOL | quantity | average_cost | cost_basis |" as the page shows them
EXAMPLES = [
    (
        "split",
        [
            ({"asset_symbol": "AAPL", "transaction_type": "buy", "quantity": "100", "price": "40",
              "transaction_date": "2020-01-02"}, ["| AAPL | 100.00000000 | 40.0000 | 4000.00 |"]),
            ({"asset_symbol": "AAPL", "transaction_type": "split", "split_ratio": "4",
              "transaction_date": "2021-06-01"}, ["| AAPL | 400.00000000 | 10.0000 | 4000.00 |"]),
            ({"asset_symbol": "AAPL", "transaction_type": "sell", "quantity": "400", "price": "15",
              "transaction_date": "2022-03-01"}, []),
        ],
        2022,
        ["| II | 400 sh. AAPL | 2020-01-02 | 2022-03-01 | 6000.00 | 4000.00 | 2000.00 |"],
    ),
    (
        "reverse split, cash in lieu",
        [
            ({"asset_symbol": "MSFT", "transaction_type": "buy", "quantity": "105", "price": "10",
              "transaction_date": "2020-01-02"}, ["| MSFT | 105.00000000 | 10.0000 | 1050.00 |"]),
            ({"asset_symbol": "MSFT", "transaction_type": "split", "split_ratio": "0.1",
              "cash_in_lieu": "7.50", "transaction_date": "2021-01-04"},
             ["| MSFT | 10.00000000 | 100.0000 | 1000.00 |"]),
        ],
        2021,
        ["| II | 0.5 sh. MSFT | 2020-01-02 | 2021-01-04 | 7.50 | 50.00 | -42.50 |"],
    ),
    (
        "spin-off",
        [
            ({"asset_symbol": "GE", "transaction_type": "buy", "quantity": "100", "price": "50",
              "transaction_date": "2020-01-02"}, ["| GE | 100.00000000 | 50.0000 | 5000.00 |"]),
            ({"asset_symbol": "GE", "transaction_type": "spin_off", "target_symbol": "HON", "ratio": "0.5",
              "basis_allocation": "0.2", "transaction_date": "2024-03-01"},
             ["| GE | 100.00000000 | 40.0000 | 4000.00 |", "| HON | 50.00000000 | 20.0000 | 1000.00 |"]),
            ({"asset_symbol": "HON", "transaction_type": "sell", "quantity": "50", "price": "30",
              "transaction_date": "2024-03-05"}, ["| GE | 100.00000000 | 40.0000 | 4000.00 |"]),
        ],
        2024,
        ["| II | 50 sh. HON | 2020-01-02 | 2024-03-05 | 1500.00 | 1000.00 | 500.00 |"],
    ),
    (
        "merger, stock and cash",
        [
            ({"asset_symbol": "JPM", "transaction_type": "buy", "quantity": "100", "price": "40",
              "transaction_date": "2023-09-01"}, ["| JPM | 100.00000000 | 40.0000 | 4000.00 |"]),
            ({"asset_symbol": "JPM", "transaction_type": "merger", "target_symbol": "BAC", "ratio": "2",
              "cash_per_share": "10", "price": "20", "transaction_date": "2024-03-01"},
             ["| BAC | 200.00000000 | 16.0000 | 3200.00 |"]),
        ],
        2024,
        ["| I | 20 sh. JPM | 2023-09-01 | 2024-03-01 | 1000.00 | 800.00 | 200.00 |"],
    ),
]  # fmt: skip


def _positions(api: Api, h: dict[str, str], pid: int) -> list[str]:
    r = api.client.get(f"/api/portfolios/{pid}/positions/?limit=100", headers=h)
    assert r.status_code == 200, r.text
    rows = sorted(r.json()["results"], key=lambda p: p["asset"]["symbol"])
    return [f"| {p['asset']['symbol']} | {p['quantity']} | {p['average_cost']} | {p['cost_basis']} |" for p in rows]


def _form_8949(api: Api, h: dict[str, str], year: int, pid: int) -> list[str]:
    r = api.client.post(
        "/api/tax/reports/generate/", json={"year": year, "report_type": "all", "portfolio_id": pid}, headers=h
    )
    assert r.status_code == 201, r.text
    form = api.client.get(f"/api/tax/reports/{r.json()['id']}/download/?format=json", headers=h).json()["form_8949"]
    return [
        f"| {part} | {x['description']} | {x['date_acquired']} | {x['date_sold']} | {x['proceeds']} "
        f"| {x['cost_basis']} | {x['gain_or_loss']} |"
        for part, key in (("I", "part_i"), ("II", "part_ii"))
        for x in form[key]["rows"]
    ]


@pytest.mark.parametrize(("name", "steps", "year", "rows"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_worked_example(api: Api, name: str, steps: list, year: int, rows: list[str]) -> None:
    _, h = api.user()
    pid = int(api.client.post("/api/portfolios/", json={"name": name}, headers=h).json()["id"])
    for body, positions in steps:
        r = api.client.post("/api/transactions/", json={"portfolio": pid, **body}, headers=h)
        assert r.status_code == 201, r.text
        assert _positions(api, h, pid) == positions
    assert _form_8949(api, h, year, pid) == rows


@pytest.mark.parametrize(("name", "steps", "year", "rows"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_the_page_shows_these_numbers(name: str, steps: list, year: int, rows: list[str]) -> None:
    page = DOC.read_text()
    for _, positions in steps:
        for line in positions:
            assert line in page, line
    for line in rows:
        assert line in page, line
