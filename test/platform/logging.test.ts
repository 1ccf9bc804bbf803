// Logs are JSON lines with a request id per request, or (on a terminal) one readable line each, and
// never hold a key or token in either form.
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { lazyChildLogger } from '../../src/kernel/observability/lazy-logger.ts';
import {
  PrettyLogStream,
  prettyDestination,
  resolveLogFormat,
} from '../../src/kernel/observability/log-format.ts';
import { call, mistypedKey, tenant } from '../helpers/client.ts';
import { BOOTSTRAP_TOKEN } from '../helpers/harness.ts';
import { useTestApp } from '../helpers/setup.ts';

const lines: string[] = [];

const env = useTestApp({
  config: { logLevel: 'trace' },
  logStream: { write: (line) => lines.push(line) },
});

describe('logs', () => {
  it('are JSON with the request id, and hold no key, token or key text', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const ok = await call(env.app, 'GET', '/account', { key: t.apiKey });
    await call(env.app, 'GET', '/account', { key: mistypedKey(t.apiKey) });
    await call(env.app, 'POST', '/partner/bootstrap', {
      headers: { authorization: `Bearer ${BOOTSTRAP_TOKEN}` },
    });
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed.some((l) => l.reqId === ok.headers['x-request-id'])).toBe(true);
    const all = lines.join('\n');
    expect(all).not.toContain(t.apiKey);
    expect(all).not.toContain(t.apiKey.slice(9, 30));
    expect(all).not.toContain(env.partner.partnerKey.slice(12, 40));
    expect(all).not.toContain(BOOTSTRAP_TOKEN);
  });
});

// The same app's lines, rewritten for a terminal (TIDINGS_LOG_FORMAT=pretty, or a TTY).
const prettyLines: string[] = [];
const prettyEnv = useTestApp({
  config: { logLevel: 'info' },
  logStream: new PrettyLogStream({ write: (line: string) => prettyLines.push(line) }),
});

describe('pretty logs', () => {
  it('are one line per request: method, path, status, time and request id', async () => {
    const t = await tenant(prettyEnv.app, prettyEnv.partner.partnerKey);
    prettyLines.length = 0;
    const ok = await call(prettyEnv.app, 'GET', '/account', { key: t.apiKey });
    const reqId = ok.headers['x-request-id'] as string;
    const mine = prettyLines.filter((l) => l.includes(reqId));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatch(
      new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  GET /api/v1/public/account 200 \\d+ms  ${reqId}\\n$`),
    );
    expect(() => JSON.parse(mine[0])).toThrow();
  });

  it('show a refusal’s code and message on its own line, and hold no key, token or key text', async () => {
    const t = await tenant(prettyEnv.app, prettyEnv.partner.partnerKey);
    prettyLines.length = 0;
    await call(prettyEnv.app, 'GET', '/account', { key: mistypedKey(t.apiKey) });
    await call(prettyEnv.app, 'POST', '/partner/bootstrap', {
      headers: { authorization: `Bearer ${BOOTSTRAP_TOKEN}` },
    });
    const all = prettyLines.join('');
    expect(all).toMatch(
      /INFO {2}The API key is missing, unknown, revoked or expired\. {2}code=INVALID_API_KEY req_/,
    );
    expect(all).toMatch(/POST \/api\/v1\/public\/partner\/bootstrap 409 \d+ms/);
    expect(all).not.toContain(t.apiKey);
    expect(all).not.toContain(t.apiKey.slice(9, 30));
    expect(all).not.toContain(BOOTSTRAP_TOKEN);
  });
});

describe('the log format', () => {
  it('is pretty on a terminal and JSON elsewhere, unless TIDINGS_LOG_FORMAT says', () => {
    expect(resolveLogFormat(null, true)).toBe('pretty');
    expect(resolveLogFormat(null, false)).toBe('json');
    expect(resolveLogFormat(null, undefined)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
    expect(loadConfig({}).logFormat).toBeNull();
    expect(loadConfig({ TIDINGS_LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(loadConfig({ TIDINGS_LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ TIDINGS_LOG_FORMAT: 'colour' })).toThrow(
      'TIDINGS_LOG_FORMAT="colour": must be json or pretty',
    );
    // JSON keeps pino's own destination; pretty rewrites what is written to the terminal.
    expect(prettyDestination('json', { write: () => true, isTTY: true })).toBeUndefined();
    expect(prettyDestination(null, { write: () => true, isTTY: false })).toBeUndefined();
    expect(prettyDestination(null, { write: () => true, isTTY: true })).toBeInstanceOf(PrettyLogStream);
  });

  it('prints an error with its stack, other fields as key=value, and a foreign line as it came', () => {
    const out: string[] = [];
    const s = new PrettyLogStream({ write: (l: string) => out.push(l) });
    s.write(
      `${JSON.stringify({ level: 50, time: Date.UTC(2026, 0, 2, 3, 4, 5, 6), msg: 'request failed', reqId: 'req_1', component: 'webhooks', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x (y.ts:1:2)' } })}\n`,
    );
    s.write('not json\n');
    expect(out).toEqual([
      '03:04:05.006 ERROR request failed  component=webhooks req_1\n    Error: boom\n        at x (y.ts:1:2)\n',
      'not json\n',
    ]);
  });
});

// At LOG_LEVEL=warn a request's logger is made at its first warning (kernel/observability/lazy-logger.ts).
const quietLines: string[] = [];
const quietEnv = useTestApp({
  config: { logLevel: 'warn' },
  logStream: { write: (line) => quietLines.push(line) },
});

describe('request loggers at warn', () => {
  it('write no line for answered or refused requests', async () => {
    const t = await tenant(quietEnv.app, quietEnv.partner.partnerKey);
    const ok = await call(quietEnv.app, 'GET', '/account', { key: t.apiKey });
    const refused = await call(quietEnv.app, 'GET', '/account', { key: mistypedKey(t.apiKey) });
    expect([ok.status, refused.status]).toEqual([200, 401]);
    const ids = [ok.headers['x-request-id'], refused.headers['x-request-id']] as string[];
    expect(quietLines.filter((l) => ids.some((id) => l.includes(id)))).toEqual([]);
  });

  it('write a warning with the request id and bindings, the child made once', () => {
    const out: string[] = [];
    const parent = pino({ level: 'warn' }, { write: (line: string) => out.push(line) });
    const made = vi.spyOn(parent, 'child');
    const log = lazyChildLogger(parent, { reqId: 'req_1' }, {});
    log.info('not written');
    log.debug('not written');
    expect(made).not.toHaveBeenCalled();
    expect(log.level).toBe('warn');
    log.warn({ code: 'X' }, 'first');
    log.error('second');
    expect(made).toHaveBeenCalledTimes(1);
    log.child({ step: 2 }).warn('third');
    const parsed = out.map((l) => JSON.parse(l));
    expect(parsed.map((l) => [l.msg, l.reqId, l.level])).toEqual([
      ['first', 'req_1', 40],
      ['second', 'req_1', 50],
      ['third', 'req_1', 40],
    ]);
    expect(parsed[0].code).toBe('X');
    expect(parsed[2].step).toBe(2);
  });

  it('is made at once for a route with its own level', () => {
    const parent = pino({ level: 'warn' }, { write: () => {} });
    const log = lazyChildLogger(parent, { reqId: 'req_2' }, { level: 'debug' });
    expect(log.level).toBe('debug');
  });
});
