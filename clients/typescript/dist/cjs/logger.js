"use strict";
// Logging: the worker and the client log through a Logger, by default
// one that writes to the console at or above a level.
Object.defineProperty(exports, "__esModule", { value: true });
exports.consoleLogger = consoleLogger;
const rank = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
/** A Logger that writes to the console the lines at or above level, with their fields as `key=value`. */
function consoleLogger(level = "info") {
    const min = rank[level];
    if (min === undefined)
        throw new RangeError(`log level must be debug, info, warn, error or silent, got ${String(level)}`);
    const line = (lvl, message, fields) => {
        if (rank[lvl] < min)
            return;
        let text = `skiplock ${lvl}: ${message}`;
        for (const [k, v] of Object.entries(fields ?? {})) {
            text += ` ${k}=${formatValue(v)}`;
        }
        (lvl === "debug" ? console.debug : lvl === "info" ? console.info : lvl === "warn" ? console.warn : console.error)(text);
    };
    return {
        debug: (m, f) => line("debug", m, f),
        info: (m, f) => line("info", m, f),
        warn: (m, f) => line("warn", m, f),
        error: (m, f) => line("error", m, f),
    };
}
function formatValue(v) {
    if (v instanceof Error)
        return JSON.stringify(v.message);
    if (typeof v === "string")
        return /^[\w.:/@-]*$/.test(v) && v !== "" ? v : JSON.stringify(v);
    try {
        return JSON.stringify(v) ?? String(v);
    }
    catch {
        return String(v);
    }
}
