// Live updates over the existing WebSocket (/ws/realtime/, session cookie): prices and
// portfolio values of the elements on the page that carry data-live-price / data-live-value.
import { num } from "./ui.js";

const status = () => document.getElementById("live");
const handlers = new Set();

class Live {
  constructor() { this.ws = null; this.wanted = { assets: new Set(), portfolios: new Set() }; this.retry = 0; }

  connect() {
    if (this.ws) return;
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/realtime/`;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => { this.retry = 0; status().textContent = "Live"; this.flush(); };
    ws.onmessage = (e) => this.receive(JSON.parse(e.data));
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null; status().textContent = "Offline";
      if (this.closed) return;
      this.timer = setTimeout(() => this.connect(), Math.min(30000, 1000 * 2 ** this.retry++));
    };
    this.closed = false;
  }

  close() {
    this.closed = true; clearTimeout(this.timer);
    if (this.ws) { const ws = this.ws; this.ws = null; ws.close(); }
    status().textContent = "";
  }

  // A new page: drop its subscriptions (the server keeps them per connection).
  reset() {
    handlers.clear();
    if (this.ws && this.ws.readyState === 1) {
      this.wanted.assets.forEach((symbol) => this.send({ type: "unsubscribe_asset", symbol }));
      this.wanted.portfolios.forEach((id) => this.send({ type: "unsubscribe_portfolio", portfolio_id: id }));
    }
    this.wanted = { assets: new Set(), portfolios: new Set() };
  }

  send(msg) { if (this.ws && this.ws.readyState === 1) this.ws.send(JSON.stringify(msg)); }

  flush() {
    if (this.wanted.assets.size) this.send({ type: "subscribe_assets", symbols: [...this.wanted.assets] });
    this.wanted.portfolios.forEach((id) => this.send({ type: "subscribe_portfolio", portfolio_id: id }));
  }

  assets(symbols) {
    const fresh = symbols.filter((x) => !this.wanted.assets.has(x));
    fresh.forEach((x) => this.wanted.assets.add(x));
    if (fresh.length) this.send({ type: "subscribe_assets", symbols: fresh });
  }

  portfolios(ids) {
    ids.filter((x) => !this.wanted.portfolios.has(x)).forEach((id) => {
      this.wanted.portfolios.add(id); this.send({ type: "subscribe_portfolio", portfolio_id: id });
    });
  }

  on(fn) { handlers.add(fn); }

  receive(msg) {
    if (msg.type === "price_update") {
      document.querySelectorAll(`[data-live-price="${CSS.escape(msg.symbol)}"]`).forEach((el) => { el.textContent = num(msg.price); });
    } else if (msg.type === "portfolio_update") {
      const id = String(msg.portfolio_id);
      for (const key of ["total_value", "daily_change", "daily_change_percent"]) {
        document.querySelectorAll(`[data-live-pf="${id}"][data-key="${key}"]`).forEach((el) => {
          el.textContent = key === "daily_change_percent" ? `${num(msg[key])} %` : num(msg[key]);
        });
      }
    }
    handlers.forEach((fn) => fn(msg));
  }
}

export const live = new Live();
