// A 300-contact voice campaign at 5 calls per second across two real server processes on one
// PostgreSQL database (docs/history/issue-22.md): the calls per second are held between the
// processes (each call's initiatedAt is the second whose slot it took), contacts where it is night
// are put off to their calling hours (still queued), each contact is called at most once (retry
// maxAttempts 1), and the campaign goes on when one process is killed (SIGKILL, no shutdown) and a
// replacement started: what the dead process had in flight ends (completed, or failed
// PROVIDER_UNKNOWN_OUTCOME after its lease), nothing is left stuck. Pause through one process stops
// every process placing calls; resume goes on. Needs TEST_DATABASE_URL (PGlite has one owner).
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/harness.ts';
import {
  accountOnProcess,
  processApi as api,
  bootstrapOnProcess,
  exited,
  type ServerProcess,
  startServerProcess,
  useDurableStore,
} from '../helpers/processes.ts';
import { eventually, sleep, until } from '../helpers/wait.ts';

const TOTAL = 300;
const NIGHT_COUNT = 30;
const DAY_COUNT = TOTAL - NIGHT_COUNT;
const CPS = 5;
const LEASE_MS = 3000;
const TAG = 'spring';

/** A zone where the local hour now is in `hours` (some zone always is: offsets span a day). */
function zoneWhere(hours: (h: number) => boolean): string {
  const zones = Intl.supportedValuesOf('timeZone');
  const zone = zones.find(
    (z) =>
      hours(DateTime.now().setZone(z).hour) && hours(DateTime.now().plus({ minutes: 5 }).setZone(z).hour),
  );
  if (!zone) throw new Error('no zone found');
  return zone;
}

const phone = (i: number) => `+1415555${String(i).padStart(4, '0')}`;
/** Every tenth contact is somewhere it is night. */
const isNight = (i: number) => i % 10 === 0;

interface Call {
  id: string;
  contactId: string | null;
  status: string;
  initiatedAt: string | null;
  endedAt: string | null;
  error: { code: string } | null;
}

