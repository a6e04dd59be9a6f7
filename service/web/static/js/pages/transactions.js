// A portfolio's ledger: list, add, edit and delete every row type; broker-statement import
// with the dry-run preview first (nothing is written until the preview was seen).
import { api, del, get, post, put } from "../api.js";
import { h, num, table, field, clearErrors, showError, values, message, explain } from "../ui.js";

const SECURITY = ["buy", "sell", "dividend"];
const ACTIONS = ["split", "stock_dividend", "return_of_capital", "spin_off", "merger"];
const CASH = ["deposit", "withdrawal", "interest", "fee"];
// The fields each type sends (the API's names); everything else is hidden and not sent.
const FIELDS = {
  buy: ["asset_symbol", "quantity", "price", "fees"],
  sell: ["asset_symbol", "quantity", "price", "fees", "lot_id"],
  dividend: ["asset_symbol", "quantity", "price", "fees"],
  split: ["asset_symbol", "split_ratio", "cash_in_lieu"],
  stock_dividend: ["asset_symbol", "split_ratio", "cash_in_lieu"],
  return_of_capital: ["asset_symbol", "price"],
  spin_off: ["asset_symbol", "target_symbol", "ratio", "basis_allocation"],
  merger: ["asset_symbol", "target_symbol", "ratio", "cash_per_share", "price"],
  deposit: ["price", "currency", "fees"], withdrawal: ["price", "currency", "fees"],
  interest: ["price", "currency", "fees"], fee: ["price", "currency"],
};
const LABELS = { price: "Price", quantity: "Quantity" };
const priceLabel = (t) => (CASH.includes(t) ? "Amount" : t === "return_of_capital" ? "Distribution per share"
  : t === "merger" ? "Value of one new share" : t === "dividend" ? "Dividend per share" : "Price");
const today = () => new Date().toISOString().slice(0, 10);

export function transactionsSection(p, refresh) {
  const list = h("div"); const formSlot = h("div");
  let offset = 0;
  const show = async () => {
    try {
      const page = await get(`/api/transactions/?portfolio_id=${p.id}&limit=20&offset=${offset}`);
      list.replaceChildren(table(`Transactions (${page.count})`, [
        { label: "Date", cell: (t) => t.transaction_date },
        { label: "Type", cell: (t) => t.transaction_type.replace(/_/g, " ") },
        { label: "Asset", cell: (t) => t.asset_symbol || "—" },
        { label: "Quantity", num: true, cell: (t) => (CASH.includes(t.transaction_type) || ACTIONS.includes(t.transaction_type) ? "—" : num(t.quantity)) },
        { label: "Price", num: true, cell: (t) => num(t.split_ratio || t.ratio || t.price) },
        { label: "Fees", num: true, cell: (t) => num(t.fees) },
        { label: "Amount", num: true, cell: (t) => `${num(t.total_amount)} ${t.currency}` },
        { label: "Actions", plain: true, cell: (t) => h("div", { class: "actions" },
          h("button", { type: "button", class: "secondary", "aria-label": `Edit ${describe(t)}`, onclick: () => openForm(t) }, "Edit"),
          deleteButton(t, refresh)) },
      ], page.results, { empty: "No transaction yet." }),
      h("div", { class: "actions" },
        offset > 0 ? h("button", { type: "button", class: "secondary", onclick: () => { offset = Math.max(0, offset - 20); show(); } }, "Newer") : null,
        page.next ? h("button", { type: "button", class: "secondary", onclick: () => { offset += 20; show(); } }, "Older") : null));
    } catch (err) { list.replaceChildren(message("error", explain(err))); }
  };
  const openForm = (t) => {
    formSlot.replaceChildren(transactionForm(p, t, refresh, () => formSlot.replaceChildren(addButton)));
    formSlot.querySelector("select, input").focus();
  };
  const addButton = h("button", { type: "button", onclick: () => openForm(null) }, "Add a transaction");
  formSlot.append(addButton);
  show();
  return h("div", {}, formSlot, list);
}

