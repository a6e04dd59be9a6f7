// Portfolio: positions, performance vs benchmark, allocation, metrics and risk, income,
// and (transactions.js) the ledger with add / edit / delete and the statement import.
import { get, qs } from "../api.js";
import { h, fill, num, money, pct, frac, signed, signClass, table, figures, tabs, load, message } from "../ui.js";
import { lineChart, bars } from "../charts.js";
import { live } from "../live.js";
import { PERIODS } from "./dashboard.js";
import { transactionsSection, importSection } from "./transactions.js";

export async function render(main, id) {
  let p;
  try { p = await get(`/api/portfolios/${id}/`); } catch (err) {
    main.replaceChildren(h("h1", {}, "Portfolio"), message("error", err.status === 404 ? "No such portfolio." : err.message));
    return;
  }
  document.title = `${p.name} · quantcore`;
  const cur = p.base_currency;
  const refresh = () => render(main, id);
  const sec = (key, title, ...body) => h("section", { class: "card", "aria-labelledby": `h-${key}` }, h("h2", { id: `h-${key}` }, title), ...body);
  const positions = h("div"); const perf = h("div"); const alloc = h("div"); const metrics = h("div");
  const risk = h("div"); const income = h("div");
  fill(main,
    h("p", {}, h("a", { href: "#/" }, "← Dashboard")),
    h("h1", {}, p.name),
    p.description ? h("p", { class: "muted" }, p.description) : null,
    figures([
      ["Total value", h("span", { dataset: { livePf: p.id, key: "total_value" } }, num(p.total_value)), {}],
      ["Daily change", h("span", { class: signClass(p.daily_change), dataset: { livePf: p.id, key: "daily_change" } }, num(p.daily_change))],
      ["Daily %", h("span", { class: signClass(p.daily_change), dataset: { livePf: p.id, key: "daily_change_percent" } }, pct(p.daily_change_percent))],
      ["Cash", money(p.cash_balance, cur)],
      ["Currency", cur],
      ["Benchmark", p.benchmark_symbol],
    ]),
    sec("pos", "Positions", positions),
    sec("perf", "Performance", tabs("Period", PERIODS, "1y", (period) => showPerf(perf, id, period, p)), perf),
    h("div", { class: "grid" }, sec("alloc", "Allocation", alloc), sec("metrics", "Metrics", metrics)),
    h("div", { class: "grid" }, sec("risk", "Risk", risk), sec("income", "Income by month", income)),
    sec("tx", "Transactions", transactionsSection(p, refresh)),
    sec("imp", "Import a broker statement", importSection(p, refresh)),
  );
  live.portfolios([p.id]);
  await Promise.all([
    load(positions, async () => {
      const rows = (await get(`/api/portfolios/${id}/positions/?limit=100`)).results;
      live.assets(rows.map((r) => r.asset.symbol));
      return table("Open positions", [
        { label: "Asset", cell: (r) => h("a", { href: `#/asset/${encodeURIComponent(r.asset.symbol)}` }, r.asset.symbol) },
        { label: "Quantity", num: true, cell: (r) => num(r.quantity) },
        { label: "Avg cost", num: true, cell: (r) => num(r.average_cost) },
        { label: "Price", num: true, cell: (r) => h("span", { dataset: { livePrice: r.asset.symbol } }, num(r.asset.current_price)) },
        { label: `Value (${cur})`, num: true, cell: (r) => num(r.current_value) },
        { label: "Gain", num: true, cell: (r) => signed(r.unrealized_gain_loss) },
        { label: "Gain %", num: true, cell: (r) => signed(r.unrealized_gain_loss_percent, pct) },
        { label: "Currency", cell: (r) => r.currency },
      ], rows, { empty: "No open position." });
    }),
    showPerf(perf, id, "1y", p),
    load(alloc, async () => {
      const a = await get(`/api/analytics/portfolio/${id}/allocation/`);
      const w = (x) => Number(x || 0);
      return [
        h("h3", {}, "By asset"),
        bars("Allocation by asset", a.allocations.map((x) => [x.asset_symbol, w(x.weight), frac(x.weight)])),
        h("h3", {}, "By sector"),
        bars("Allocation by sector", Object.entries(a.by_sector).map(([k, v]) => [k, w(v), frac(v)])),
      ];
    }),
    load(metrics, async () => {
      const m = await get(`/api/analytics/portfolio/${id}/metrics/?period=1y`);
      return [h("p", { class: "muted" }, `Over ${m.period} (${m.start_date || "—"} to ${m.end_date || "—"}), against ${m.benchmark}.`),
        figures([
          ["Total return", frac(m.total_return)], ["Annualized", frac(m.annualized_return)],
          ["Money-weighted", frac(m.money_weighted_return)], ["Volatility", frac(m.volatility)],
          ["Sharpe", num(m.sharpe_ratio)], ["Max drawdown", frac(m.max_drawdown)],
          ["Alpha", num(m.alpha)], ["Beta", num(m.beta)], ["Benchmark return", frac(m.benchmark_return)],
        ])];
    }),
    load(risk, async () => {
      const r = await get(`/api/analytics/portfolio/${id}/risk/`);
      return [figures([
        ["VaR 95 %", frac(r.var_95)], ["VaR amount", money(r.var_95_amount, cur)],
        ["Expected shortfall", frac(r.expected_shortfall)], ["ES amount", money(r.expected_shortfall_amount, cur)],
        ["Volatility", frac(r.volatility)], ["Beta", num(r.beta)], ["Correlation SPY", num(r.correlation_spy)],
        ["Herfindahl", num(r.herfindahl_index)],
      ]), h("p", { class: "muted" }, `${r.method}, ${r.observations} daily returns, horizon ${r.horizon_days} day(s).`)];
    }),
    showIncome(income, id, cur),
  ]);
}

async function showPerf(slot, id, period, p) {
  await load(slot, async () => {
    const r = await get(`/api/analytics/portfolio/${id}/performance/${qs({ period })}`);
    const n = (v) => (v === null || v === undefined ? null : Number(v) * 100);
    return [
      lineChart({
        label: `Cumulative return (%), ${r.period}, against ${r.benchmark}`,
        x: r.series.map((s) => s.date),
        series: [
          { name: p.name, values: r.series.map((s) => n(s.cumulative_return)) },
          { name: r.benchmark, values: r.series.map((s) => n(s.benchmark_cumulative_return)), dash: "5 3" },
        ],
        fmt: (v) => `${v.toFixed(2)} %`,
      }),
      lineChart({
        label: `Value (${p.base_currency})`,
        x: r.series.map((s) => s.date),
        series: [{ name: "Value", values: r.series.map((s) => (s.value === null ? null : Number(s.value))) }],
        height: 160,
      }),
    ];
  });
}

async function showIncome(slot, id, cur) {
  await load(slot, async () => {
    let r;
    try { r = await get(`/api/analytics/portfolio/${id}/income/?group_by=month&period=1y`); } catch (err) {
      if (err.status === 404) return message("info", "Income by month is not available on this server (GET /api/analytics/portfolio/{id}/income/).");
      throw err;
    }
    return [
      bars("Income by month", r.periods.map((x) => [x.period, Number(x.total), money(x.total, cur)])),
      h("p", {}, `Total: ${money(r.total, cur)}`),
      r.by_symbol && r.by_symbol.length ? table("Dividends by asset", [
        { label: "Asset", cell: (x) => x.asset_symbol },
        { label: `Dividends (${cur})`, num: true, cell: (x) => num(x.dividends) },
      ], r.by_symbol) : null,
    ];
  });
}
