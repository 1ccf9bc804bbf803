// Where log lines go, and in which form. pino writes one JSON object per line (what log collectors
// read); on a terminal that is a wall of text, so there the same lines are rewritten, one short
// line each: time, level, message and the fields that matter, and one line per request (Fastify's
// "incoming request" line is held until its "request completed" line and merged with it). The
// rewriting reads the JSON pino already produced, after its redaction: a secret redacted in JSON is
// redacted here too. TIDINGS_LOG_FORMAT chooses; unset, a terminal gets pretty and anything else JSON.

export type LogFormat = 'json' | 'pretty';

export interface LineSink {
  write(line: string): unknown;
}

/** The format in force: the one asked for, or pretty on a terminal and JSON elsewhere. */
export function resolveLogFormat(asked: LogFormat | null, isTTY: boolean | undefined): LogFormat {
  return asked ?? (isTTY ? 'pretty' : 'json');
}

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
const COLOURS: Record<number, string> = { 10: '90', 20: '36', 30: '32', 40: '33', 50: '31', 60: '35' };
// Fields every line has, or that the request line shows in its own way.
const SHOWN = new Set([
  'level',
  'time',
  'pid',
  'hostname',
  'msg',
  'reqId',
  'req',
  'res',
  'responseTime',
  'err',
  'v',
]);
// Requests whose first line waits for their last; a request that never completes (a crash)
// must not hold memory forever.
const MAX_PENDING = 1000;

type Entry = Record<string, unknown>;

function clock(time: unknown): string {
  const d = new Date(typeof time === 'number' ? time : Date.now());
  return d.toISOString().slice(11, 23);
}

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v);
}

export class PrettyLogStream {
  readonly #out: LineSink;
  readonly #colour: boolean;
  readonly #pending = new Map<string, { method: string; url: string }>();

  constructor(out: LineSink, options: { colour?: boolean } = {}) {
    this.#out = out;
    this.#colour = options.colour ?? false;
  }

  write(line: string): boolean {
    for (const part of line.split('\n')) {
      if (!part.trim()) continue;
      const formatted = this.format(part);
      if (formatted !== null) this.#out.write(`${formatted}\n`);
    }
    return true;
  }

  /** One JSON log line as a readable line, or null for a line held back (a request's first). */
  format(line: string): string | null {
    let entry: Entry;
    try {
      entry = JSON.parse(line) as Entry;
    } catch {
      return line; // not pino's: shown as it came
    }
    const reqId = typeof entry.reqId === 'string' ? entry.reqId : null;
    const req = entry.req as { method?: string; url?: string } | undefined;
    if (entry.msg === 'incoming request' && reqId && req) {
      if (this.#pending.size >= MAX_PENDING) this.#pending.delete(this.#pending.keys().next().value!);
      this.#pending.set(reqId, { method: req.method ?? '?', url: req.url ?? '?' });
      return null;
    }
    const level = Number(entry.level);
    let text = `${clock(entry.time)} ${this.#level(level)} `;
    const res = entry.res as { statusCode?: number } | undefined;
    if (entry.msg === 'request completed' && reqId) {
      const seen = this.#pending.get(reqId);
      this.#pending.delete(reqId);
      const ms = typeof entry.responseTime === 'number' ? `${Math.round(entry.responseTime)}ms` : '';
      text += [seen?.method, seen?.url, res?.statusCode, ms]
        .filter((p) => p !== undefined && p !== '')
        .join(' ');
    } else {
      text += String(entry.msg ?? '');
    }
    const extras = Object.entries(entry)
      .filter(([k]) => !SHOWN.has(k))
      .map(([k, v]) => `${k}=${value(v)}`);
    if (reqId) extras.push(reqId);
    if (extras.length > 0) text += `  ${this.#dim(extras.join(' '))}`;
    const err = entry.err as { type?: string; message?: string; stack?: string } | undefined;
    if (err)
      text += `\n    ${(err.stack ?? `${err.type ?? 'Error'}: ${err.message ?? ''}`).split('\n').join('\n    ')}`;
    return text;
  }

  #level(level: number): string {
    const name = (LEVELS[level] ?? String(level)).padEnd(5);
    return this.#colour ? `\x1b[${COLOURS[level] ?? '0'}m${name}\x1b[0m` : name;
  }

  #dim(text: string): string {
    return this.#colour ? `\x1b[2m${text}\x1b[0m` : text;
  }
}

/**
 * The stream the app's logger writes to when it is rewritten for reading, or undefined for JSON
 * (then pino's own destination for standard output stays, with its synchronous writes).
 */
export function prettyDestination(
  asked: LogFormat | null,
  out: LineSink & { isTTY?: boolean } = process.stdout,
): LineSink | undefined {
  return resolveLogFormat(asked, out.isTTY) === 'pretty'
    ? new PrettyLogStream(out, { colour: Boolean(out.isTTY) })
    : undefined;
}