const describe = (t) => `${t.transaction_type} ${t.asset_symbol || ""} on ${t.transaction_date}`.replace(/\s+/g, " ");

function deleteButton(t, refresh) {
  const b = h("button", { type: "button", class: "danger", "aria-label": `Delete ${describe(t)}` }, "Delete");
  let armed = false;
  b.addEventListener("click", async () => {
    if (!armed) { armed = true; b.textContent = "Confirm delete"; return; }
    b.disabled = true;
    try { await del(`/api/transactions/${t.id}/`); refresh(); } catch (err) {
      b.replaceWith(message("error", explain(err)));
    }
  });
  return b;
}

function transactionForm(p, t, refresh, close) {
  const type = t ? t.transaction_type : "buy";
  const v = (k) => (t && t[k] !== null && t[k] !== undefined ? String(t[k]) : "");
  const form = h("form", { class: "stack", novalidate: true, "aria-label": t ? `Edit ${describe(t)}` : "New transaction" },
    h("h3", {}, t ? `Edit ${describe(t)}` : "New transaction"),
    field("Type", "transaction_type", { value: type, options: [
      ...SECURITY, ...ACTIONS, ...CASH].map((x) => [x, x.replace(/_/g, " ")]) }),
    field("Asset symbol", "asset_symbol", { value: v("asset_symbol"), autocapitalize: "characters" }),
    field("Date", "transaction_date", { type: "date", value: v("transaction_date") || today() }),
    field("Quantity", "quantity", { value: v("quantity"), inputmode: "decimal" }),
    field("Price", "price", { value: v("price"), inputmode: "decimal" }),
    field("Fees", "fees", { value: v("fees") || "0", inputmode: "decimal" }),
    field("Currency", "currency", { value: v("currency") || p.base_currency, options: ["USD", "EUR", "GBP", "JPY"].map((c) => [c, c]) }),
    field("Lot (id of the buy this sell relieves; optional)", "lot_id", { value: v("lot_id"), inputmode: "numeric" }),
    field("Split ratio (new shares per old)", "split_ratio", { value: v("split_ratio"), inputmode: "decimal" }),
    field("Cash in lieu (optional)", "cash_in_lieu", { value: v("cash_in_lieu"), inputmode: "decimal" }),
    field("Target symbol", "target_symbol", { value: v("target_symbol") }),
    field("Ratio (new shares per old)", "ratio", { value: v("ratio"), inputmode: "decimal" }),
    field("Basis allocation (0 to 1)", "basis_allocation", { value: v("basis_allocation"), inputmode: "decimal" }),
    field("Cash per share", "cash_per_share", { value: v("cash_per_share"), inputmode: "decimal" }),
    h("div", { class: "actions" }, h("button", { type: "submit" }, t ? "Save" : "Add"),
      h("button", { type: "button", class: "secondary", onclick: close }, "Cancel")));
  const select = form.querySelector("select[name=transaction_type]");
  const sync = () => {
    const want = new Set(["transaction_type", "transaction_date", ...FIELDS[select.value]]);
    form.querySelectorAll("[data-field]").forEach((f) => { f.hidden = !want.has(f.dataset.field); });
    form.querySelector("[data-field=price] label").textContent = priceLabel(select.value);
    form.querySelector("[data-field=quantity] label").textContent = select.value === "dividend" ? "Shares" : LABELS.quantity;
  };
  select.addEventListener("change", sync); sync();
  form.addEventListener("submit", async (e) => {
    e.preventDefault(); clearErrors(form);
    const body = { portfolio: p.id, ...values(form) };
    if (body.lot_id) body.lot_id = Number(body.lot_id);
    const button = form.querySelector("button[type=submit]"); button.disabled = true;
    try {
      if (t) await put(`/api/transactions/${t.id}/`, body); else await post("/api/transactions/", body);
      refresh();
    } catch (err) { showError(form, err); } finally { button.disabled = false; }
  });
  return form;
}

