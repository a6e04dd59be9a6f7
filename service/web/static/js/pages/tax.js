// Tax: the year's summary, loss-harvesting opportunities, report generation and download.
import { all, get, post, qs } from "../api.js";
import { h, num, money, figures, table, field, load, clearErrors, showError, values, message } from "../ui.js";

export async function render(main) {
  document.title = "Tax · quantcore";
  const year = new Date().getUTCFullYear();
  const portfolios = await all("/api/portfolios/?ordering=name");
  const summary = h("div"); const harvest = h("div"); const reports = h("div");
  const pick = h("form", { class: "inline", novalidate: true, "aria-label": "Tax year and portfolio" },
    field("Tax year", "year", { type: "number", value: String(year), min: "1970", max: "9999" }),
    field("Portfolio", "portfolio_id", { options: [["", "All portfolios"], ...portfolios.map((p) => [p.id, p.name])] }),
    h("div", {}, h("button", { type: "submit" }, "Show")));
  const show = () => {
    const v = values(pick);
    clearErrors(pick);
    load(summary, async () => {
      try { return summaryView(await get(`/api/tax/analytics/summary/${qs(v)}`)); } catch (err) {
        if (err.field) { showError(pick, err); return null; }
        throw err;
      }
    });
    load(harvest, async () => harvestView(await get(`/api/tax/loss-harvesting/${qs({ portfolio_id: v.portfolio_id })}`)));
  };
  pick.addEventListener("submit", (e) => { e.preventDefault(); show(); });
  const gen = h("form", { class: "inline", novalidate: true, "aria-label": "Generate a tax report" },
    field("Year", "year", { type: "number", value: String(year), min: "1970", max: "9999" }),
    field("Report", "report_type", { options: [["all", "All"], ["schedule_d", "Schedule D"], ["form_1099_div", "Form 1099-DIV"]] }),
    field("Portfolio", "portfolio_id", { options: [["", "All portfolios"], ...portfolios.map((p) => [p.id, p.name])] }),
    h("div", {}, h("button", { type: "submit" }, "Generate")));
  const listReports = () => load(reports, async () => {
    const page = await get("/api/tax/reports/?limit=20");
    return table("Generated reports", [
      { label: "Year", cell: (r) => String(r.tax_year) },
      { label: "Type", cell: (r) => r.report_type },
      { label: "Portfolio", cell: (r) => (r.portfolio_id === null ? "all" : String(r.portfolio_id)) },
      { label: "Created", cell: (r) => r.created_at.slice(0, 16).replace("T", " ") },
      { label: "Download", plain: true, cell: (r) => h("span", { class: "actions" },
        h("a", { href: `/api/tax/reports/${r.id}/download/?format=csv`, download: "" }, "CSV"), " ",
        h("a", { href: `/api/tax/reports/${r.id}/download/?format=json`, download: "" }, "JSON")) },
    ], page.results, { empty: "No report yet." });
  });
  gen.addEventListener("submit", async (e) => {
    e.preventDefault(); clearErrors(gen);
    const v = values(gen);
    const body = { year: Number(v.year), report_type: v.report_type };
    if (v.portfolio_id) body.portfolio_id = Number(v.portfolio_id);
    try { await post("/api/tax/reports/generate/", body); gen.append(Object.assign(message("info", "Report generated."), { className: "message info form-message" })); listReports(); }
    catch (err) { showError(gen, err); }
  });
  main.replaceChildren(h("h1", {}, "Tax"), pick,
    h("section", { class: "card", "aria-labelledby": "h-sum" }, h("h2", { id: "h-sum" }, "Summary"), summary),
    h("section", { class: "card", "aria-labelledby": "h-harv" }, h("h2", { id: "h-harv" }, "Loss harvesting"), harvest),
    h("section", { class: "card", "aria-labelledby": "h-rep" }, h("h2", { id: "h-rep" }, "Reports"), gen, reports));
  show(); listReports();
}

function summaryView(s) {
  const c = s.capital_gains; const d = s.dividend_income;
  return [figures([
    ["Short-term gain/loss", money(c.short_term_gain_loss)], ["Long-term gain/loss", money(c.long_term_gain_loss)],
    ["Net capital gain/loss", money(c.net_capital_gain_loss)], ["Qualified dividends", money(d.qualified_dividends)],
    ["Ordinary dividends", money(d.ordinary_dividends)], ["Total dividends", money(d.total_dividends)],
    ["Loss deduction", money(s.capital_loss_deduction)], ["Carryforward (short)", money(s.short_term_carryforward)],
    ["Carryforward (long)", money(s.long_term_carryforward)], ["Estimated tax", money(s.estimated_tax_liability)],
  ]), h("p", { class: "muted" }, `Tax year ${s.tax_year}, amounts in USD.`)];
}

function harvestView(r) {
  return table("Opportunities", [
    { label: "Asset", cell: (o) => o.position.asset_symbol },
    { label: "Quantity", num: true, cell: (o) => num(o.loss_quantity || o.position.quantity) },
    { label: "Avg cost", num: true, cell: (o) => num(o.position.average_cost) },
    { label: "Price", num: true, cell: (o) => num(o.position.current_price) },
    { label: "Loss", num: true, cell: (o) => num(o.potential_loss_amount) },
    { label: "Tax benefit", num: true, cell: (o) => num(o.tax_benefit_estimate) },
    { label: "Wash-sale risk", cell: (o) => (o.wash_sale_risk ? "yes" : "no") },
    { label: "Recommendation", wrap: true, cell: (o) => o.recommendation },
  ], r.opportunities, { empty: "No loss to harvest." });
}
