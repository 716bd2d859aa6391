// The HTTP transport: one request to the API with the token, a timeout and
// the caller's signal, answering the parsed JSON or throwing a SkiplockError.

import { ConnectionError, SkiplockError } from "./errors.js";

/** Options of every call. */
export interface RequestOptions {
  /** Aborts the call (it then rejects with the signal's reason). */
  signal?: AbortSignal;
  /** This call's timeout in milliseconds, instead of the client's. */
  timeoutMs?: number;
}

export interface TransportConfig {
  url: string;
  token?: string;
  timeoutMs: number;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

type Query = Record<string, string | number | boolean | undefined | Array<string | number>>;

export interface Call extends RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
}

export class Transport {
  readonly baseURL: string;
  private readonly headers: Record<string, string>;
  /** The default timeout of a call, in milliseconds. */
  readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;

  constructor(cfg: TransportConfig) {
    let u: URL;
    try {
      u = new URL(cfg.url);
    } catch {
      throw new TypeError(`url: not a URL: ${JSON.stringify(cfg.url)}`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new TypeError(`url: must be http:// or https://, got ${JSON.stringify(cfg.url)}`);
    }
    if (!(cfg.timeoutMs > 0)) throw new RangeError(`timeoutMs: must be > 0, got ${cfg.timeoutMs}`);
    this.baseURL = cfg.url.replace(/\/+$/, "");
    this.timeoutMs = cfg.timeoutMs;
    this.fetchFn = cfg.fetch ?? globalThis.fetch;
    if (typeof this.fetchFn !== "function") throw new TypeError("no fetch: Node.js 18 or later is needed");
    this.headers = { accept: "application/json", ...cfg.headers };
    if (cfg.token) this.headers.authorization = `Bearer ${cfg.token}`;
  }

  async request<T>(method: string, path: string, call: Call = {}): Promise<T> {
    const url = this.baseURL + path + queryString(call.query);
    const headers: Record<string, string> = { ...this.headers, ...call.headers };
    let body: string | undefined;
    if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers["content-type"] = "application/json";
    }
    const timeoutMs = call.timeoutMs ?? this.timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const { signal, dispose } = anySignal(call.signal ? [call.signal, timeout] : [timeout]);
    let res: Response;
    let text: string;
    try {
      res = await this.fetchFn(url, { method, headers, body, signal });
      text = await res.text();
    } catch (err) {
      if (call.signal?.aborted) throw call.signal.reason;
      if (timeout.aborted) {
        throw new ConnectionError("timeout", `${method} ${path}: no answer within ${timeoutMs} ms`, { cause: err });
      }
      throw new ConnectionError("connection", `${method} ${path}: ${describe(err)}`, { cause: err });
    } finally {
      dispose();
    }
    return parse<T>(method, path, res, text);
  }
}

function parse<T>(method: string, path: string, res: Response, text: string): T {
  let value: unknown;
  try {
    value = text === "" ? {} : JSON.parse(text);
  } catch {
    if (res.ok) throw new SkiplockError(res.status, "internal", `${method} ${path}: answer is not JSON: ${text.slice(0, 200)}`);
    value = undefined;
  }
  if (res.ok) return value as T;
  const e = (value as { error?: { code?: string; message?: string; field?: string } } | undefined)?.error;
  if (e && typeof e.code === "string") {
    throw new SkiplockError(res.status, e.code, e.message ?? e.code, e.field);
  }
  const code = res.status === 503 ? "unavailable" : res.status >= 500 ? "internal" : "http_" + res.status;
  throw new SkiplockError(res.status, code, `${method} ${path}: HTTP ${res.status}: ${text.slice(0, 200)}`);
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}

function queryString(q?: Query): string {
  if (!q) return "";
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) {
      for (const x of v) p.append(k, String(x));
    } else {
      p.append(k, String(v));
    }
  }
  const s = p.toString();
  return s ? "?" + s : "";
}

/** A signal aborted when any of signals is (AbortSignal.any, which Node 18.0 lacks); dispose removes the listeners. */
export function anySignal(signals: AbortSignal[]): { signal: AbortSignal; dispose: () => void } {
  if (signals.length === 1) return { signal: signals[0], dispose: () => {} };
  const ac = new AbortController();
  const undo: Array<() => void> = [];
  for (const s of signals) {
    if (s.aborted) {
      ac.abort(s.reason);
      break;
    }
    const on = () => ac.abort(s.reason);
    s.addEventListener("abort", on, { once: true });
    undo.push(() => s.removeEventListener("abort", on));
  }
  return { signal: ac.signal, dispose: () => undo.forEach((f) => f()) };
}