export function importSection(p, refresh) {
  const out = h("div");
  const form = h("form", { class: "stack", novalidate: true, "aria-label": "Import a broker statement" },
    field("Statement file (OFX, QFX or CSV)", "file", { type: "file", accept: ".ofx,.qfx,.csv,text/csv" }),
    field("Format", "format", { options: [["", "from the file"], ["ofx", "OFX / QFX"], ["csv", "CSV"]] }),
    field("CSV preset", "preset", { options: [["", "detect"], ["schwab", "Schwab"], ["fidelity", "Fidelity"]] }),
    field("CSV mapping (JSON, for another layout; optional)", "mapping", { spellcheck: "false" }),
    field("Create unknown assets", "create_assets", { type: "checkbox" }),
    h("div", { class: "actions" },
      h("button", { type: "submit" }, "Preview (dry run)"),
      h("button", { type: "button", id: `import-${p.id}`, disabled: true }, "Import")));
  const importButton = form.querySelector(`#import-${p.id}`);
  const send = async (dryRun) => {
    const file = form.querySelector("input[type=file]").files[0];
    const data = new FormData();
    if (file) data.append("file", file);
    const v = values(form);
    for (const k of ["format", "preset", "mapping"]) if (v[k]) data.append(k, v[k]);
    data.append("create_assets", String(Boolean(v.create_assets)));
    data.append("dry_run", String(dryRun));
    return api("POST", `/api/portfolios/${p.id}/import/`, data, { form: true });
  };
  form.addEventListener("change", () => { importButton.disabled = true; });
  form.addEventListener("submit", async (e) => {
    e.preventDefault(); clearErrors(form); importButton.disabled = true;
    try {
      const report = await send(true);
      const bad = report.errors || [];
      // A dry run answers 200 with every problem: show them; the import stays off.
      out.replaceChildren(bad.length ? problems(bad, `${bad.length} problem(s) in the file: nothing would be imported.`) : preview(report, true));
      importButton.disabled = bad.length > 0 || report.added === 0;
    } catch (err) {
      // A refused file lists its lines under the form; any other error goes to its field.
      if (err.details && err.details.errors) out.replaceChildren(errors(err));
      else { out.replaceChildren(); showError(form, err); }
    }
  });
  importButton.addEventListener("click", async () => {
    importButton.disabled = true;
    try { const report = await send(false); out.replaceChildren(preview(report, false)); setTimeout(refresh, 1500); }
    catch (err) { out.replaceChildren(errors(err)); }
  });
  return h("div", {}, form, out);
}

function preview(r, dry) {
  const counts = Object.entries(r.counts || {}).map(([k, n]) => `${n} ${k}`).join(", ") || "nothing";
  return h("div", { role: "status" },
    message("info", dry
      ? `Preview: ${r.added} row(s) would be added (${counts}); ${r.skipped_duplicates} already imported. Nothing is written yet.`
      : `Imported ${r.added} row(s) (${counts}); ${r.skipped_duplicates} already present.`),
    table(dry ? "Rows that would be added (first 20)" : "Rows added (first 20)", [
      { label: "Line", cell: (x) => String(x.line) },
      { label: "Date", cell: (x) => x.transaction_date },
      { label: "Type", cell: (x) => x.transaction_type },
      { label: "Asset", cell: (x) => x.asset_symbol || "—" },
      { label: "Quantity", num: true, cell: (x) => num(x.quantity) },
      { label: "Price", num: true, cell: (x) => num(x.price) },
      { label: "Fees", num: true, cell: (x) => num(x.fees) },
      { label: "Currency", cell: (x) => x.currency },
    ], r.rows || []));
}

function errors(err) {
  return problems((err.details && err.details.errors) || [], explain(err));
}

function problems(rows, text) {
  return h("div", {}, message("error", text), rows.length ? table("Problems in the file (nothing was imported)", [
    { label: "Line", cell: (x) => String(x.line) },
    { label: "Field", cell: (x) => x.field },
    { label: "Problem", wrap: true, cell: (x) => x.message },
  ], rows) : null);
}
