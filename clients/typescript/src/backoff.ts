// Backoff between attempts of a call that got no answer or a 503:
// exponential with jitter (half to all of the ceiling), so that workers reconnecting after an
// outage do not arrive at once.

export interface BackoffOptions {
  /** The first wait's ceiling in milliseconds (default 100). */
  initialMs?: number;
  /** The longest wait in milliseconds (default 10,000). */
  maxMs?: number;
}

export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private failures = 0;

  constructor(o: BackoffOptions = {}) {
    this.initialMs = o.initialMs ?? 100;
    this.maxMs = o.maxMs ?? 10_000;
    if (!(this.initialMs > 0) || !(this.maxMs >= this.initialMs)) {
      throw new RangeError(`backoff: need 0 < initialMs <= maxMs, got ${this.initialMs} and ${this.maxMs}`);
    }
  }

  /** The wait before the next try, growing with each failure. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return Math.max(1, Math.round(ceiling * (0.5 + Math.random() / 2)));
  }

  reset(): void {
    this.failures = 0;
  }
}

/** Resolves after ms, or at once when signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
