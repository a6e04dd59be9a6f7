"""The web interface's other features in Chromium: statement import, tax reports, live prices."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import api_get, open_page, portfolio_id, sign_in, wait_ready
from tests.service.test_realtime import Server

pytestmark = pytest.mark.slow

# A Schwab history download (the preset is detected from the header): a deposit and a buy.
STATEMENT = """"Date","Action","Symbol","Description","Quantity","Price","Fees & Comm","Amount"
"03/11/2025","Buy","MSFT","MICROSOFT CORP","2","$300.00","","-$600.00"
"03/10/2025","MoneyLink Transfer","","Tfr BANK, JANE DOE","","","","$1,000.00"
"""


def _count(server: Server, token: str, pid: int) -> int:
    return int(api_get(server, token, f"/api/transactions/?portfolio_id={pid}")["count"])


def test_statement_import_previews_before_writing(
    server: Server, token: str, page_and_watch: Any
) -> None:
    page, watch = page_and_watch
    sign_in(page, server.http)
    pid = portfolio_id(server, token)
    open_page(page, server.http, f"#/portfolio/{pid}")
    before = _count(server, token, pid)
    form = page.get_by_role("form", name="Import a broker statement")
    import_button = form.get_by_role("button", name="Import", exact=True)
    assert import_button.is_disabled()
    form.get_by_label("Statement file (OFX, QFX or CSV)").set_input_files(
        {"name": "history.csv", "mimeType": "text/csv", "buffer": STATEMENT.encode()}
    )
    form.get_by_role("button", name="Preview (dry run)").click()
    preview = page.get_by_text(re.compile(r"^Preview: 2 row\(s\) would be added"))
    preview.wait_for()
    assert "Nothing is written yet." in preview.inner_text()
    rows = page.get_by_role("region", name="Rows that would be added (first 20)").locator(
        "tbody tr"
    )
    assert rows.count() == 2
    assert _count(server, token, pid) == before  # the preview wrote nothing
    assert import_button.is_enabled()
    import_button.click()
    page.get_by_text(re.compile(r"^Imported 2 row\(s\)")).wait_for()
    assert _count(server, token, pid) == before + 2
    wait_ready(page)
    # The same file again: nothing new to add, so nothing to import.
    open_page(page, server.http, f"#/portfolio/{pid}")
    form = page.get_by_role("form", name="Import a broker statement")
    form.get_by_label("Statement file (OFX, QFX or CSV)").set_input_files(
        {"name": "history.csv", "mimeType": "text/csv", "buffer": STATEMENT.encode()}
    )
    form.get_by_role("button", name="Preview (dry run)").click()
    page.get_by_text(
        re.compile(r"^Preview: 0 row\(s\) would be added .* 2 already imported")
    ).wait_for()
    assert form.get_by_role("button", name="Import", exact=True).is_disabled()
    # A bad file: the API's line errors, and nothing written.
    form.get_by_label("Statement file (OFX, QFX or CSV)").set_input_files(
        {"name": "bad.csv", "mimeType": "text/csv",
         "buffer": STATEMENT.replace('"MSFT"', '"ZZQX"').replace("03/11", "03/12").encode()}
    )  # fmt: skip
    form.get_by_role("button", name="Preview (dry run)").click()
    problems = page.get_by_role("region", name="Problems in the file (nothing was imported)")
    problems.wait_for()
    assert "ZZQX" in problems.inner_text()
    assert _count(server, token, pid) == before + 2
    assert watch.foreign() == []
    assert [e for e in watch.errors if "/api/analytics/" not in e] == []  # overview/income 404s


def test_tax_report_generated_and_downloaded(
    server: Server, token: str, page_and_watch: Any
) -> None:
    page, _ = page_and_watch
    sign_in(page, server.http)
    open_page(page, server.http, "#/tax")
    assert "Net capital gain/loss" in page.locator("section[aria-labelledby=h-sum]").inner_text()
    gen = page.get_by_role("form", name="Generate a tax report")
    gen.get_by_label("Year").fill("2025")
    gen.get_by_label("Report").select_option("schedule_d")
    gen.get_by_role("button", name="Generate").click()
    page.get_by_text("Report generated.").wait_for()
    reports = api_get(server, token, "/api/tax/reports/")["results"]
    newest = max(reports, key=lambda r: r["id"])
    region = page.get_by_role("region", name="Generated reports")
    region.locator("tbody tr").first.wait_for()
    link = region.locator(f"a[href='/api/tax/reports/{newest['id']}/download/?format=csv']")
    with page.expect_download() as info:
        link.click()
    body = Path(info.value.path()).read_text(encoding="utf-8")
    expected = httpx.get(
        f"{server.http}/api/tax/reports/{newest['id']}/download/?format=csv",
        headers={"Authorization": f"Token {token}"},
    ).text
    assert body == expected and body
    # A bad year shows the API's error on the year field.
    gen.get_by_label("Year").fill("1800")
    gen.get_by_role("button", name="Generate").click()
    page.wait_for_function(
        "() => document.querySelector('[aria-label=\"Generate a tax report\"] [data-field=year] .field-error').textContent !== ''"
    )


def test_prices_update_live_over_the_websocket(
    server: Server, token: str, page_and_watch: Any
) -> None:
    page, _ = page_and_watch
    sign_in(page, server.http)
    open_page(page, server.http, "#/asset/SPY")
    page.get_by_text("Live", exact=True).wait_for()
    price = page.locator("[data-live-price='SPY']").first
    # Ask the server to tick SPY until the page shows a price the server pushed. Outside
    # market hours a tick repeats the last price, so the shown text is replaced by a
    # marker first: only a pushed price can replace it again.
    seen = "waiting for a push"
    page.evaluate(
        "(text) => document.querySelectorAll(\"[data-live-price='SPY']\").forEach((e) => { e.textContent = text; })",
        seen,
    )
    for _ in range(5):
        r = httpx.post(
            f"{server.http}/api/realtime/force_price_update/",
            headers={"Authorization": f"Token {token}"},
            json={"symbols": ["SPY"]},
        )
        assert r.status_code == 200, r.text
        try:
            page.wait_for_function(
                "(old) => document.querySelector(\"[data-live-price='SPY']\").textContent !== old",
                arg=seen,
                timeout=5_000,
            )
            break
        except Exception:  # the tick may repeat the price: try again
            continue
    else:
        pytest.fail("no live price update reached the page")
    # The pushed price, shown as the API writes prices (4 digits, grouped).
    assert re.match(r"^\d{1,3}(,\d{3})*\.\d{4}$", price.inner_text()), price.inner_text()


def test_cash_row_and_corporate_action_through_the_page(
    server: Server, token: str, page_and_watch: Any
) -> None:
    """The form sends each type's own fields: a deposit (no asset) and a split (a ratio)."""
    page, watch = page_and_watch
    sign_in(page, server.http)
    pid = portfolio_id(server, token)
    open_page(page, server.http, f"#/portfolio/{pid}")
    held = {
        p["asset"]["symbol"]: p["quantity"]
        for p in api_get(server, token, f"/api/portfolios/{pid}/positions/")["results"]
    }
    split_day = (dt.date.today() - dt.timedelta(days=30)).isoformat()

    def add(kind: str, fill: dict[str, str]) -> None:
        page.get_by_role("button", name="Add a transaction").click()
        form = page.get_by_role("form", name="New transaction")
        form.get_by_label("Type").select_option(kind)
        assert form.get_by_label("Quantity").is_hidden()  # neither type takes a quantity
        for label, value in fill.items():
            form.get_by_label(label, exact=True).fill(value)
        form.get_by_role("button", name="Add").click()
        wait_ready(page)
        page.get_by_role("button", name="Add a transaction").wait_for()

    add("deposit", {"Amount": "500", "Date": "2025-06-03"})
    add(
        "split",
        {"Asset symbol": "AAPL", "Split ratio (new shares per old)": "2", "Date": split_day},
    )
    rows = api_get(server, token, f"/api/transactions/?portfolio_id={pid}&limit=100")["results"]
    deposit = [
        t
        for t in rows
        if t["transaction_type"] == "deposit" and t["transaction_date"] == "2025-06-03"
    ]
    split = [t for t in rows if t["transaction_type"] == "split"]
    assert [(t["asset_symbol"], t["price"], t["currency"]) for t in deposit] == [
        (None, "500.00", "USD")
    ]
    assert [(t["asset_symbol"], t["split_ratio"], t["transaction_date"]) for t in split] == [
        ("AAPL", "2", split_day)
    ]
    after = {
        p["asset"]["symbol"]: p["quantity"]
        for p in api_get(server, token, f"/api/portfolios/{pid}/positions/")["results"]
    }
    assert float(after["AAPL"]) == 2 * float(held["AAPL"])
    # Both deleted through the page: the ledger is as it was.
    for name in (f"Delete split AAPL on {split_day}", "Delete deposit on 2025-06-03"):
        button = page.get_by_role("button", name=name)
        button.click()
        button.click()
        wait_ready(page)
        page.get_by_role("button", name="Add a transaction").wait_for()
        page.get_by_role("button", name=name).wait_for(state="detached")
    final = {
        p["asset"]["symbol"]: p["quantity"]
        for p in api_get(server, token, f"/api/portfolios/{pid}/positions/")["results"]
    }
    assert final == held
    assert [e for e in watch.errors if "/api/analytics/" not in e] == []
