// The shell: sign in / out, the hash router, the live WebSocket.
import { api, get, hasSession, setUnauthorizedHandler } from "./api.js";
import { h, field, clearErrors, showError, message, explain } from "./ui.js";
import { live } from "./live.js";

const main = document.getElementById("main");
const routes = [
  [/^#?\/?$/, () => import("./pages/dashboard.js")],
  [/^#\/portfolio\/(\d+)$/, () => import("./pages/portfolio.js")],
  [/^#\/tax$/, () => import("./pages/tax.js")],
  [/^#\/asset(?:\/([A-Za-z0-9.^=_-]+))?$/, () => import("./pages/asset.js")],
  [/^#\/backtest$/, () => import("./pages/backtest.js")],
];
let user = null;
let notice = null;

function signedIn(name) {
  user = name;
  document.getElementById("nav").hidden = false;
  document.getElementById("who").hidden = false;
  document.getElementById("username").textContent = name;
  live.connect();
}

function signedOut(text) {
  user = null;
  live.close();
  document.getElementById("nav").hidden = true;
  document.getElementById("who").hidden = true;
  notice = text || null;
  if (location.hash && location.hash !== "#/") history.replaceState(null, "", "#/");
  route();
}

function signInPage() {
  document.title = "Sign in · quantcore";
  const form = h("form", { class: "stack", novalidate: true },
    field("Username", "username", { autocomplete: "username", required: true }),
    field("Password", "password", { type: "password", autocomplete: "current-password", required: true }),
    h("div", {}, h("button", { type: "submit" }, "Sign in")));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    clearErrors(form);
    const username = form.username.value; const password = form.password.value;
    const button = form.querySelector("button"); button.disabled = true;
    try {
      const out = await api("POST", "/api/auth/login/", { username, password });
      notice = null;
      signedIn(out.username);
      route();
    } catch (err) {
      let text = explain(err);
      if (err.status === 401) text = "Wrong username or password.";
      if (err.field === "username" || err.field === "password") return showError(form, err);
      form.append(Object.assign(message("error", text), { className: "message error form-message" }));
      form.password.focus();
    } finally { button.disabled = false; }
  });
  main.replaceChildren(h("div", { class: "signin" },
    h("h1", {}, "Sign in"),
    notice ? message("info", notice) : null,
    form,
    h("p", { class: "muted" }, "The API and its documentation: ", h("a", { href: "/schema/swagger" }, "/schema/swagger"))));
  form.username.focus();
}

async function route() {
  live.reset();
  if (!user) return signInPage();
  const hash = location.hash || "#/";
  for (const [re, loader] of routes) {
    const m = hash.match(re);
    if (!m) continue;
    document.querySelectorAll("#nav a").forEach((a) => {
      const here = a.getAttribute("href") === hash || (a.getAttribute("href") === "#/" && hash.startsWith("#/portfolio"));
      if (here) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    });
    main.replaceChildren(h("p", { class: "muted" }, "Loading…"));
    const mod = await loader();
    await mod.render(main, ...m.slice(1));
    main.dataset.ready = hash;
    return;
  }
  main.replaceChildren(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Back to the dashboard")));
}

async function start() {
  setUnauthorizedHandler(() => { if (user) signedOut("Your session has ended: sign in again."); });
  document.getElementById("signout").addEventListener("click", async () => {
    try { await api("POST", "/api/auth/logout/"); } catch { /* the session is gone either way */ }
    signedOut("You are signed out.");
  });
  window.addEventListener("hashchange", () => { route().then(() => main.focus()); });
  if (hasSession()) {
    try { const me = await get("/api/auth/me/"); signedIn(me.username); } catch { user = null; }
  }
  await route();
}

start();
