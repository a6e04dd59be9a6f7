// The one way the pages reach data: the same /api/ endpoints every API client uses,
// with the session cookie and, on unsafe methods, the session's CSRF token.

export class ApiError extends Error {
  constructor(status, body, retryAfter) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.error;
    this.details = (body && body.details) || {};
    this.field = this.details.field || null;
    this.retryAfter = retryAfter;
  }
}

const SAFE = new Set(["GET", "HEAD"]);

export function csrfToken() {
  const m = document.cookie.match(/(?:^|;\s*)qc_csrftoken=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

export function hasSession() {
  return csrfToken() !== "";
}

let onUnauthorized = () => {};
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

export async function api(method, path, body, { form = false } = {}) {
  const headers = { Accept: "application/json" };
  if (!SAFE.has(method)) headers["X-CSRFToken"] = csrfToken();
  let payload;
  if (body !== undefined) {
    if (form) payload = body;
    else { payload = JSON.stringify(body); headers["Content-Type"] = "application/json"; }
  }
  const r = await fetch(path, { method, headers, body: payload, credentials: "same-origin" });
  if (r.status === 204) return null;
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { message: text }; }
  if (!r.ok) {
    const err = new ApiError(r.status, data, r.headers.get("Retry-After"));
    if (r.status === 401 && path !== "/api/auth/login/") onUnauthorized(err);
    throw err;
  }
  return data;
}

export const get = (path) => api("GET", path);
export const post = (path, body) => api("POST", path, body);
export const put = (path, body) => api("PUT", path, body);
export const del = (path) => api("DELETE", path);

export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") continue;
    if (Array.isArray(v)) v.forEach((x) => u.append(k, x)); else u.append(k, v);
  }
  const s = u.toString();
  return s ? `?${s}` : "";
}

// Every page of a list endpoint ({results, count, next}), at most `max` rows.
export async function all(path, max = 1000) {
  const out = [];
  let url = path + (path.includes("?") ? "&" : "?") + "limit=100";
  while (url && out.length < max) {
    const page = await get(url);
    out.push(...page.results);
    url = page.next ? new URL(page.next).pathname + new URL(page.next).search : null;
  }
  return out;
}
