// The two halves of a merge arriving at once, in two server processes on one PostgreSQL database:
// a customer known by number and, separately, by user id alone sends a message carrying both ids to
// one process while their answer to the request for their number (a `contacts` message of origin
// contact_request) reaches the other. Whichever commits first merges; the other finds one contact.
// Round after round: one contact left, every message stored once, all of them the survivor's.
// Needs TEST_DATABASE_URL (PostgreSQL); skipped on PGlite, which is one process by nature.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import { bootstrapPartner, call, type Partner } from '../helpers/client.ts';
import { createTestApp, createTestDatabase, onPostgres, type TestDatabase } from '../helpers/harness.ts';
import { whatsappTenant } from '../helpers/messaging.ts';
import { exited, type ServerProcess, startServerProcess } from '../helpers/processes.ts';

const ROUNDS = 6;

describe.skipIf(!onPostgres)('a merge whose two halves reach two processes at once', () => {
  let tdb: TestDatabase;
  let app: App;
  let partner: Partner;
  let fake: FakeWhatsAppCloud;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    fake = await FakeWhatsAppCloud.start();
    tdb = await createTestDatabase();
    app = await createTestApp(tdb.db, { config: { whatsappGraphUrl: fake.graphUrl } });
    partner = await bootstrapPartner(app);
    const env = { DATABASE_URL: tdb.url!, TIDINGS_RUN_WORKERS: 'false' };
    servers.push(...(await Promise.all([1, 2].map(() => startServerProcess(env, { readyMs: 120_000 })))));
  }, 180_000);

  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => exited(s.child, 10_000)));
    await app?.close();
    await tdb?.drop();
    await fake?.close();
  });

  it('leaves one contact with every message, round after round', async () => {
    const t = await whatsappTenant(app, partner.partnerKey, fake, {}, { metaReportsSent: false });
    const wamid = () => `wamid.${randomBytes(24).toString('base64')}`;
    const now = () => String(Math.floor(Date.now() / 1000));
    const post = (server: ServerProcess, value: Record<string, unknown>) =>
      fake.postCallback(`${server.base}/api/v1/callbacks/whatsapp/${t.accountId}`, t.business, {
        object: 'whatsapp_business_account',
        entry: [
          {
            id: t.business.businessAccountId,
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: {
                    display_phone_number: '15550000000',
                    phone_number_id: t.business.phoneNumberId,
                  },
                  ...value,
                },
              },
            ],
          },
        ],
      });
    for (let round = 0; round < ROUNDS; round++) {
      const digits = `1650555${String(1000 + round)}`;
      const userId = `US.${String(13491208655302741918n + BigInt(round))}`;
      const known = await call(app, 'POST', '/contacts', { key: t.apiKey, body: { phone: `+${digits}` } });
      expect(known.status, JSON.stringify(known.body)).toBe(201);
      const contact = { profile: { name: 'Sheena Nelson', username: `sheena${round}` }, user_id: userId };
      // Known by user id alone first.
      const first = await post(servers[0]!, {
        contacts: [contact],
        messages: [
          { from_user_id: userId, id: wamid(), timestamp: now(), type: 'text', text: { body: 'Hi' } },
        ],
      });
      expect(first.status, first.body).toBe(200);
      // The two halves, at once, one to each process.
      const [both, shared] = await Promise.all([
        post(servers[0]!, {
          contacts: [{ ...contact, wa_id: digits }],
          messages: [
            {
              from: digits,
              from_user_id: userId,
              id: wamid(),
              timestamp: now(),
              type: 'text',
              text: { body: 'Me' },
            },
          ],
        }),
        post(servers[1]!, {
          contacts: [contact],
          messages: [
            {
              from_user_id: userId,
              id: wamid(),
              timestamp: now(),
              type: 'contacts',
              contacts: [
                {
                  origin: 'contact_request',
                  name: { formatted_name: 'Sheena Nelson' },
                  phones: [{ phone: `+${digits}`, wa_id: digits, type: 'CELL' }],
                },
              ],
            },
          ],
        }),
      ]);
      expect(both.status, both.body).toBe(200);
      expect(shared.status, shared.body).toBe(200);

      const found = await call(app, 'GET', '/contacts', { key: t.apiKey, query: { whatsappUserId: userId } });
      expect(found.body.data, `round ${round}`).toHaveLength(1);
      expect(found.body.data[0]).toMatchObject({ id: known.body.id, phone: `+${digits}` });
      const byPhone = await call(app, 'GET', '/contacts', { key: t.apiKey, query: { phone: `+${digits}` } });
      expect(byPhone.body.data).toHaveLength(1);
      const messages = await call(app, 'GET', '/messages', {
        key: t.apiKey,
        query: { direction: 'inbound', to: `+${digits}`, limit: '100' },
      });
      const all = await call(app, 'GET', '/messages', {
        key: t.apiKey,
        query: { direction: 'inbound', limit: '100' },
      });
      const theirs = all.body.data.filter((m: any) => m.contactId === known.body.id);
      expect(theirs, `round ${round}: ${JSON.stringify(messages.body.data)}`).toHaveLength(3);
      expect(new Set(theirs.map((m: any) => m.providerMessageId)).size).toBe(3);
    }
  }, 180_000);
});
