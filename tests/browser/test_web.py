"""The web interface in a real browser: Debian's Chromium driven by Playwright.

One server for all the browser tests (demo data, SQLite in a temp dir). What the pages show is
checked against what the API answers for the same user; what they write is read back
through the API. ``QC_WEB_SCREENSHOTS=1`` also writes each page's screenshot to
``docs/img/`` (the images of docs/web.md).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from typing import Any

import httpx
import pytest

from tests.browser.conftest import (
    AXE,
    DEMO,
    SCREENSHOTS,
    Watch,
    api_get,
    open_page,
    portfolio_id,
    sign_in,
    wait_ready,
)
from tests.conftest import skip_or_fail
from tests.service.test_realtime import Server

pytestmark = pytest.mark.slow

PAGES = {
    "dashboard": "#/",
    "portfolio": "#/portfolio/{pid}",
    "tax": "#/tax",
    "asset": "#/asset/SPY",
    "backtest": "#/backtest",
}
GROUPED = re.compile(r"^-?\d{1,3}(,\d{3})*\.\d{2}$")


def _missing_endpoints(server: Server, token: str, pid: int) -> tuple[str, ...]:
    """Endpoints a page calls that this server does not have yet: their 404 is expected."""
    out = []
    for path in (
        "/api/analytics/overview/?period=1y&currency=USD",
        f"/api/analytics/portfolio/{pid}/income/?group_by=month&period=1y",
    ):
        r = httpx.get(
            f"{server.http}{path}", headers={"Authorization": f"Token {token}"}, timeout=60
        )
        if r.status_code == 404:
            out.append(path.split("?")[0])
    return tuple(out)


def _unexpected(watch: Watch, missing: tuple[str, ...]) -> list[str]:
    return [
        e for e in watch.errors
        if not (e.startswith("Failed to load resource: the server responded with a status of 404")
                and any(p in e for p in missing))
    ]  # fmt: skip


def test_sign_in_messages_then_dashboard(server: Server, token: str, page_and_watch: Any) -> None:
    page, watch = page_and_watch
    missing = _missing_endpoints(server, token, portfolio_id(server, token))
    page.goto(f"{server.http}/")
    page.get_by_label("Username").fill("demo")
    page.get_by_label("Password").fill("not-the-password")
    page.get_by_role("button", name="Sign in").click()
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert alert.inner_text() == "Wrong username or password."

    # A rate-limited login: the API's documented 429 body and Retry-After, answered by the
    # browser's router for this one request (making 100 real attempts would take the budget
    # of every other test on the server).
    def limited(route: Any) -> None:
        route.fulfill(
            status=429,
            headers={"Retry-After": "42", "Content-Type": "application/json"},
            body=json.dumps(
                {"error": "rate_limited", "message": "Rate limit exceeded.", "details": {}}
            ),
        )

    page.route("**/api/auth/login/", limited)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Too many requests").wait_for()
    assert "Try again in 42 s." in page.get_by_role("alert").last.inner_text()
    page.unroute("**/api/auth/login/")

    page.get_by_label("Password").fill(DEMO[1])
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Dashboard").wait_for()
    assert page.locator("#username").inner_text() == "demo"
    # The two refused logins logged their 401 / 429 in the console; nothing else may.
    assert [
        e
        for e in _unexpected(watch, missing)
        if "status of 401" not in e and "status of 429" not in e
    ] == []
    assert watch.foreign() == []


def test_dashboard_lists_portfolios_with_values(
    server: Server, token: str, page_and_watch: Any
) -> None:
    page, _ = page_and_watch
    # The overview is valued at the live quotes of its request, which move each minute:
    # compare the page with the very response it rendered, not with a later request.
    with page.expect_response(lambda r: "/api/analytics/overview/" in r.url) as rendered:
        sign_in(page, server.http)
    expected = api_get(server, token, "/api/portfolios/")["results"]
    assert expected, "the demo user has a portfolio"
    table = page.get_by_role("region", name="Your portfolios")
    for p in expected:
        row = table.locator("tr", has=page.get_by_role("link", name=p["name"]))
        cells = row.locator("td").all_inner_texts()
        total, change, _pct, cash, currency = cells[0], cells[1], cells[2], cells[3], cells[4]
        assert GROUPED.match(total) and GROUPED.match(change), cells
        # Live updates may move the value between the API call and the render; cash does not.
        assert abs(float(total.replace(",", "")) - float(p["total_value"])) <= 0.05 * float(
            p["total_value"]
        )
        assert cash == f"{float(p['cash_balance']):,.2f}" and currency == p["base_currency"]
    # The account overview: the server's own figures, as GET /api/analytics/overview/ gives them.
    overview = page.locator("section[aria-labelledby=h-acct]")
    overview.get_by_text("Total value").wait_for()
    account = rendered.value.json()
    assert rendered.value.ok and account["currency"] == "USD", account
    assert "period=1y" in rendered.value.url and "currency=USD" in rendered.value.url
    whole, _, cents = account["total_value"].partition(".")
    shown = f"{int(whole):,}" + (f".{cents}" if cents else "") + " USD"
    text = overview.inner_text()
    assert "not available" not in text and shown in text, (shown, text)
    assert str(account["portfolio_count"]) in text


def test_portfolio_page_renders_its_charts(server: Server, token: str, page_and_watch: Any) -> None:
    page, _ = page_and_watch
    sign_in(page, server.http)
    pid = portfolio_id(server, token)
    open_page(page, server.http, f"#/portfolio/{pid}")
    positions = api_get(server, token, f"/api/portfolios/{pid}/positions/")["results"]
    rows = page.get_by_role("region", name="Open positions").locator("tbody tr")
    assert rows.count() == len(positions)
    perf = page.locator("section[aria-labelledby=h-perf]")
    chart = perf.locator("svg").first
    assert chart.locator("path").count() == 2  # the portfolio and its benchmark
    assert all(
        len(d or "") > 100
        for d in chart.locator("path").evaluate_all("ps => ps.map(p => p.getAttribute('d'))")
    )
    # Values on hover, and on the keyboard.
    box = chart.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] / 2)
    caption = perf.locator("figcaption").first
    assert re.match(r"^\d{4}-\d{2}-\d{2}: .+ -?\d+\.\d{2} %", caption.inner_text()), (
        caption.inner_text()
    )
    chart.focus()
    page.keyboard.press("End")
    last = api_get(server, token, f"/api/analytics/portfolio/{pid}/performance/?period=1y")[
        "series"
    ][-1]
    assert caption.inner_text().startswith(f"{last['date']}:")
    alloc = api_get(server, token, f"/api/analytics/portfolio/{pid}/allocation/")
    assert page.get_by_role("list", name="Allocation by asset").get_by_role(
        "listitem"
    ).count() == len(alloc["allocations"])
    assert page.get_by_role("list", name="Allocation by sector").get_by_role(
        "listitem"
    ).count() == len(alloc["by_sector"])
    metrics = page.locator("section[aria-labelledby=h-metrics]").inner_text()
    assert "Sharpe" in metrics and "Max drawdown" in metrics
    assert "VaR 95 %" in page.locator("section[aria-labelledby=h-risk]").inner_text()


def _add_form(page: Any) -> Any:
    page.get_by_role("button", name="Add a transaction").click()
    return page.get_by_role("form", name="New transaction")


def test_transaction_added_edited_deleted_through_the_page(
    server: Server, token: str, page_and_watch: Any
) -> None:
    page, _ = page_and_watch
    sign_in(page, server.http)
    pid = portfolio_id(server, token)
    open_page(page, server.http, f"#/portfolio/{pid}")
    form = _add_form(page)
    form.get_by_label("Type").select_option("buy")
    form.get_by_label("Asset symbol").fill("AAPL")
    form.get_by_label("Date").fill("2025-06-02")
    form.get_by_label("Quantity").fill("3")
    form.get_by_label("Price").fill("123.45")
    form.get_by_role("button", name="Add").click()
    wait_ready(page)
    page.get_by_role("region", name=re.compile(r"^Transactions")).get_by_text("123.45").wait_for()

    def ours() -> list[dict[str, Any]]:
        rows = api_get(
            server,
            token,
            f"/api/transactions/?portfolio_id={pid}&date_from=2025-06-02&date_to=2025-06-02",
        )
        return [t for t in rows["results"] if t["asset_symbol"] == "AAPL"]

    added = ours()
    assert [(t["transaction_type"], t["quantity"], t["price"]) for t in added] == [
        ("buy", "3.00000000", "123.45")
    ]

    # Edit it: the form opens with the row's values; the API has the new price.
    page.get_by_role("button", name="Edit buy AAPL on 2025-06-02").click()
    edit = page.get_by_role("form", name="Edit buy AAPL on 2025-06-02")
    assert edit.get_by_label("Quantity").input_value() == "3.00000000"
    edit.get_by_label("Price").fill("120")
    edit.get_by_role("button", name="Save").click()
    # The form closes only once the API answered the PUT (it stays open on an error).
    edit.wait_for(state="detached")
    wait_ready(page)
    assert [t["price"] for t in ours()] in (["120"], ["120.00"])

    # Delete it: two clicks (the first arms the button), then the API no longer has it.
    delete = page.get_by_role("button", name="Delete buy AAPL on 2025-06-02")
    delete.click()
    assert delete.inner_text() == "Confirm delete"
    delete.click()
    # The row's button goes only when the page re-renders after the API answered the DELETE.
    delete.wait_for(state="detached")
    wait_ready(page)
    assert ours() == []


def test_bad_value_shows_the_api_field_error(
    server: Server, token: str, page_and_watch: Any
) -> None:
    page, _ = page_and_watch
    sign_in(page, server.http)
    pid = portfolio_id(server, token)
    before = api_get(server, token, f"/api/transactions/?portfolio_id={pid}")["count"]
    open_page(page, server.http, f"#/portfolio/{pid}")
    form = _add_form(page)
    form.get_by_label("Asset symbol").fill("AAPL")
    form.get_by_label("Quantity").fill("1.123456789")  # 9 decimals: the API allows 8
    form.get_by_label("Price").fill("10")
    form.get_by_role("button", name="Add").click()
    quantity = form.get_by_label("Quantity")
    error = form.locator("[data-field=quantity] .field-error")
    error.wait_for()
    page.wait_for_function(
        "() => document.querySelector('[data-field=quantity] .field-error').textContent !== ''"
    )
    # The message the API gives for the same body, next to the field, which is marked invalid.
    api = httpx.post(
        f"{server.http}/api/transactions/",
        headers={"Authorization": f"Token {token}"},
        json={
            "portfolio": pid,
            "asset_symbol": "AAPL",
            "transaction_type": "buy",
            "quantity": "1.123456789",
            "price": "10",
            "fees": "0",
            "transaction_date": dt.date.today().isoformat(),
        },
    )
    assert api.status_code == 400 and api.json()["details"]["field"] == "quantity"
    assert error.inner_text() == api.json()["message"]
    assert quantity.get_attribute("aria-invalid") == "true"
    assert quantity.evaluate("el => el === document.activeElement")
    assert api_get(server, token, f"/api/transactions/?portfolio_id={pid}")["count"] == before


def test_sign_out_ends_the_session(server: Server, page_and_watch: Any) -> None:
    page, _ = page_and_watch
    sign_in(page, server.http)
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    session = cookies["qc_session"]
    assert (
        httpx.get(f"{server.http}/api/auth/me/", cookies={"qc_session": session}).status_code == 200
    )
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("heading", name="Sign in").wait_for()
    assert "You are signed out." in page.locator("main").inner_text()
    assert (
        httpx.get(f"{server.http}/api/auth/me/", cookies={"qc_session": session}).status_code == 401
    )
    assert "qc_session" not in {c["name"] for c in page.context.cookies()}
    page.reload()
    page.get_by_role("heading", name="Sign in").wait_for()


def test_every_page_local_only_no_console_errors(
    server: Server, token: str, page_and_watch: Any
) -> None:
    page, watch = page_and_watch
    sign_in(page, server.http)
    pid = portfolio_id(server, token)
    missing = _missing_endpoints(server, token, pid)
    shots = os.environ.get("QC_WEB_SCREENSHOTS") == "1"
    for name, hash_ in PAGES.items():
        open_page(page, server.http, hash_.format(pid=pid))
        if shots:
            page.screenshot(path=str(SCREENSHOTS / f"web-{name}.png"), full_page=True)
    assert watch.foreign() == []
    assert any(u.startswith("ws://127.0.0.1:") for u in watch.requests), "the live WebSocket"
    assert _unexpected(watch, missing) == []


def _axe(page: Any, base: str) -> list[str]:
    # axe is served to the page from this server's origin (the page's CSP allows only 'self').
    url = f"{base}/static/web/__axe.min.js"
    page.route(url, lambda route: route.fulfill(path=str(AXE), content_type="text/javascript"))
    page.add_script_tag(url=url)
    found = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ['violations']});
            return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
              .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')}`);
        }"""
    )
    return list(found)


