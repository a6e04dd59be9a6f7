// Asset: price chart at 1d / 1h / 5m and the technical indicators the API computes (daily bars).
import { all, get, qs } from "../api.js";
import { h, num, pct, signed, figures, tabs, load, message, field } from "../ui.js";
import { lineChart } from "../charts.js";
import { live } from "../live.js";

const INTERVALS = [["1d", "Daily"], ["1h", "Hourly"], ["5m", "5 min"]];
const DAYS = { "1d": 252, "1h": 30, "5m": 5 };
const INDICATORS = [["sma_20", "SMA 20"], ["ema_50", "EMA 50"], ["bollinger_20_2", "Bollinger 20/2"], ["rsi", "RSI"], ["macd", "MACD"]];

export async function render(main, symbol) {
  document.title = "Assets · quantcore";
  const assets = await all("/api/assets/", 500);
  assets.sort((a, b) => a.symbol.localeCompare(b.symbol));
  const sym = symbol ? decodeURIComponent(symbol) : "SPY";
  const a = assets.find((x) => x.symbol === sym) || assets[0];
  const chooser = field("Asset", "asset", { options: assets.map((x) => [x.symbol, `${x.symbol} · ${x.name}`]), value: a ? a.symbol : "" });
  chooser.querySelector("select").addEventListener("change", (e) => { location.hash = `#/asset/${encodeURIComponent(e.target.value)}`; });
  if (!a) { main.replaceChildren(h("h1", {}, "Assets"), message("info", "No asset.")); return; }
  const price = h("div"); const tech = h("div");
  const picked = new Set(["sma_20", "rsi"]);
  const boxes = h("fieldset", { class: "tabs" }, h("legend", {}, "Indicators (daily bars)"),
    INDICATORS.map(([k, label]) => {
      const f = field(label, k, { type: "checkbox", checked: picked.has(k) });
      f.querySelector("input").addEventListener("change", (e) => { if (e.target.checked) picked.add(k); else picked.delete(k); showTech(tech, a, picked); });
      return f;
    }));
  main.replaceChildren(h("h1", {}, `${a.symbol} · ${a.name}`), chooser,
    figures([
      ["Price", h("span", { dataset: { livePrice: a.symbol } }, num(a.current_price))],
      ["Change", signed(a.price_change)], ["Change %", signed(a.price_change_percent, pct)],
      ["Type", a.asset_type], ["Sector", a.sector || "—"], ["Currency", a.currency || "—"],
    ]),
    h("section", { class: "card", "aria-labelledby": "h-price" }, h("h2", { id: "h-price" }, "Price"),
      tabs("Interval", INTERVALS, "1d", (iv) => showPrice(price, a, iv)), price),
    h("section", { class: "card", "aria-labelledby": "h-tech" }, h("h2", { id: "h-tech" }, "Technical indicators"), boxes, tech));
  live.assets([a.symbol]);
  await Promise.all([showPrice(price, a, "1d"), showTech(tech, a, picked)]);
}

async function showPrice(slot, a, interval) {
  await load(slot, async () => {
    const r = await get(`/api/assets/${a.id}/price-history/${qs({ interval, days: DAYS[interval] })}`);
    const x = r.data.map((b) => (interval === "1d" ? b.date : String(b.date).replace("T", " ").slice(0, 16)));
    return lineChart({ label: `${a.symbol} close, ${interval}`, x, series: [{ name: "Close", values: r.data.map((b) => Number(b.close)) }] });
  });
}

async function showTech(slot, a, picked) {
  await load(slot, async () => {
    const r = await get(`/api/analytics/assets/${a.id}/technical/${qs({ indicators: [...picked], period: 252 })}`);
    const n = (arr) => arr.map((v) => (v === null ? null : Number(v)));
    const keys = Object.keys(r.indicators);
    const osc = (k) => k.startsWith("rsi") || k.startsWith("macd");
    const overlay = keys.filter((k) => !osc(k));
    const out = [lineChart({ label: `${r.symbol} close with overlays (daily)`, x: r.dates,
      series: [{ name: "Close", values: n(r.close) }, ...overlay.map((k) => ({ name: k, values: n(r.indicators[k]), dash: "4 3" }))] })];
    const rsi = keys.filter((k) => k.startsWith("rsi"));
    if (rsi.length) out.push(lineChart({ label: "RSI", x: r.dates, height: 140, series: rsi.map((k) => ({ name: k, values: n(r.indicators[k]) })) }));
    const macd = keys.filter((k) => k.startsWith("macd"));
    if (macd.length) out.push(lineChart({ label: "MACD", x: r.dates, height: 140, series: macd.map((k) => ({ name: k, values: n(r.indicators[k]) })) }));
    return out;
  });
}
