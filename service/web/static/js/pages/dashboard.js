// Dashboard: every portfolio with its value, daily change and cash; the account overview.
import { all, get, post, qs } from "../api.js";
import { h, fill, money, pct, frac, signed, signClass, table, figures, tabs, load, message, field, clearErrors, showError, values, num } from "../ui.js";
import { lineChart, bars } from "../charts.js";
import { live } from "../live.js";

export const PERIODS = [["1m", "1M"], ["3m", "3M"], ["6m", "6M"], ["ytd", "YTD"], ["1y", "1Y"], ["2y", "2Y"], ["3y", "3Y"], ["5y", "5Y"], ["max", "Max"]];

export async function render(main) {
  document.title = "Dashboard · quantcore";
  const list = h("div"); const overview = h("div");
  main.replaceChildren(h("h1", {}, "Dashboard"),
    h("section", { class: "card", "aria-labelledby": "h-pf" }, h("h2", { id: "h-pf" }, "Portfolios"), list),
    h("section", { class: "card", "aria-labelledby": "h-acct" }, h("h2", { id: "h-acct" }, "Account"), overview),
    h("section", { class: "card", "aria-labelledby": "h-new" }, h("h2", { id: "h-new" }, "New portfolio"), createForm()));
  await load(list, async () => {
    const rows = await all("/api/portfolios/?ordering=name");
    live.portfolios(rows.map((p) => p.id));
    const cur = (p) => p.base_currency;
    const liveCell = (p, key, text) => h("span", { dataset: { livePf: p.id, key } }, text);
    return table("Your portfolios", [
      { label: "Portfolio", cell: (p) => h("a", { href: `#/portfolio/${p.id}` }, p.name) },
      { label: "Total value", num: true, cell: (p) => liveCell(p, "total_value", num(p.total_value)) },
      { label: "Daily change", num: true, cell: (p) => h("span", { class: signClass(p.daily_change) }, liveCell(p, "daily_change", num(p.daily_change))) },
      { label: "Daily %", num: true, cell: (p) => h("span", { class: signClass(p.daily_change) }, liveCell(p, "daily_change_percent", pct(p.daily_change_percent))) },
      { label: "Cash", num: true, cell: (p) => num(p.cash_balance) },
      { label: "Currency", cell: cur },
      { label: "Positions", num: true, cell: (p) => String(p.position_count) },
    ], rows, { empty: "No portfolio yet: create one below." });
  });
  const chart = h("div");
  overview.replaceChildren(tabs("Period", PERIODS, "1y", (p) => showOverview(chart, p)), chart);
  await showOverview(chart, "1y");
}

async function showOverview(slot, period) {
  slot.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  let o;
  try {
    o = await get(`/api/analytics/overview/${qs({ period, currency: "USD" })}`);
  } catch (err) {
    const text = err.status === 404
      ? "The account overview is not available on this server (GET /api/analytics/overview/). The portfolios above are the figures the server has."
      : err.message;
    slot.replaceChildren(message(err.status === 404 ? "info" : "error", text));
    return;
  }
  const series = (o.performance && (o.performance.series || o.performance)) || [];
  const pts = Array.isArray(series) ? series : [];
  fill(slot,
    figures([
      ["Total value", money(o.total_value, o.currency)],
      ["Daily change", signed(o.daily_change)],
      ["Daily %", signed(o.daily_change_percent, pct)],
      ["Cash", money(o.cash_balance, o.currency)],
      ["Portfolios", String(o.portfolio_count)],
      ["Return", frac(o.metrics && o.metrics.total_return)],
    ]),
    lineChart({
      label: `Account value (${o.currency}), ${period}`,
      x: pts.map((p) => p.date),
      series: [{ name: "Value", values: pts.map((p) => (p.value === null || p.value === undefined ? null : Number(p.value))) }],
    }),
    o.allocation && o.allocation.allocations
      ? h("div", {}, h("h3", {}, "Allocation"), bars("Allocation by asset",
        o.allocation.allocations.map((a) => [a.asset_symbol, Number(a.weight || 0), frac(a.weight)])))
      : null,
  );
}

function createForm() {
  const form = h("form", { class: "inline", novalidate: true },
    field("Name", "name", { required: true }),
    field("Base currency", "base_currency", { options: [["USD", "USD"], ["EUR", "EUR"], ["GBP", "GBP"], ["JPY", "JPY"]], value: "USD" }),
    field("Benchmark", "benchmark_symbol", { value: "SPY" }),
    h("div", {}, h("button", { type: "submit" }, "Create")));
  form.addEventListener("submit", async (e) => {
    e.preventDefault(); clearErrors(form);
    try {
      const p = await post("/api/portfolios/", values(form));
      location.hash = `#/portfolio/${p.id}`;
    } catch (err) { showError(form, err); }
  });
  return form;
}