def test_every_page_at_360px_without_horizontal_scroll_and_axe(
    server: Server, token: str, browser: Any
) -> None:
    if not AXE.exists():
        skip_or_fail("axe-core is not installed: `npm ci` in tests/browser")
    ctx = browser.new_context(
        viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True
    )
    try:
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        pid = portfolio_id(server, token)
        # The sign-in page too.
        page.goto(f"{server.http}/")
        page.get_by_role("heading", name="Sign in").wait_for()
        problems: dict[str, Any] = {}
        pages = {"signin": None, **PAGES}
        for name, hash_ in pages.items():
            if hash_ is not None:
                if name == "dashboard":
                    sign_in(page, server.http)
                else:
                    open_page(page, server.http, hash_.format(pid=pid))
            width = page.evaluate(
                "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            if width[0] > width[1]:
                problems[f"{name}: horizontal scroll"] = width
            violations = _axe(page, server.http)
            if violations:
                problems[f"{name}: axe"] = violations
            if os.environ.get("QC_WEB_SCREENSHOTS") == "1" and name in (
                "signin",
                "dashboard",
                "portfolio",
            ):
                page.screenshot(
                    path=str(SCREENSHOTS / f"web-{name}-360.png"), full_page=name != "portfolio"
                )
        assert problems == {}
    finally:
        ctx.close()


def test_backtest_page_runs_a_quick_backtest_and_a_sweep(
    server: Server, page_and_watch: Any
) -> None:
    page, watch = page_and_watch
    sign_in(page, server.http)
    open_page(page, server.http, "#/backtest")
    form = page.get_by_role("form", name="Quick backtest")
    form.get_by_label("Start date").fill("2023-01-03")
    form.get_by_label("End date").fill("2024-12-31")
    form.get_by_role("button", name="Run backtest").click()
    page.get_by_role("region", name=re.compile(r"^Trades")).wait_for(timeout=120_000)
    assert (
        page.locator("section[aria-labelledby=h-quick] svg path").count() == 2
    )  # equity and benchmark
    # A bad parameter shows the API's error on that parameter's field.
    form.get_by_label("short window").fill("0")
    form.get_by_role("button", name="Run backtest").click()
    err = form.locator("[data-field='parameters.short_window'] .field-error")
    page.wait_for_function(
        "() => document.querySelector(\"[data-field='parameters.short_window'] .field-error\").textContent !== ''"
    )
    assert "short_window" in err.inner_text() or err.inner_text() != ""
    form.get_by_label("short window").fill("10")
    sweep = page.get_by_role("form", name="Parameter sweep")
    sweep.get_by_label("Row values (comma separated)").fill("5,10")
    sweep.get_by_label("Column values (comma separated)").fill("30,60")
    sweep.get_by_role("button", name="Run sweep").click()
    heat = page.get_by_role(
        "region", name=re.compile(r"^Total return \(%\) by short_window and long_window")
    )
    heat.wait_for(timeout=180_000)
    cells = heat.locator("tbody td").all_inner_texts()
    assert len(cells) == 4 and all(re.match(r"^-?\d+\.\d$", c) for c in cells), cells
    if os.environ.get("QC_WEB_SCREENSHOTS") == "1":
        page.screenshot(path=str(SCREENSHOTS / "web-backtest.png"), full_page=True)
    assert watch.foreign() == []
    # Only the refused parameter's 400 in the console: no script error.
    assert [
        e for e in watch.errors if "status of 400" not in e and "/api/analytics/" not in e
    ] == []
