// The appointment reminder journey of docs/automation.md, run as written: its template (with the
// buttons the journey waits for), the journey, its publish and its trigger for a number the
// account does not have, read from the page itself. The customer taps Confirm; the reminder they got
// greets them without a name and shows the appointment in their zone, not as an ISO time.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { FakeClock } from '../helpers/harness.ts';
import { eventually, sandboxTenantWithKey, useMessagingApp } from '../helpers/messaging.ts';

// A Monday, 10:00 in New York: inside the journey's send window.
const clock = new FakeClock(Date.parse('2026-11-30T15:00:00Z'));
const env = useMessagingApp({
  now: clock.now,
  config: { automationPollMs: 50, automationScanMs: 3_600_000 },
});

/** The JSON bodies (`-d '…'`) of the page's Journeys section, in order. */
function journeyBodies(): Record<string, any>[] {
  const page = readFileSync(new URL('../../docs/automation.md', import.meta.url), 'utf8');
  const section = page.slice(page.indexOf('## Journeys\n'), page.indexOf('\n**Nodes and their edges.**'));
  return [...section.matchAll(/-d '(\{[\s\S]*?\})'/g)].map((m) => JSON.parse(m[1]!));
}

describe('docs/automation.md, the journey example', () => {
  it('runs as written: template with its buttons, journey, publish, trigger by number, a tap on Confirm', async () => {
    const t = await sandboxTenantWithKey(env.app, env.partner.partnerKey);
    const [templateBody, journeyBody, triggerBody] = journeyBodies();
    const template = await call(env.app, 'POST', '/templates', { key: t.apiKey, body: templateBody });
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    await call(env.app, 'POST', `/templates/${template.body.id}/submit`, { key: t.apiKey });
    await eventually(
      () => call(env.app, 'GET', `/templates/${template.body.id}`, { key: t.apiKey }),
      (r) => r.body.status === 'APPROVED',
    );
    const journey = await call(env.app, 'POST', '/journeys', { key: t.apiKey, body: journeyBody });
    expect(journey.status, JSON.stringify(journey.body)).toBe(201);
    const published = await call(env.app, 'POST', `/journeys/${journey.body.id}/publish`, { key: t.apiKey });
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    const run = await call(env.app, 'POST', `/journeys/${journey.body.id}/trigger`, {
      key: t.sandboxKey,
      body: triggerBody,
    });
    expect(run.status, JSON.stringify(run.body)).toBe(202);
    const runOf = (done: (r: any) => boolean) =>
      eventually(
        () => call(env.app, 'GET', `/journeys/${journey.body.id}/runs/${run.body.id}`, { key: t.apiKey }),
        (r) => r.status === 200 && done(r.body),
      ).then((r) => r.body);
    await runOf((r) => r.status === 'waiting' && r.currentNodeId === 'before');
    // A day before the appointment, in the sandbox: now.
    await call(env.app, 'POST', '/sandbox/wake', { key: t.sandboxKey, body: { runId: run.body.id } });
    const asked = await runOf((r) => r.currentNodeId === 'answer');
    const messageId = asked.steps[1].output.messageId as string;
    const reminder = await eventually(
      () => call(env.app, 'GET', `/messages/${messageId}`, { key: t.apiKey }),
      (r) => r.body.providerMessageId !== null,
    );
    expect(reminder.body.template.parameters).toEqual(['there', 'Thursday, December 3, 2026 at 5:00 AM']);
    expect(reminder.body.template.body).toBe(
      'Hi there, your appointment is on Thursday, December 3, 2026 at 5:00 AM. Can you make it?',
    );

    const tap = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: triggerBody.to, replyTo: messageId, button: { text: 'Confirm' } },
    });
    expect(tap.status, JSON.stringify(tap.body)).toBe(201);
    const done = await runOf((r) => r.status !== 'waiting' && r.status !== 'running');
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.steps.map((s: any) => `${s.nodeId}:${s.edge}`)).toEqual([
      'before:next',
      'remind:next',
      'answer:reply',
      'which:case:yes',
      'confirmed:next',
    ]);
    const contact = await call(env.app, 'GET', `/contacts/${run.body.contactId}`, { key: t.apiKey });
    expect(contact.body.tags).toEqual(['confirmed']);
  });
});
