// Small DOM helpers: elements, numbers as the API sends them, messages, form errors.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "style") el.style.cssText = v; // CSSOM: allowed under the page's CSP, unlike a style attribute
    else if (k === "text") el.textContent = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  append(el, children);
  return el;
}

// Replace an element's children (null / false children are skipped, as in h()).
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// "12345.6" -> "12,345.6": the API's decimal text, grouped, never re-rounded.
export function num(s) {
  if (s === null || s === undefined || s === "") return "—";
  const [i, f] = String(s).split(".");
  return i.replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (f !== undefined ? `.${f}` : "");
}
export const money = (s, cur) => (s === null || s === undefined ? "—" : `${num(s)}${cur ? ` ${cur}` : ""}`);
export const pct = (s) => (s === null || s === undefined ? "—" : `${num(s)} %`);
// Fractions (0.0123) as percent text with 2 digits, for ratios the API gives as fractions.
export const frac = (s) => (s === null || s === undefined ? "—" : `${(Number(s) * 100).toFixed(2)} %`);
export function signClass(s) {
  const x = Number(s);
  return !s || Number.isNaN(x) || x === 0 ? "" : x > 0 ? "up" : "down";
}
export const signed = (s, fmt = num) => h("span", { class: signClass(s) }, s && Number(s) > 0 ? "+" : "", fmt(s));

export function figures(items) {
  return h("dl", { class: "figures" },
    items.map(([label, value, attrs]) => h("div", {}, h("dt", {}, label), h("dd", attrs || {}, value))));
}

export function message(kind, text) {
  return h("p", { class: `message ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

export function explain(err) {
  if (err && err.status === 429) {
    const wait = err.retryAfter ? ` Try again in ${err.retryAfter} s.` : "";
    return `Too many requests: the rate limit is reached.${wait}`;
  }
  if (err && err.status === 404) return "Not found (or not available on this server).";
  return (err && err.message) || String(err);
}

export function table(caption, columns, rows, { empty = "Nothing yet." } = {}) {
  const thead = h("thead", {}, h("tr", {}, columns.map((c) =>
    h("th", { scope: "col", class: c.num ? "num" : "" }, c.label))));
  const tbody = h("tbody", {}, rows.length ? rows.map((r) => h("tr", {}, columns.map((c, i) => {
    const v = c.cell(r);
    return i === 0 && !c.plain ? h("th", { scope: "row" }, v) : h("td", { class: c.num ? "num" : c.wrap ? "wrap" : "" }, v);
  }))) : h("tr", {}, h("td", { colspan: columns.length, class: "muted" }, empty)));
  return h("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": caption },
    h("table", {}, h("caption", {}, caption), thead, tbody));
}

let uid = 0;
// A labelled field with its error slot; `name` is the API field name.
export function field(label, name, attrs = {}) {
  const id = `f${++uid}`;
  const errId = `${id}-err`;
  let control;
  if (attrs.options) {
    const { options, value, ...rest } = attrs;
    control = h("select", { id, name, ...rest },
      options.map(([v, t]) => h("option", { value: v, selected: String(v) === String(value ?? "") }, t)));
  } else {
    control = h("input", { id, name, type: "text", ...attrs });
  }
  control.setAttribute("aria-describedby", errId);
  const check = attrs.type === "checkbox";
  const wrap = h("div", { class: check ? "field check" : "field", dataset: { field: name } },
    check ? [control, h("label", { for: id }, label)] : [h("label", { for: id }, label), control],
    h("p", { class: "field-error", id: errId, "aria-live": "polite" }));
  return wrap;
}

export function clearErrors(form) {
  form.querySelectorAll(".field-error").forEach((p) => { p.textContent = ""; });
  form.querySelectorAll("[aria-invalid]").forEach((c) => c.removeAttribute("aria-invalid"));
  form.querySelectorAll(".form-message").forEach((m) => m.remove());
}

// Put the API's error next to the field it names (else above the form's buttons).
export function showError(form, err) {
  const find = (name) => form.querySelector(`[data-field="${CSS.escape(name)}"]`);
  // "asset_symbols[1]" or "parameters.x.y": the field itself, else the form field it is part of.
  const f = err && err.field ? find(err.field) || find(err.field.replace(/\[\d+\]$/, "")) || find(err.field.split(/[.[]/)[0]) : null;
  if (f && !f.hidden) {
    const c = f.querySelector("input, select");
    f.querySelector(".field-error").textContent = err.message;
    c.setAttribute("aria-invalid", "true");
    c.focus();
    return;
  }
  const m = message("error", explain(err) + (err && err.field ? ` (field: ${err.field})` : ""));
  m.classList.add("form-message");
  form.append(m);
}

export function values(form) {
  const out = {};
  form.querySelectorAll("[data-field]").forEach((f) => {
    if (f.hidden) return;
    const c = f.querySelector("input, select");
    if (!c || !c.name) return;
    if (c.type === "checkbox") out[c.name] = c.checked;
    else if (c.type !== "file" && c.value.trim() !== "") out[c.name] = c.value.trim();
  });
  return out;
}

export function tabs(label, choices, current, onPick) {
  const box = h("div", { class: "tabs", role: "group", "aria-label": label });
  for (const [value, text] of choices) {
    box.append(h("button", {
      type: "button", class: "secondary", "aria-pressed": String(value === current),
      onclick: (e) => {
        box.querySelectorAll("button").forEach((b) => b.setAttribute("aria-pressed", "false"));
        e.currentTarget.setAttribute("aria-pressed", "true");
        onPick(value);
      },
    }, text));
  }
  return box;
}

export async function load(slot, fn) {
  slot.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  try {
    const out = await fn();
    slot.replaceChildren(...[out].flat().filter(Boolean));
  } catch (err) {
    slot.replaceChildren(message("error", explain(err)));
  }
}
