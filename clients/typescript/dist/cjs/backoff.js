"use strict";
// Backoff between attempts of a call that got no answer or a 503:
// exponential with jitter (half to all of the ceiling), so that workers reconnecting after an
// outage do not arrive at once.
Object.defineProperty(exports, "__esModule", { value: true });
exports.Backoff = void 0;
exports.sleep = sleep;
class Backoff {
    initialMs;
    maxMs;
    failures = 0;
    constructor(o = {}) {
        this.initialMs = o.initialMs ?? 100;
        this.maxMs = o.maxMs ?? 10_000;
        if (!(this.initialMs > 0) || !(this.maxMs >= this.initialMs)) {
            throw new RangeError(`backoff: need 0 < initialMs <= maxMs, got ${this.initialMs} and ${this.maxMs}`);
        }
    }
    /** The wait before the next try, growing with each failure. */
    next() {
        const ceiling = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.failures, 30));
        this.failures++;
        return Math.max(1, Math.round(ceiling * (0.5 + Math.random() / 2)));
    }
    reset() {
        this.failures = 0;
    }
}
exports.Backoff = Backoff;
/** Resolves after ms, or at once when signal aborts. */
function sleep(ms, signal) {
    return new Promise((resolve) => {
        if (signal?.aborted)
            return resolve();
        const done = () => {
            clearTimeout(t);
            signal?.removeEventListener("abort", done);
            resolve();
        };
        const t = setTimeout(done, ms);
        signal?.addEventListener("abort", done, { once: true });
    });
}
