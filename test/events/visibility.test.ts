// Which events a console agent reads (docs/history/issue-43.md, events), beyond the isolation
// matrix's world: an event type about several resources is shown by the resource it is about
// (`bulk_job.completed` of a contact import, whose route an agent may call, and not of a sequence
// enrolment, whose route it may not), and the filter is the statement's, so an agent's pages are
// full and its cursor walks them however many events it may not read lie between.
import { describe, expect, it } from 'vitest';
import { call, tenant } from '../helpers/client.ts';
import { memberSession } from '../helpers/console.ts';
import { credit } from '../helpers/messaging.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';
import { eventually } from '../helpers/wait.ts';

const env = useTestApp({ workers: true });

let phones = 6000;
const phone = () => `+1415555${phones++}`;

async function completed(key: string, path: string): Promise<void> {
  const job = await eventually(
    async () => (await call(env.app, 'GET', path, { key })).body,
    (body) => body.status === 'completed',
  );
  expect(job.status, JSON.stringify(job)).toBe('completed');
}

describe('what an agent reads of the events', () => {
  it('bulk_job.completed of a contact import, not of a sequence enrolment (an admin reads both)', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const agent = await memberSession(env.app, t.apiKey, 'agent');
    const made = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: phone() } });
    const imported = await call(env.app, 'POST', '/bulk/contacts', {
      key: t.apiKey,
      body: { contacts: [{ phone: phone() }] },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(202);
    await completed(t.apiKey, `/bulk/contacts/${imported.body.jobId}`);
    const sequence = await call(env.app, 'POST', '/sequences', {
      key: t.apiKey,
      body: { name: 'drip', steps: [{ delay: { after: 'P1D' }, message: { type: 'text', text: 'Hi' } }] },
    });
    expect(sequence.status, JSON.stringify(sequence.body)).toBe(201);
    expect(
      (await call(env.app, 'POST', `/sequences/${sequence.body.id}/publish`, { key: t.apiKey })).status,
    ).toBe(200);
    const enrolled = await call(env.app, 'POST', `/sequences/${sequence.body.id}/enrollments`, {
      key: t.apiKey,
      body: { contactIds: [made.body.id] },
    });
    expect(enrolled.status, JSON.stringify(enrolled.body)).toBe(202);
    await completed(t.apiKey, `/bulk/enrollments/${enrolled.body.jobId}`);

    const query = { type: 'bulk_job.completed' };
    const ofAdmin = await call(env.app, 'GET', '/events', { key: t.apiKey, query });
    expect(ofAdmin.body.data.map((e: any) => e.data.kind).sort()).toEqual(['contacts', 'enrollments']);
    const ofAgent = await call(env.app, 'GET', '/events', { cookie: agent.cookie, query });
    expect(ofAgent.status).toBe(200);
    expect(ofAgent.body.data.map((e: any) => e.data.kind)).toEqual(['contacts']);
    for (const event of ofAdmin.body.data) {
      const one = await call(env.app, 'GET', `/events/${event.id}`, { cookie: agent.cookie });
      if (event.data.kind === 'contacts') expect(one.body).toEqual(event);
      else expectError(one, 404, 'RESOURCE_NOT_FOUND');
    }
    const streamed = await call(env.app, 'GET', '/events/stream', {
      cookie: agent.cookie,
      query: { types: 'bulk_job.*', since: '2000-01-01T00:00:00Z' },
    });
    expect(streamed.status).toBe(200);
    expect(String(streamed.body)).toContain('"kind":"contacts"');
    expect(String(streamed.body)).not.toContain('"kind":"enrollments"');
  });

  it('gets full pages and a cursor that walks them, with many events it may not read between', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const agent = await memberSession(env.app, t.apiKey, 'agent');
    const contacts: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: phone() } });
      contacts.unshift(res.body.id);
      // Ten wallet.credited events after each contact: the agent may not read them.
      for (let c = 0; c < 10; c++) await credit(env.app, env.partner.partnerKey, t.accountId, '1.00');
    }
    for (const query of [{}, { type: 'contact.*' }] as Record<string, string>[]) {
      const pages: string[][] = [];
      let cursor: string | null = null;
      do {
        const res: { status: number; body: any } = await call(env.app, 'GET', '/events', {
          cookie: agent.cookie,
          query: { ...query, limit: '2', ...(cursor ? { cursor } : {}) },
        });
        expect(res.status).toBe(200);
        pages.push(res.body.data.map((e: any) => `${e.type} ${e.data.id}`));
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      expect(pages.flat()).toEqual(contacts.map((id) => `contact.created ${id}`));
    }
  });
});
