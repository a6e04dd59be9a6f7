// Backtest: quick-backtest form, equity against the benchmark, trades, and a heatmap of a
// two-parameter sweep (each cell is one quick backtest through the API).
import { get, post, qs } from "../api.js";
import { h, append, num, frac, figures, table, field, load, clearErrors, showError, values, message, explain } from "../ui.js";
import { lineChart, heatmap } from "../charts.js";

const iso = (d) => d.toISOString().slice(0, 10);
const MAX_CELLS = 25;

export async function render(main) {
  document.title = "Backtest · quantcore";
  const types = await get("/api/backtesting/strategy-types/");
  const byType = Object.fromEntries(types.map((t) => [t.strategy_type, t]));
  const end = new Date(); const start = new Date(end); start.setUTCFullYear(end.getUTCFullYear() - 3);
  const first = byType.moving_average ? "moving_average" : types[0].strategy_type;
  const params = h("div", { class: "grid" });
  const form = h("form", { class: "stack", novalidate: true, "aria-label": "Quick backtest" },
    field("Strategy", "strategy_type", { options: types.map((t) => [t.strategy_type, t.strategy_type.replace(/_/g, " ")]), value: first }),
    field("Symbols (comma separated)", "asset_symbols", { value: "SPY" }),
    field("Start date", "start_date", { type: "date", value: iso(start) }),
    field("End date", "end_date", { type: "date", value: iso(end) }),
    field("Initial capital", "initial_capital", { value: "100000", inputmode: "decimal" }),
    field("Benchmark", "benchmark_symbol", { value: "SPY" }),
    params,
    h("div", {}, h("button", { type: "submit" }, "Run backtest")));
  const typeSelect = form.querySelector("select[name=strategy_type]");
  const syncParams = () => {
    const t = byType[typeSelect.value];
    params.replaceChildren(...Object.entries(t.parameters)
      .filter(([, v]) => v === null || ["number", "string", "boolean"].includes(typeof v))
      .map(([k, v]) => field(k.replace(/_/g, " "), `parameters.${k}`, { value: v === null ? "" : String(v) })));
    sweepSync();
  };
  const result = h("div");
  form.addEventListener("submit", async (e) => {
    e.preventDefault(); clearErrors(form);
    let body;
    try { body = request(form, byType); } catch (err) { showError(form, err); return; }
    const button = form.querySelector("button[type=submit]"); button.disabled = true;
    try {
      const run = await post("/api/backtesting/quick-backtest/", body);
      await load(result, () => resultView(run, body));
    } catch (err) { showError(form, err); } finally { button.disabled = false; }
  });
  const sweepForm = h("form", { class: "stack", novalidate: true, "aria-label": "Parameter sweep" });
  const sweepOut = h("div");
  function sweepSync() {
    const t = byType[typeSelect.value];
    const numeric = Object.entries(t.parameters).filter(([, v]) => typeof v === "number").map(([k]) => k);
    const opts = numeric.map((k) => [k, k.replace(/_/g, " ")]);
    const guess = (k, v) => (k === "short_window" ? "5,10,20,30" : k === "long_window" ? "50,100,150,200" : [0.5, 1, 1.5, 2].map((m) => +(v * m).toFixed(4)).join(","));
    sweepForm.replaceChildren(...(numeric.length < 2 ? [message("info", "This strategy has fewer than two numeric parameters to sweep.")] : [
      h("div", { class: "grid" },
        field("Rows: parameter", "row_param", { options: opts, value: numeric[0] }),
        field("Row values (comma separated)", "row_values", { value: guess(numeric[0], t.parameters[numeric[0]]) }),
        field("Columns: parameter", "col_param", { options: opts, value: numeric[1] }),
        field("Column values (comma separated)", "col_values", { value: guess(numeric[1], t.parameters[numeric[1]]) })),
      h("p", { class: "muted" }, `Each cell is one quick backtest with the form's symbols and dates (at most ${MAX_CELLS} cells); each is stored like any backtest.`),
      h("div", {}, h("button", { type: "submit" }, "Run sweep"))]));
  }
  sweepForm.addEventListener("submit", async (e) => {
    e.preventDefault(); clearErrors(sweepForm); clearErrors(form);
    const v = values(sweepForm);
    const list = (s) => (s || "").split(",").map((x) => x.trim()).filter(Boolean).map(Number);
    const rows = list(v.row_values); const cols = list(v.col_values);
    if (v.row_param === v.col_param) return showError(sweepForm, { field: "col_param", message: "Pick two different parameters." });
    if (!rows.length || rows.some(Number.isNaN)) return showError(sweepForm, { field: "row_values", message: "Numbers separated by commas." });
    if (!cols.length || cols.some(Number.isNaN)) return showError(sweepForm, { field: "col_values", message: "Numbers separated by commas." });
    if (rows.length * cols.length > MAX_CELLS) return showError(sweepForm, { field: "col_values", message: `At most ${MAX_CELLS} cells (rows × columns).` });
    let base;
    try { base = request(form, byType); } catch (err) { showError(form, err); return; }
    const button = sweepForm.querySelector("button"); button.disabled = true;
    const got = new Map(); let done = 0; const problems = [];
    const progress = h("p", { role: "status" }, "");
    sweepOut.replaceChildren(progress);
    for (const r of rows) for (const c of cols) {
      progress.textContent = `Running ${++done} of ${rows.length * cols.length}…`;
      const body = { ...base, name: `sweep ${v.row_param}=${r} ${v.col_param}=${c}`,
        parameters: { ...base.parameters, [v.row_param]: r, [v.col_param]: c } };
      try {
        const run = await post("/api/backtesting/quick-backtest/", body);
        got.set(`${r}|${c}`, run.result && run.result.total_return !== null ? Number(run.result.total_return) * 100 : null);
      } catch (err) {
        got.set(`${r}|${c}`, null);
        problems.push(`${v.row_param}=${r}, ${v.col_param}=${c}: ${explain(err)}`);
        if (err.status === 429) break;
      }
    }
    button.disabled = false;
    progress.textContent = `Done: ${got.size} backtest(s).`;
    append(sweepOut, [heatmap(`Total return (%) by ${v.row_param} and ${v.col_param}`, v.row_param, v.col_param,
      rows, cols, (r, c) => (got.has(`${r}|${c}`) ? got.get(`${r}|${c}`) : null), (x) => `${x.toFixed(1)}`),
    problems.length ? h("ul", {}, problems.map((p) => h("li", {}, p))) : null]);
  });
  typeSelect.addEventListener("change", syncParams);
  syncParams();
  main.replaceChildren(h("h1", {}, "Backtest"),
    h("section", { class: "card", "aria-labelledby": "h-quick" }, h("h2", { id: "h-quick" }, "Quick backtest"), form, result),
    h("section", { class: "card", "aria-labelledby": "h-sweep" }, h("h2", { id: "h-sweep" }, "Two-parameter sweep"), sweepForm, sweepOut));
}

