// The query plan of the read every batch of sends starts with (accept-batch.ts): the recipients'
// contacts must be found through the (account_id, phone) unique index, one lookup per recipient,
// also under the generic plan that PostgreSQL settles on for a prepared statement run thousands of
// times. An earlier form (`account_id = ANY(…) AND phone = ANY(…)`) got, on a table of many small
// lists, a generic plan that read every contact of the sending accounts through an index on
// account_id alone, on every batch (and the locked variant was re-planned on every call).
import { beforeAll, describe, expect, it } from 'vitest';
import { READ_LOCKED, READ_UNLOCKED } from '../src/modules/messages/accept-batch.ts';
import { tenant } from './helpers/client.ts';
import { useTestApp } from './helpers/setup.ts';

const env = useTestApp();

// The benchmark's shape (bench:send): many accounts with a hundred recipients each.
const ACCOUNTS = 20;
const PER_ACCOUNT = 100;
const SEED_TIMEOUT = 240_000;
const phone = (n: number) => `+1201${String(n).padStart(7, '0')}`;

/** The generic plan of `statement` (a prepared statement's plan once it stopped re-planning). */
async function genericPlan(statement: string, params: unknown[]): Promise<string> {
  return env.tdb.db.transaction(async (tx) => {
    await tx.exec('SET LOCAL plan_cache_mode = force_generic_plan');
    await tx.exec(`PREPARE accept_read_plan (text[], text[], text[]) AS ${statement}`);
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
        `INSERT INTO contacts (id, account_id, phone, created_at, updated_at)
         SELECT 'ctc_' || $2 || lpad(g::text, 20, '0'), $1, '+1201' || lpad(g::text, 7, '0'), now(), now()
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
      ]);
      console.log(`[${env.tdb.db.kind}] ${name}\n${plan}`);
      expect(plan).toMatch(/Index (Only )?Scan using contacts_phone_unique on contacts/);
      expect(plan).not.toMatch(/Seq Scan on contacts|Bitmap Heap Scan on contacts/);
    });
  }

  it('finds exactly the recipients asked for, pair by pair', async () => {
    const [a, b] = accounts as [string, string];
    // a/7 and b/8 exist; a/8 and b/7 exist too but were not asked for; a/99,999,999 does not exist.
    const { rows } = await env.tdb.db.query<{ account_id: string | null; phone: string | null }>(
      READ_UNLOCKED,
      [[a], [a, b, a], [phone(7), phone(8), '+12019999999']],
    );
    expect(rows.map((r) => `${r.account_id}/${r.phone}`).sort()).toEqual(
      [`${a}/${phone(7)}`, `${b}/${phone(8)}`].sort(),
    );
  });
});
