// The read models other modules read by name (migrations/036_read_models.sql) say what their
// owners say: the views show exactly the owner's columns, in its order, and event_erased agrees
// with the erasure module's isErasedEvent.
import { describe, expect, it } from 'vitest';
import type { ActorRow } from '../../src/modules/automation/actors.ts';
import { CONTACT_COLUMNS } from '../../src/modules/contacts/repo.ts';
import { ERASED_DATA, isErasedEvent } from '../../src/modules/erasure/erase.ts';
import { MESSAGE_COLUMNS } from '../../src/modules/messages/repo.ts';
import { useTestApp } from '../helpers/setup.ts';

const env = useTestApp({ bootstrap: false });

async function columnsOf(view: string): Promise<string[]> {
  const { rows } = await env.tdb.db.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    [view],
  );
  return rows.map((r) => r.column_name);
}

describe('read models', () => {
  it('contact_rows, message_rows and account_actors show their owners’ columns', async () => {
    expect(await columnsOf('contact_rows')).toEqual(CONTACT_COLUMNS.split(', '));
    expect(await columnsOf('message_rows')).toEqual(MESSAGE_COLUMNS.split(', '));
    const actor: Record<keyof ActorRow, true> = {
      account_id: true,
      status: true,
      plan_code: true,
      addons: true,
      country_code: true,
      provider: true,
    };
    expect(await columnsOf('account_actors')).toEqual(Object.keys(actor));
  });

  it('event_erased(payload) answers as isErasedEvent does', async () => {
    const envelope = {
      id: 'evt_1',
      type: 'contact.updated',
      createdAt: '2026-01-01T00:00:00.000Z',
      accountId: 'acc_1',
    };
    // An erasure rewrites `data` through jsonb (erasure/erase.ts): the text jsonb prints.
    const { rows } = await env.tdb.db.query<{ erased: string }>(
      `SELECT jsonb_set($1::jsonb, '{data}', $2::jsonb)::text AS erased`,
      [JSON.stringify({ ...envelope, data: { name: 'Carla' } }), ERASED_DATA],
    );
    const payloads = [
      ERASED_DATA,
      rows[0]!.erased,
      JSON.stringify({ ...envelope, data: { name: 'Carla' } }),
      JSON.stringify({ ...envelope, data: { note: '"data": {"erased": true}' } }),
      JSON.stringify({ ...envelope, data: { erased: true } }),
    ];
    const answers: boolean[] = [];
    for (const payload of payloads) {
      const { rows: r } = await env.tdb.db.query<{ erased: boolean }>('SELECT event_erased($1) AS erased', [
        payload,
      ]);
      answers.push(r[0]!.erased);
    }
    expect(answers).toEqual(payloads.map(isErasedEvent));
    expect(answers).toEqual([true, true, false, false, false]);
  });
});
