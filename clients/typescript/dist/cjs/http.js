"use strict";
// The HTTP transport: one request to the API with the token, a timeout and
// the caller's signal, answering the parsed JSON or throwing a SkiplockError.
Object.defineProperty(exports, "__esModule", { value: true });
exports.Transport = void 0;
exports.anySignal = anySignal;
const errors_js_1 = require("./errors.js");
class Transport {
    baseURL;
    headers;
    /** The default timeout of a call, in milliseconds. */
    timeoutMs;
    fetchFn;
    constructor(cfg) {
        let u;
        try {
            u = new URL(cfg.url);
        }
        catch {
            throw new TypeError(`url: not a URL: ${JSON.stringify(cfg.url)}`);
        }
        if (u.protocol !== "http:" && u.protocol !== "https:") {
            throw new TypeError(`url: must be http:// or https://, got ${JSON.stringify(cfg.url)}`);
        }
        if (!(cfg.timeoutMs > 0))
            throw new RangeError(`timeoutMs: must be > 0, got ${cfg.timeoutMs}`);
        this.baseURL = cfg.url.replace(/\/+$/, "");
        this.timeoutMs = cfg.timeoutMs;
        this.fetchFn = cfg.fetch ?? globalThis.fetch;
        if (typeof this.fetchFn !== "function")
            throw new TypeError("no fetch: Node.js 18 or later is needed");
        this.headers = { accept: "application/json", ...cfg.headers };
        if (cfg.token)
            this.headers.authorization = `Bearer ${cfg.token}`;
    }
    async request(method, path, call = {}) {
        const url = this.baseURL + path + queryString(call.query);
        const headers = { ...this.headers, ...call.headers };
        let body;
        if (call.body !== undefined) {
            body = JSON.stringify(call.body);
            headers["content-type"] = "application/json";
        }
        const timeoutMs = call.timeoutMs ?? this.timeoutMs;
        const timeout = AbortSignal.timeout(timeoutMs);
        const { signal, dispose } = anySignal(call.signal ? [call.signal, timeout] : [timeout]);
        let res;
        let text;
        try {
            res = await this.fetchFn(url, { method, headers, body, signal });
            text = await res.text();
        }
        catch (err) {
            if (call.signal?.aborted)
                throw call.signal.reason;
            if (timeout.aborted) {
                throw new errors_js_1.ConnectionError("timeout", `${method} ${path}: no answer within ${timeoutMs} ms`, { cause: err });
            }
            throw new errors_js_1.ConnectionError("connection", `${method} ${path}: ${describe(err)}`, { cause: err });
        }
        finally {
            dispose();
        }
        return parse(method, path, res, text);
    }
}
exports.Transport = Transport;
function parse(method, path, res, text) {
    let value;
    try {
        value = text === "" ? {} : JSON.parse(text);
    }
    catch {
        if (res.ok)
            throw new errors_js_1.SkiplockError(res.status, "internal", `${method} ${path}: answer is not JSON: ${text.slice(0, 200)}`);
        value = undefined;
    }
    if (res.ok)
        return value;
    const e = value?.error;
    if (e && typeof e.code === "string") {
        throw new errors_js_1.SkiplockError(res.status, e.code, e.message ?? e.code, e.field);
    }
    const code = res.status === 503 ? "unavailable" : res.status >= 500 ? "internal" : "http_" + res.status;
    throw new errors_js_1.SkiplockError(res.status, code, `${method} ${path}: HTTP ${res.status}: ${text.slice(0, 200)}`);
}
function describe(err) {
    if (err instanceof Error) {
        const cause = err.cause;
        return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
    }
    return String(err);
}
function queryString(q) {
    if (!q)
        return "";
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) {
        if (v === undefined)
            continue;
        if (Array.isArray(v)) {
            for (const x of v)
                p.append(k, String(x));
        }
        else {
            p.append(k, String(v));
        }
    }
    const s = p.toString();
    return s ? "?" + s : "";
}
/** A signal aborted when any of signals is (AbortSignal.any, which Node 18.0 lacks); dispose removes the listeners. */
function anySignal(signals) {
    if (signals.length === 1)
        return { signal: signals[0], dispose: () => { } };
    const ac = new AbortController();
    const undo = [];
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
