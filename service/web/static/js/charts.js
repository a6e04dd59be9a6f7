// Our own small SVG charts (no third-party code): a line chart with a hover / keyboard
// readout, horizontal bars and a heatmap table. Values come as the API's decimal text.
import { h, num } from "./ui.js";

const NS = "http://www.w3.org/2000/svg";
const s = (tag, attrs = {}) => {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
};
export const COLORS = ["#0b5cad", "#8a4b08", "#116329", "#8250df", "#b3261e", "#1b7c83"];

// "Nice" ticks covering [lo, hi]: the first at or below lo, the last at or above hi.
function ticks(lo, hi, n = 4) {
  if (lo === hi) { lo -= 1; hi += 1; }
  const step0 = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((m) => m >= step0);
  const out = [];
  const last = Math.ceil(hi / step - 1e-9) * step;
  for (let v = Math.floor(lo / step + 1e-9) * step; v <= last + step / 2; v += step) out.push(+v.toFixed(10));
  return out;
}

function width() {
  const main = document.getElementById("main");
  return Math.max(280, Math.min(960, (main ? main.clientWidth : 640) - 48));
}

/**
 * lineChart({label, x: [labels], series: [{name, values: [number|null], color?}], fmt?, height?})
 * A figure whose SVG is focusable: arrow keys (Home/End) move the readout, as the pointer does.
 */
const axisText = (v) => num(String(+v.toFixed(Math.abs(v) >= 100 ? 0 : 2)));

export function lineChart({ label, x, series, fmt = (v) => num(v.toFixed(2)), axis = axisText, height = 220 }) {
  const W = width(); const H = height;
  const m = { l: 40, r: 10, t: 10, b: 24 };
  const all = series.flatMap((sr) => sr.values).filter((v) => v !== null && Number.isFinite(v));
  const fig = h("figure", { class: "chart" });
  if (!x.length || !all.length) {
    fig.append(h("p", { class: "muted" }, `${label}: no data for this period.`));
    return fig;
  }
  let lo = Math.min(...all); let hi = Math.max(...all);
  const yt = ticks(lo, hi); lo = Math.min(lo, yt[0]); hi = Math.max(hi, yt[yt.length - 1]);
  if (lo === hi) { lo -= 1; hi += 1; }
  m.l = Math.max(m.l, 12 + 7 * Math.max(...yt.map((t) => axis(t).length)));
  const X = (i) => m.l + (x.length === 1 ? 0 : (i / (x.length - 1)) * (W - m.l - m.r));
  const Y = (v) => m.t + (1 - (v - lo) / (hi - lo)) * (H - m.t - m.b);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, tabindex: "0", role: "img",
    "aria-label": `${label}. ${series.map((sr) => sr.name).join(" and ")}, ${x[0]} to ${x[x.length - 1]}. Use the arrow keys to read values.` });
  for (const t of yt) {
    svg.append(s("line", { class: "grid-line", x1: m.l, x2: W - m.r, y1: Y(t), y2: Y(t) }));
    const tx = s("text", { class: "axis", x: m.l - 6, y: Y(t) + 4, "text-anchor": "end" });
    tx.textContent = axis(t); svg.append(tx);
  }
  const nx = Math.max(2, Math.min(6, Math.floor(W / 120)));
  for (let k = 0; k < nx; k++) {
    const i = Math.round((k / (nx - 1)) * (x.length - 1));
    const tx = s("text", { class: "axis", x: X(i), y: H - 6,
      "text-anchor": k === 0 ? "start" : k === nx - 1 ? "end" : "middle" });
    tx.textContent = String(x[i]).slice(0, 16); svg.append(tx);
  }
  series.forEach((sr, j) => {
    sr.color = sr.color || COLORS[j % COLORS.length];
    let d = ""; let pen = false;
    sr.values.forEach((v, i) => {
      if (v === null || !Number.isFinite(v)) { pen = false; return; }
      d += `${pen ? "L" : "M"}${X(i).toFixed(1)},${Y(v).toFixed(1)}`; pen = true;
    });
    svg.append(s("path", { d, fill: "none", stroke: sr.color, "stroke-width": 2, "stroke-dasharray": sr.dash || "" }));
  });
  const cursor = s("line", { class: "cursor", y1: m.t, y2: H - m.b, visibility: "hidden" });
  const dots = series.map((sr) => s("circle", { r: 4, fill: sr.color, visibility: "hidden" }));
  svg.append(cursor, ...dots);
  const readout = h("figcaption", { "aria-live": "polite" }, label);
  let at = -1;
  const show = (i) => {
    at = Math.max(0, Math.min(x.length - 1, i));
    cursor.setAttribute("x1", X(at)); cursor.setAttribute("x2", X(at)); cursor.setAttribute("visibility", "visible");
    const parts = series.map((sr, j) => {
      const v = sr.values[at];
      const ok = v !== null && Number.isFinite(v);
      dots[j].setAttribute("visibility", ok ? "visible" : "hidden");
      if (ok) { dots[j].setAttribute("cx", X(at)); dots[j].setAttribute("cy", Y(v)); }
      return `${sr.name} ${ok ? fmt(v) : "—"}`;
    });
    readout.textContent = `${x[at]}: ${parts.join(", ")}`;
  };
  svg.addEventListener("pointermove", (e) => {
    const r = svg.getBoundingClientRect();
    const px = ((e.clientX - r.left) / r.width) * W;
    show(Math.round(((px - m.l) / (W - m.l - m.r)) * (x.length - 1)));
  });
  svg.addEventListener("keydown", (e) => {
    const step = { ArrowRight: 1, ArrowLeft: -1, PageUp: 10, PageDown: -10 }[e.key];
    if (step) show((at < 0 ? x.length - 1 : at) + step);
    else if (e.key === "Home") show(0);
    else if (e.key === "End") show(x.length - 1);
    else return;
    e.preventDefault();
  });
  svg.addEventListener("focus", () => { if (at < 0) show(x.length - 1); });
  const legend = h("div", { class: "legend", "aria-hidden": "true" },
    series.map((sr) => h("span", {}, h("i", { style: `background:${sr.color}` }), sr.name)));
  fig.append(legend, svg, readout);
  return fig;
}

