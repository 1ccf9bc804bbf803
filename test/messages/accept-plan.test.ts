// The query plan of the read every batch of sends starts with (accept-batch.ts): the recipients'
// contacts must be found through the (account_id, phone) unique index, one lookup per recipient
// (and a recipient named by WhatsApp user id through the (account_id, whatsapp_user_id) one),
// also under the generic plan that PostgreSQL settles on for a prepared statement run thousands of
// times. An earlier form (`account_id = ANY(…) AND phone = ANY(…)`) got, on a table of many small
// lists, a generic plan that read every contact of the sending accounts through an index on
// account_id alone, on every batch. The locked transaction runs on those generic plans (below).
import { beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/kernel/database/db.ts';
import { Jobs } from '../../src/kernel/jobs/jobs.ts';
import { EventOutbox } from '../../src/kernel/outbox/events.ts';
import { type AcceptServices, DISPATCH_JOB } from '../../src/modules/messages/accept.ts';
import { READ_LOCKED, READ_UNLOCKED } from '../../src/modules/messages/accept-batch.ts';
import { AcceptQueue } from '../../src/modules/messages/accept-queue.ts';
import { prepareMessage, templateLookup } from '../../src/modules/messages/prepare.ts';
import { loadPrices } from '../../src/modules/pricing/prices.ts';
import { ApprovedTemplates } from '../../src/modules/templates/approved.ts';
import { webhookFanOut } from '../../src/modules/webhooks/outbox.ts';
import { call, tenant } from '../helpers/client.ts';
import { onPostgres } from '../helpers/harness.ts';
import { sandboxTenant } from '../helpers/messaging.ts';
import { useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

// The benchmark's shape (bench:send): many accounts with a hundred recipients each.
const ACCOUNTS = 20;
const PER_ACCOUNT = 100;
const SEED_TIMEOUT = 240_000;
const phone = (n: number) => `+1201${String(n).padStart(7, '0')}`;
const userId = (n: number) => `US.1${String(n).padStart(18, '0')}`;

/** The generic plan of `statement` (a prepared statement's plan once it stopped re-planning). */
async function genericPlan(statement: string, params: unknown[]): Promise<string> {
  return env.tdb.db.transaction(async (tx) => {
    await tx.exec('SET LOCAL plan_cache_mode = force_generic_plan');
    await tx.exec(`PREPARE accept_read_plan (text[], text[], text[], text[], text[]) AS ${statement}`);
    try {
      const literal = (v: unknown) => `'${JSON.stringify(v).replace(/^\[/, '{').replace(/\]$/, '}')}'`;
      const { rows } = await tx.query<Record<string, string>>(
        `EXPLAIN EXECUTE accept_read_plan (${params.map(literal).join(', ')})`,
      );
      return rows.map((r) => Object.values(r)[0]!).join('\n');
    } finally {
      await tx.exec('DEALLOCATE accept_read_plan');
    }
  });
}

describe(`the accept read's plan with ${ACCOUNTS} accounts of ${PER_ACCOUNT} contacts`, () => {
  const accounts: string[] = [];

  beforeAll(async () => {
    for (let i = 0; i < ACCOUNTS; i++) {
      const { accountId } = await tenant(env.app, env.partner.partnerKey);
      accounts.push(accountId);
      await env.tdb.db.query(
        `INSERT INTO contacts (id, account_id, phone, whatsapp_user_id, created_at, updated_at)
         SELECT 'ctc_' || $2 || lpad(g::text, 20, '0'), $1, '+1201' || lpad(g::text, 7, '0'),
                'US.1' || lpad(g::text, 18, '0'), now(), now()
           FROM generate_series(1, $3) AS g`,
        [accountId, String(i).padStart(3, '0'), PER_ACCOUNT],
      );
    }
    await env.tdb.db.exec('VACUUM ANALYZE contacts');
  }, SEED_TIMEOUT);

  for (const [name, statement] of [
    ['unlocked', READ_UNLOCKED],
    ['locked', READ_LOCKED],
  ] as const) {
    it(`${name}: one unique-index lookup per recipient, never the accounts' whole lists`, async () => {
      const [a, b] = accounts as [string, string];
      const plan = await genericPlan(statement, [
        [a, b],
        [a, a, b],
        [phone(7), phone(8), phone(9)],
        [b],
        [userId(5)],
      ]);
      console.log(`[${env.tdb.db.kind}] ${name}\n${plan}`);
      expect(plan).toMatch(/Index (Only )?Scan using contacts_phone_unique on contacts/);
      expect(plan).toMatch(/Index (Only )?Scan using contacts_whatsapp_user_unique on contacts/);
      expect(plan).not.toMatch(/Seq Scan on contacts|Bitmap Heap Scan on contacts/);
    });
  }

  it('finds exactly the recipients asked for, pair by pair', async () => {
    const [a, b] = accounts as [string, string];
    // a/7 and b/8 exist; a/8 and b/7 exist too but were not asked for; a/99,999,999 does not exist.
    // By user id: b/5 exists, a/5 exists but was not asked for.
    const { rows } = await env.tdb.db.query<{ account_id: string | null; phone: string | null }>(
      READ_UNLOCKED,
      [[a], [a, b, a], [phone(7), phone(8), '+12019999999'], [b], [userId(5)]],
    );
    expect(rows.map((r) => `${r.account_id}/${r.phone}`).sort()).toEqual(
      [`${a}/${phone(7)}`, `${b}/${phone(8)}`, `${b}/${phone(5)}`].sort(),
    );
  });
});

// A send to a new number takes the locked transaction (it creates the contact). PostgreSQL plans a
// prepared statement again for each call's parameters while such a custom plan looks cheaper than
// the generic one, and for these statements it always does (the generic plan counts 100 elements
// of each unnest where a call has one): 0.9 ms of planning a send. The accept transaction runs them
// on their generic plans (checked above), planned once per connection.
describe.runIf(onPostgres)('sends to new numbers, on one connection', () => {
  it('run the accept read and write on their generic plans, not re-planned on each call', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const template = await call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: {
        name: 'plan_once',
        language: 'en_US',
        category: 'UTILITY',
        components: [
          {
            type: 'BODY',
            text: 'Hi {{1}}, see you on {{2}} at the shop.',
            example: { body_text: [['Ann', 'Monday']] },
          },
        ],
      },
    });
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    // (The review itself is not this test's business: this app runs no workers.)
    await env.tdb.db.query(`UPDATE templates SET status = 'APPROVED' WHERE id = $1`, [template.body.id]);
    // One connection, so that pg_prepared_statements (one session's) shows every call.
    const db = await openPostgres(env.tdb.url!, 1);
    const jobs = new Jobs(db);
    jobs.define({ name: DISPATCH_JOB, handle: async () => {} });
    await jobs.start();
    try {
      const s: AcceptServices = {
        db,
        jobs,
        events: new EventOutbox(() => new Date(), [webhookFanOut]),
        prices: loadPrices(null),
        approvedTemplates: new ApprovedTemplates(),
        now: () => new Date(),
      };
      const queue = new AcceptQueue(s, 1);
      const lookup = templateLookup(db, t.accountId, s.approvedTemplates);
      const sends = 8;
      for (let n = 0; n < sends; n++) {
        const message = await prepareMessage(
          {
            to: `+1301555${String(n).padStart(4, '0')}`,
            templateName: 'plan_once',
            templateLanguage: 'en_US',
            parameters: ['Ann', 'Monday'],
          },
          { countryCode: 'US', lookup },
        );
        const result = await queue.submit({
          sender: { account: { id: t.accountId, channelProvider: 'sandbox' }, mode: 'sandbox' },
          message,
        });
        expect(result.kind).toBe('accepted');
      }
      const { rows } = await db.query<{ name: string; generic_plans: number; custom_plans: number }>(
        `SELECT name, generic_plans, custom_plans FROM pg_prepared_statements
          WHERE name IN ('accept-read-locked', 'accept-write') ORDER BY name`,
      );
      expect(rows).toEqual([
        { name: 'accept-read-locked', generic_plans: sends, custom_plans: 0 },
        { name: 'accept-write', generic_plans: sends, custom_plans: 0 },
      ]);
    } finally {
      await jobs.stop(1000);
      await db.close();
    }
  });
});
