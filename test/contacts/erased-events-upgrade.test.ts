// Migration 035: events that an erasure of the release before emptied whole ('{"erased":true}', no
// envelope) read again as events, their `data` erased, through GET /events and GET /events/{id}.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { call, tenant } from '../helpers/client.ts';
import { useTestApp } from '../helpers/setup.ts';

const env = useTestApp();
const MIGRATION = readFileSync(
  new URL('../../migrations/035_erased_event_envelopes.sql', import.meta.url),
  'utf8',
);

describe('migration 035', () => {
  it('gives an event erased whole its envelope back, its data erased', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const made = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: '+14155550142' } });
    expect(made.status).toBe(201);
    const listed = await call(env.app, 'GET', '/events?type=contact.created', { key: t.apiKey });
    const event = listed.body.data[0];
    expect(event).toMatchObject({ type: 'contact.created', data: { id: made.body.id } });
    // What an erasure of the release before left.
    await env.tdb.db.query(`UPDATE events SET payload = '{"erased":true}' WHERE id = $1`, [event.id]);
    // (GET /events could not read it: 500, until the migration.)

    await env.tdb.db.exec(MIGRATION);
    const again = await call(env.app, 'GET', '/events?type=contact.created', { key: t.apiKey });
    expect(again.status).toBe(200);
    const erased = {
      id: event.id,
      type: 'contact.created',
      createdAt: event.createdAt,
      data: { erased: true },
    };
    expect(again.body.data[0]).toMatchObject(erased);
    const one = await call(env.app, 'GET', `/events/${event.id}`, { key: t.apiKey });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject(erased);
  });
});