// Horizontal bars: [[label, weight 0..1 (or value), text]], accessible as plain text.
export function bars(label, items) {
  const max = Math.max(...items.map((i) => Math.abs(i[1])), 1e-12);
  return h("div", { class: "bars", role: "list", "aria-label": label },
    items.map(([name, v, text]) => h("div", { class: "bar", role: "listitem" },
      h("span", { title: name }, name),
      h("span", { class: "track", "aria-hidden": "true" },
        h("span", { class: "fill", style: `display:block;width:${(Math.abs(v) / max) * 100}%;${v < 0 ? "background:#b3261e" : ""}` })),
      h("span", { class: "num" }, text))));
}

// A heatmap as a table: rows × columns of numbers, colored blue (low) to green (high).
export function heatmap(caption, rowName, colName, rows, cols, cell, fmt) {
  const vals = rows.flatMap((r) => cols.map((c) => cell(r, c))).filter((v) => v !== null && Number.isFinite(v));
  const lo = Math.min(...vals); const hi = Math.max(...vals);
  const color = (v) => {
    const t = hi === lo ? 0.5 : (v - lo) / (hi - lo);
    const a = [178, 34, 52]; const b = [17, 99, 41];
    return `rgb(${a.map((x, i) => Math.round(x + (b[i] - x) * t)).join(",")})`;
  };
  return h("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": caption },
    h("table", { class: "heatmap" }, h("caption", {}, caption),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, `${rowName} \\ ${colName}`),
        cols.map((c) => h("th", { scope: "col" }, String(c))))),
      h("tbody", {}, rows.map((r) => h("tr", {}, h("th", { scope: "row" }, String(r)),
        cols.map((c) => {
          const v = cell(r, c);
          const ok = v !== null && Number.isFinite(v);
          return h("td", { style: ok ? `background:${color(v)}` : "", class: ok ? "" : "light",
            title: `${rowName} ${r}, ${colName} ${c}` }, ok ? fmt(v) : "—");
        }))))));
}
