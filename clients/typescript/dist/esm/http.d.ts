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
export declare class Transport {
    readonly baseURL: string;
    private readonly headers;
    /** The default timeout of a call, in milliseconds. */
    readonly timeoutMs: number;
    private readonly fetchFn;
    constructor(cfg: TransportConfig);
    request<T>(method: string, path: string, call?: Call): Promise<T>;
}
/** A signal aborted when any of signals is (AbortSignal.any, which Node 18.0 lacks); dispose removes the listeners. */
export declare function anySignal(signals: AbortSignal[]): {
    signal: AbortSignal;
    dispose: () => void;
};
export {};
