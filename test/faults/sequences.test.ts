// Crash safety of the step timer: a server is killed (SIGKILL) while the steps of 400 enrollments
// fall due and are being sent; a new server takes over. Every step of every enrollment is then
// sent exactly once: each enrollment completed with every step `sent`, each step's message a
// different one, and the contacts got exactly one message per step, no more (a step whose batch was
// cut off rolled back with its message, and was sent by the successor). Real server processes: on
// PostgreSQL when TEST_DATABASE_URL is set, else on the embedded database in a temporary DATA_DIR.
import { describe, expect, it } from 'vitest';
import {
  accountOnProcess,
  processApi as api,
  bootstrapOnProcess,
  exited,
  type ServerProcess,
  startServerProcess,
  useDurableStore,
} from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';

const CONTACTS = 400;
const STEPS = ['one', 'two', 'three'];
const phone = (i: number) => `+1415556${String(i).padStart(4, '0')}`;

/** Every item of a list, page by page. */
async function all(server: ServerProcess, key: string, path: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res = await api(server, 'GET', `${path}${sep}limit=100${cursor ? `&cursor=${cursor}` : ''}`, key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    items.push(...res.body.data);
    cursor = res.body.nextCursor;
  } while (cursor);
  return items;
}

describe('the step timer cut short by SIGKILL', () => {
  const store = useDurableStore('sequences-crash', { TIDINGS_AUTOMATION_POLL_MS: '100' });

  async function start(): Promise<ServerProcess> {
    const server = await startServerProcess(store.settings);
    store.servers.push(server);
    return server;
  }

  it('sends every step of every enrollment exactly once across the kill', async () => {
    let server = await start();
    const partnerKey = await bootstrapOnProcess(server);
    const { apiKey: key } = await accountOnProcess(server, partnerKey, 'sequences-crash', 'sandbox');

    // Each contact writes in (the customer service window opens for free-form steps).
    const contactIds: string[] = [];
    for (let i = 0; i < CONTACTS; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          api(server, 'POST', '/sandbox/inbound-messages', key, { from: phone(i + j), text: 'hi' }),
        ),
      );
      for (const res of batch) {
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        contactIds.push(res.body.contactId);
      }
    }
    const made = await api(server, 'POST', '/sequences', key, {
      name: 'Crash',
      steps: STEPS.map((text) => ({ delay: { after: 'PT1S' }, message: { type: 'text', text } })),
      exit: { onReply: false },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const seq = made.body.id as string;
    expect((await api(server, 'POST', `/sequences/${seq}/publish`, key)).status).toBe(200);
    const job = await api(server, 'POST', `/sequences/${seq}/enrollments`, key, { contactIds });
    expect(job.status, JSON.stringify(job.body)).toBe(202);

    // Kill: as soon as steps go out (a page of the newest messages holds some, and fewer than all).
    const total = CONTACTS * STEPS.length;
    let seen = 0;
    await until(
      async () => {
        const page = await api(server, 'GET', '/messages?direction=outbound&limit=100', key);
        seen = page.body.data.length;
        return seen > 0;
      },
      60_000,
      () => 'no step was sent',
    );
    server.child.kill('SIGKILL');
    expect((await exited(server.child, 10_000)).signal).toBe('SIGKILL');
    expect(seen, 'the kill came after every step was sent').toBeLessThan(total);

    server = await start();
    let enrollments: any[] = [];
    await until(
      async () => {
        // One cheap look while some are active: reading all 400 with their steps every 20 ms took
        // a share of the machine from the server it waits for.
        const active = await api(server, 'GET', `/sequences/${seq}/enrollments?status=active&limit=1`, key);
        if (active.body.data?.length !== 0) return false;
        enrollments = await all(server, key, `/sequences/${seq}/enrollments`);
        return enrollments.length === CONTACTS && enrollments.every((e) => e.status !== 'active');
      },
      // Generous: on a slow, busy machine the embedded database sends a few steps a second.
      240_000,
      () => `${enrollments.filter((e) => e.status === 'completed').length} of ${CONTACTS} completed`,
    );
    expect(enrollments.every((e) => e.status === 'completed')).toBe(true);
    const stepMessages = enrollments.flatMap((e) => e.steps.map((s: any) => s.messageId));
    expect(enrollments.flatMap((e) => e.steps.map((s: any) => s.status)).every((s) => s === 'sent')).toBe(
      true,
    );
    expect(new Set(stepMessages).size).toBe(total);
    const messages = await all(server, key, '/messages?direction=outbound');
    expect(messages).toHaveLength(total);
    expect(new Set(messages.map((m) => m.id))).toEqual(new Set(stepMessages));
    const perContactText = new Set(messages.map((m) => `${m.contactId}:${m.text}`));
    expect(perContactText.size).toBe(total);
  }, 360_000);
});