describe.skipIf(!onPostgres)('a voice campaign across two server processes, one killed', () => {
  const store = useDurableStore('voice-campaign', {
    TIDINGS_RUN_WORKERS: 'true',
    TIDINGS_VOICE_SANDBOX_STEP_MS: '50',
    TIDINGS_VOICE_POLL_MS: '50',
    TIDINGS_VOICE_LEASE_MS: String(LEASE_MS),
  });

  async function start(): Promise<ServerProcess> {
    const server = await startServerProcess(store.settings);
    store.servers.push(server);
    return server;
  }

  it('holds 5 calls per second between the processes, skips night, survives a SIGKILL', {
    timeout: 150_000,
  }, async () => {
    const began = Date.now();
    const DAY = zoneWhere((h) => h >= 10 && h < 19);
    const NIGHT = zoneWhere((h) => h >= 23 || h < 6);
    const a = await start();
    // B comes up while A prepares the account (a process takes seconds to start).
    const starting = start();
    const partnerKey = await bootstrapOnProcess(a);
    const { apiKey } = await accountOnProcess(a, partnerKey, 'voice-campaign');

    // The audience, in one bulk job (run by whichever process's worker takes it).
    const contacts = Array.from({ length: TOTAL }, (_, i) => ({
      phone: phone(i),
      tags: [TAG],
      attributes: { timezone: isNight(i) ? NIGHT : DAY },
    }));
    const job = await api(a, 'POST', '/bulk/contacts', apiKey, { contacts, mode: 'create' });
    expect(job.status, JSON.stringify(job.body)).toBe(202);
    const imported = await eventually(
      () => api(a, 'GET', `/bulk/contacts/${job.body.jobId}`, apiKey),
      (r) => r.body.status === 'completed' || r.body.status === 'failed',
      30_000,
    );
    expect(imported.body).toMatchObject({ status: 'completed', succeeded: TOTAL, failed: 0 });
    const contactOf = new Map<string, number>(
      imported.body.results.map((r: { index: number; contactId: string }) => [r.contactId, r.index]),
    );

    const script = await api(a, 'POST', '/voice/scripts', apiKey, {
      name: 'Spring',
      type: 'tts',
      tts: { text: 'Spring is here.' },
    });
    expect(script.status, JSON.stringify(script.body)).toBe(201);
    const published = await api(a, 'POST', `/voice/scripts/${script.body.id}/publish`, apiKey);
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    const made = await api(a, 'POST', '/voice/campaigns', apiKey, {
      name: 'Spring at scale',
      scriptId: script.body.id,
      audience: { tag: TAG },
      schedule: { callingHours: { from: '09:00', until: '20:00' } },
      pacing: { callsPerSecond: CPS, maxConcurrent: 50 },
      retry: { maxAttempts: 1 },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.id as string;
    const campaign = (server: ServerProcess) => api(server, 'GET', `/voice/campaigns/${id}`, apiKey);
    const move = (server: ServerProcess, what: string) =>
      api(server, 'POST', `/voice/campaigns/${id}/${what}`, apiKey);
    const calls = async (server: ServerProcess): Promise<Call[]> => {
      const out: Call[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: any } = await api(
          server,
          'GET',
          `/voice/campaigns/${id}/calls?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
          apiKey,
        );
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        out.push(...page.body.data);
        cursor = page.body.nextCursor;
      } while (cursor);
      return out;
    };
    const ended = (c: { counters: Record<string, number> }) => c.counters.completed + c.counters.failed;

    const b = await starting;
    const started = await move(a, 'start');
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body).toMatchObject({ status: 'running', counters: { total: TOTAL } });
    const campaignBegan = Date.now();

    // About a third through: process A dies without a word, and a replacement comes up.
    await until(
      async () => ended((await campaign(b)).body) >= DAY_COUNT / 3,
      40_000,
      () => 'a third of the calls were not made',
    );
    a.child.kill('SIGKILL');
    expect((await exited(a.child, 10_000)).signal).toBe('SIGKILL');
    const atKill = (await campaign(b)).body.counters;
    const c = await start();

    // Two thirds through: a pause through B stops every process placing calls.
    await until(
      async () => ended((await campaign(c)).body) >= (2 * DAY_COUNT) / 3,
      40_000,
      () => 'two thirds of the calls were not made',
    );
    const paused = await move(b, 'pause');
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.status).toBe('paused');
    expect((await campaign(c)).body.status).toBe('paused');
    const snapshot = async () => {
      const now = await calls(c);
      return { made: now.length, initiated: now.filter((x) => x.initiatedAt !== null).length };
    };
    // A round that had read the campaign as running just before the pause may still place its calls.
    const atPause = await snapshot();
    let before = atPause;
    await until(
      async () => {
        await sleep(300);
        const now = await snapshot();
        const settled = now.made === before.made && now.initiated === before.initiated;
        before = now;
        return settled;
      },
      10_000,
      () => 'calls were still being placed after the pause',
    );
    await sleep(1500);
    expect(await snapshot()).toEqual(before);
    const resumed = await move(b, 'resume');
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body.status).toBe('running');

    // Every day contact called; the night ones put off to their calling hours.
    const settled = await eventually(
      () => campaign(c),
      (r) =>
        r.body.counters.inProgress === 0 &&
        r.body.counters.queued === NIGHT_COUNT &&
        ended(r.body) === DAY_COUNT,
      60_000,
    );
    const counters = settled.body.counters;
    expect(counters).toMatchObject({ total: TOTAL, queued: NIGHT_COUNT, inProgress: 0 });
    expect(counters.busy + counters.noAnswer + counters.canceled).toBe(0);
    expect(counters.queued + counters.inProgress + counters.completed + counters.failed).toBe(TOTAL);
    expect(counters.answered).toBe(counters.completed);
    expect(settled.body.status).toBe('running');

    const all = await calls(b);
    // (2) one call per day contact, none to a night contact (3).
    const perContact = new Map<string, number>();
    for (const x of all) perContact.set(x.contactId!, (perContact.get(x.contactId!) ?? 0) + 1);
    expect(Math.max(...perContact.values())).toBe(1);
    const called = [...perContact.keys()].map((cid) => contactOf.get(cid)!);
    expect(called.filter(isNight)).toEqual([]);
    expect(new Set(called).size).toBe(DAY_COUNT);
    expect(all).toHaveLength(DAY_COUNT);
    // (5) nothing stuck: completed, or failed because the dead process never heard the provider.
    const odd = all.filter(
      (x) =>
        x.status !== 'completed' && !(x.status === 'failed' && x.error?.code === 'PROVIDER_UNKNOWN_OUTCOME'),
    );
    expect(odd).toEqual([]);
    const unknown = all.filter((x) => x.status === 'failed');
    expect(counters.failed).toBe(unknown.length);
    expect(counters.completed).toBe(DAY_COUNT - unknown.length);

    // (1) never more than 5 calls initiated in one second, whichever process placed them.
    const initiated = all
      .filter((x) => x.initiatedAt !== null)
      .map((x) => Date.parse(x.initiatedAt!))
      .sort((p, q) => p - q);
    const perSecond = new Map<number, number>();
    for (const t of initiated)
      perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    const maxPerSecond = Math.max(...perSecond.values());
    const first = initiated[0]!;
    const last = initiated.at(-1)!;
    // Whole seconds from the first call's to the last's; the pause: the longest stretch without a
    // call, and the whole seconds inside it.
    const seconds = Math.floor(last / 1000) - Math.floor(first / 1000) + 1;
    const gap = Math.max(...initiated.slice(1).map((t, i) => t - initiated[i]!));
    const meanRate = initiated.length / seconds;
    const idle = Math.max(
      ...initiated.slice(1).map((t, i) => Math.floor(t / 1000) - Math.floor(initiated[i]! / 1000) - 1),
    );
    const activeRate = initiated.length / (seconds - idle);
    // Calls the killed process left mid-step were taken up again only after their lease.
    const late = all.filter(
      (x) => x.initiatedAt && x.endedAt && Date.parse(x.endedAt) - Date.parse(x.initiatedAt) >= LEASE_MS,
    ).length;
    console.info(
      `voice campaign across processes: ${initiated.length} calls initiated over ${seconds} whole seconds ` +
        `(${((last - first) / 1000).toFixed(1)} s); max ${maxPerSecond} in one second (limit ${CPS}); ` +
        `mean ${meanRate.toFixed(2)}/s, ${activeRate.toFixed(2)}/s without the pause ` +
        `(${(gap / 1000).toFixed(1)} s without a call, ${idle} whole seconds); ${perSecond.size} seconds with a call; killed at ${JSON.stringify(atKill)}; ` +
        `${before.initiated - atPause.initiated} initiated after the pause answered; ` +
        `${unknown.length} failed PROVIDER_UNKNOWN_OUTCOME, ${late} ended only after a lease; ` +
        `campaign ${((Date.now() - campaignBegan) / 1000).toFixed(1)} s, test ${((Date.now() - began) / 1000).toFixed(1)} s`,
    );
    expect(maxPerSecond).toBeLessThanOrEqual(CPS);
    // Paced near the rate, not at a crawl, while running.
    expect(activeRate).toBeGreaterThan(CPS * 0.6);
  });
});