// The quick-backtest body from the form (the API checks every value; we only shape it).
function request(form, byType) {
  const v = values(form);
  const t = byType[v.strategy_type];
  const parameters = {};
  for (const [k, d] of Object.entries(t.parameters)) {
    const raw = v[`parameters.${k}`];
    if (raw === undefined) continue;
    parameters[k] = typeof d === "number" && raw !== "" && !Number.isNaN(Number(raw)) ? Number(raw) : raw;
  }
  const body = { strategy_type: v.strategy_type, start_date: v.start_date, end_date: v.end_date,
    asset_symbols: (v.asset_symbols || "").split(",").map((x) => x.trim().toUpperCase()).filter(Boolean),
    initial_capital: v.initial_capital, parameters };
  if (v.benchmark_symbol) body.benchmark_symbol = v.benchmark_symbol.toUpperCase();
  return body;
}

async function resultView(run, body) {
  if (run.status !== "completed") return message("error", `The backtest ${run.status}: ${run.error || "no result"}.`);
  const bt = await get(`/api/backtesting/backtests/${run.backtest_id}/`);
  const m = run.result;
  const eq = bt.equity_curve;
  let bench = [];
  try {
    const found = (await get(`/api/assets/${qs({ symbol: bt.benchmark_symbol })}`)).results[0];
    if (found) {
      const hist = (await get(`/api/assets/${found.id}/price-history/?days=5000`)).data;
      const close = new Map(hist.map((b) => [b.date, Number(b.close)]));
      const first = eq.map((p) => close.get(p.date)).find((x) => x !== undefined);
      const cap = eq.length ? Number(eq[0].equity) : 0;
      bench = eq.map((p) => (close.has(p.date) && first ? (close.get(p.date) / first) * cap : null));
    }
  } catch { bench = []; }
  return [
    figures([
      ["Total return", frac(m.total_return)], ["Annualized", frac(m.annualized_return)], ["Sharpe", num(m.sharpe_ratio)],
      ["Max drawdown", frac(m.max_drawdown)], ["Win rate", frac(m.win_rate)], ["Trades", String(m.total_trades)],
      ["Benchmark return", frac(m.benchmark_return)], ["Final value", num(m.final_value)],
    ]),
    lineChart({ label: `Equity of ${body.asset_symbols.join(", ")} against ${bt.benchmark_symbol} (same capital)`,
      x: eq.map((p) => p.date),
      series: [{ name: "Strategy", values: eq.map((p) => Number(p.equity)) },
        ...(bench.length ? [{ name: bt.benchmark_symbol, values: bench, dash: "5 3" }] : [])] }),
    table(`Trades (${bt.trades.length})`, [
      { label: "Symbol", cell: (t) => t.symbol }, { label: "Direction", cell: (t) => t.direction },
      { label: "Entry", cell: (t) => t.entry_date }, { label: "Exit", cell: (t) => t.exit_date || "open" },
      { label: "Size", num: true, cell: (t) => num(t.size) }, { label: "Entry price", num: true, cell: (t) => num(t.entry_price) },
      { label: "Exit price", num: true, cell: (t) => num(t.exit_price) }, { label: "P&L", num: true, cell: (t) => num(t.pnl) },
      { label: "Return", num: true, cell: (t) => frac(t.return) },
    ], bt.trades, { empty: "No trade." }),
  ];
}
