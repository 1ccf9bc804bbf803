// The monthly count off the request path (src/kernel/access/usage-meter.ts): several meters on one database
// stand for several processes. Whatever the interleaving, they never admit a call past the quota
// between them; what they admitted is written exactly once, by month and by day; a lease unused for
// a flush interval goes back; a process that dies holding a lease makes the month stop short by its
// unused part, never pass the quota. (Through HTTP, with real processes: limits.test.ts and
// multi-process.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { UsageMeter } from '../../src/kernel/access/usage-meter.ts';
import { bootstrapPartner, type Partner, tenant } from '../helpers/client.ts';
import { createTestApp, createTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { eventually } from '../helpers/wait.ts';

let tdb: TestDatabase;
let app: App;
let partner: Partner;

beforeAll(async () => {
  tdb = await createTestDatabase();
  app = await createTestApp(tdb.db);
  partner = await bootstrapPartner(app);
});

afterAll(async () => {
  await app?.close();
  await tdb?.drop();
});

const NOW = new Date('2026-11-15T12:00:00Z');

async function account(): Promise<string> {
  return (await tenant(app, partner.partnerKey, { planCode: 'business' })).accountId;
}

function meters(n: number): UsageMeter[] {
  return Array.from({ length: n }, () => new UsageMeter(tdb.db, { flushMs: 0, onError: () => {} }));
}

async function monthRow(accountId: string, period = '2026-11') {
  const { rows } = await tdb.db.query<{ calls: number; leased: number }>(
    'SELECT calls, leased FROM api_usage_monthly WHERE account_id = $1 AND period = $2',
    [accountId, period],
  );
  return rows[0] ?? null;
}

async function dayRows(accountId: string) {
  const { rows } = await tdb.db.query<{ day: string; calls: number }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, calls FROM api_usage_daily WHERE account_id = $1 ORDER BY day`,
    [accountId],
  );
  return rows;
}

describe('usage meter', () => {
  it('four processes never pass the quota between them, and hand back what they did not use', async () => {
    const id = await account();
    const limit = 1000;
    const processes = meters(4);
    // 2,400 calls at once, spread over the processes, while two of them flush in the middle.
    const calls = Array.from({ length: 2400 }, (_, i) => processes[i % 4]!.admit(id, limit, NOW));
    const flushes = [processes[0]!.flush(), processes[2]!.flush()];
    const decisions = await Promise.all(calls);
    await Promise.all(flushes);
    const admitted = decisions.filter((d) => d.allowed).length;
    expect(admitted).toBeLessThanOrEqual(limit);
    // The counts each admitted call saw are all within the quota.
    for (const d of decisions) expect(d.used).toBeLessThanOrEqual(limit);
    // Once every process has written its calls and given back its unused leases, the rest of the
    // quota is there to take, call by call, and no more.
    for (const p of processes) await p.close();
    expect(await monthRow(id)).toEqual({ calls: admitted, leased: 0 });
    const last = meters(1)[0]!;
    let more = 0;
    while ((await last.admit(id, limit, NOW)).allowed) more++;
    expect(admitted + more).toBe(limit);
    await last.close();
    expect(await monthRow(id)).toEqual({ calls: limit, leased: 0 });
    expect(await dayRows(id)).toEqual([{ day: '2026-11-15', calls: limit }]);
  });

  it('counts each call once in its own day and month, across midnight at the end of a month', async () => {
    const id = await account();
    const [meter] = meters(1);
    for (const at of ['2026-10-31T23:59:59.990Z', '2026-11-01T00:00:00.010Z', '2026-11-01T00:00:00.020Z']) {
      expect(await meter!.admit(id, null, new Date(at))).toMatchObject({ allowed: true });
    }
    // Read before the write: the report includes what the process has not written yet.
    const unwritten = await meter!.read(async (of) => Object.fromEntries(of(id)));
    expect(unwritten).toEqual({ '2026-10-31': 1, '2026-11-01': 2 });
    await meter!.flush();
    expect(await monthRow(id, '2026-10')).toEqual({ calls: 1, leased: 0 });
    expect(await monthRow(id, '2026-11')).toEqual({ calls: 2, leased: 0 });
    expect(await dayRows(id)).toEqual([
      { day: '2026-10-31', calls: 1 },
      { day: '2026-11-01', calls: 2 },
    ]);
    expect(await meter!.read(async (of) => of(id).size)).toBe(0);
    await meter!.close();
  });

  it('keeps a lease in use across flushes, and gives it back once idle for one', async () => {
    const id = await account();
    const [meter] = meters(1);
    // 6,400 left: a block of 100.
    expect(await meter!.admit(id, 6400, NOW)).toEqual({ allowed: true, limit: 6400, used: 1 });
    expect(await monthRow(id)).toEqual({ calls: 0, leased: 100 });
    await meter!.flush();
    expect(await monthRow(id)).toEqual({ calls: 1, leased: 99 });
    expect(await meter!.admit(id, 6400, NOW)).toEqual({ allowed: true, limit: 6400, used: 2 });
    await meter!.flush();
    expect(await monthRow(id)).toEqual({ calls: 2, leased: 98 });
    await meter!.flush();
    expect(await monthRow(id)).toEqual({ calls: 2, leased: 0 });
    await meter!.close();
  });

  it("a plan without a quota: the month's count shows this process's calls at once, the others' within a second", async () => {
    const id = await account();
    const [here, there] = meters(2);
    await there!.admit(id, null, NOW);
    await there!.flush();
    await here!.admit(id, null, NOW);
    expect(await here!.monthCalls(id, NOW)).toBe(2);
    for (let i = 0; i < 3; i++) await here!.admit(id, null, NOW);
    expect(await here!.monthCalls(id, NOW)).toBe(5);
    await there!.admit(id, null, NOW);
    await there!.flush();
    await here!.flush();
    expect(await here!.monthCalls(id, NOW)).toBe(5);
    const seen = await eventually(
      () => here!.monthCalls(id, NOW),
      (n) => n === 6,
      3000,
    );
    expect(seen).toBe(6);
    await here!.close();
    await there!.close();
    expect(await monthRow(id)).toEqual({ calls: 6, leased: 0 });
  });

  it('a process that dies holding a lease makes the month stop short, never pass the quota', async () => {
    const id = await account();
    const [dead, alive] = meters(2);
    const limit = 640;
    expect((await dead!.admit(id, limit, NOW)).allowed).toBe(true); // a block of 10, 9 unused
    let admitted = 0;
    while ((await alive!.admit(id, limit, NOW)).allowed) admitted++;
    await alive!.close();
    expect(admitted).toBe(limit - 10);
    expect(await monthRow(id)).toEqual({ calls: limit - 10, leased: 10 });
  });
});
