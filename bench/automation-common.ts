import { randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import { sleep } from './support.ts';

export const RATE = Number(process.env.BENCH_AUTOMATION_RATE ?? 200);
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
export const RULE_ACCOUNTS = Number(process.env.BENCH_AUTOMATION_ACCOUNTS ?? 10);
export const ENROLLMENTS = Number(process.env.BENCH_AUTOMATION_ENROLLMENTS ?? 10_000);
export const BULK_CONCURRENCY = Number(process.env.BENCH_AUTOMATION_BULK_CONCURRENCY ?? 4);
export const JOURNEY_RUNS = Number(process.env.BENCH_JOURNEY_RUNS ?? 10_000);
export const TRIGGER_RATE = Number(process.env.BENCH_JOURNEY_TRIGGER_RATE ?? 100);
export const TRIGGER_SECONDS = Number(process.env.BENCH_JOURNEY_TRIGGER_SECONDS ?? SECONDS);
export const WAITING_RUNS = Number(process.env.BENCH_JOURNEY_WAITING ?? 100_000);
export const WAITING_DUE = Number(process.env.BENCH_JOURNEY_WAITING_DUE ?? 10_000);
export const HOLD_SECONDS = Number(process.env.BENCH_JOURNEY_HOLD_SECONDS ?? 15);
/** Trigger requests in flight at once while runs are set up. */
export const TRIGGER_CONCURRENCY = 16;
export const TIMER_ACCOUNTS = 10;
export const POOL_SIZE = 10;
export const WARM_UP_SECONDS = 3;
export const TOKEN = randomBytes(24).toString('hex');
export const SECRETS_KEY = randomBytes(32).toString('base64');
export const TEXT = 'Hello';
export const SERVER_ENV = { BOOTSTRAP_TOKEN: TOKEN, SECRETS_KEY, TIDINGS_PARTNER_RATE_LIMIT: '100000' };

// Distinct US numbers, clear of the sandbox's test numbers (555-0101 … 555-0104): customers who
// write in (phase 1), and the contacts of the timers (phase 2).
export const writerPhone = (i: number) => `+1415${4_000_000 + i}`;
export const contactPhone = (i: number) => `+1415${3_000_000 + i}`;

// Every server started (support.ts) adds two listeners of this process's exit; this script starts 9.
process.setMaxListeners(32);

export const lines: string[] = [];
export const say = (line: string) => {
  lines.push(line);
  process.stderr.write(`${line}\n`);
};

export function client(port: number) {
  const http = new Pool(`http://127.0.0.1:${port}`, { connections: 64, pipelining: 1 });
  async function api(method: string, path: string, headers: Record<string, string>, body?: unknown) {
    const res = await http.request({
      method: method as 'GET',
      path: `/api/v1/public${path}`,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : null };
  }
  async function ok(method: string, path: string, key: string, body?: unknown) {
    const res = await api(method, path, { 'x-api-key': key }, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }
  return { http, api, ok };
}

export type Client = ReturnType<typeof client>;

export interface Account {
  id: string;
  /** A live key, for the setup (rules, contacts, sequences). */
  key: string;
  /** A sandbox key: it plays the customer, enrols (the steps go to the sandbox) and bulk-sends. */
  sandboxKey: string;
}

export async function bootstrap(c: Client): Promise<string> {
  const res = await c.api('POST', '/partner/bootstrap', { authorization: `Bearer ${TOKEN}` });
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`bootstrap: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.apiKey as string;
}

/** Accounts on the Scale plan (automation, and 500 calls/s each), each with a live and a sandbox key. */
export async function provision(
  c: Client,
  partnerKey: string,
  count: number,
  label: string,
): Promise<Account[]> {
  const accounts: Account[] = [];
  for (let i = 0; i < count; i++) {
    const { accountId } = await c.ok('POST', '/partner/accounts', partnerKey, {
      accountName: `bench ${label} ${i}`,
      countryCode: 'US',
      planCode: 'scale',
    });
    const keyOf = async (scope: 'live' | 'sandbox') =>
      (
        await c.ok('POST', `/partner/accounts/${accountId}/keys`, partnerKey, {
          name: `bench ${scope}`,
          scope,
        })
      ).apiKey as string;
    accounts.push({ id: accountId, key: await keyOf('live'), sandboxKey: await keyOf('sandbox') });
  }
  return accounts;
}

/** Polls a bulk job until it has finished; throws unless every item succeeded. */
export async function completedJob(c: Client, key: string, path: string, timeoutMs = 300_000) {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const job = await c.ok('GET', path, key);
    if (job.status === 'completed' || job.status === 'failed') {
      if (job.status !== 'completed' || job.failed > 0 || job.succeeded !== job.total) {
        const firstError = (job.results as { error: unknown }[]).find((r) => r.error)?.error;
        throw new Error(
          `${path}: ${job.status}, ${job.succeeded}/${job.total} succeeded (${JSON.stringify(job.error ?? firstError)})`,
        );
      }
      return job;
    }
    if (performance.now() > until)
      throw new Error(`${path}: still ${job.status} after ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}

export interface TimerSetup {
  accounts: Account[];
  /** Per account: its sequence, and its contacts' ids and phones. */
  sequences: string[];
  contactIds: string[][];
  phones: string[][];
  enrollmentIds: string[];
}
