// The inbox's SLA and send later in real Chromium (issue 47): the list sorted "SLA due first" shows
// the soonest due first, each row with its SLA badge; an SLA breach fires a rule (a policy of one
// minute, a rule adding `escalated` on conversation.sla_breached): the agent's open conversation
// shows "First response missed" and the label live, without a reload (axe-core on it); an agent
// schedules a reply for later, sees it scheduled, cancels it and sees it canceled (and one the API
// schedules and cancels, live); an admin adds a
// policy on the SLA policies page (an agent's inbox does not link it).
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { type BrowserEnv, describeBrowser, expectAccessible, useBrowser } from '../helpers/browser.ts';
import { call } from '../helpers/client.ts';
import { memberSession, type Session } from '../helpers/console.ts';
import { signedInPage } from '../helpers/console-page.ts';
import { credit, type SandboxTenant, sandboxTenantWithKey } from '../helpers/messaging.ts';

/** Real time, moved forward past the one-minute due time by the breach's test. */
const clock = { offset: 0, now: () => new Date(Date.now() + clock.offset) };

/** A datetime-local input's value for an instant (the browser's and this process's time zone). */
const localInput = (ms: number) => {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
};

describeBrowser('the inbox’s SLA and send later', () => {
  // The breach scan runs when the test says (automation.scan()); the rules' worker polls quickly.
  const env: BrowserEnv = useBrowser({
    workers: true,
    config: { eventStreamPollMs: 100, automationPollMs: 50, automationScanMs: 3_600_000 },
    now: clock.now,
  });
  let t: SandboxTenant;
  let agent: Session & { memberId: string };
  let admin: Session & { memberId: string };
  let page: Page;
  let problems: string[];
  let ann: { conversationId: string };
  let bea: { conversationId: string };

  const customerWrites = async (from: string, text: string, name: string) => {
    const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from, text, name },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; conversationId: string };
  };
  const api = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await call(env.app, method, path, { key: t.apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body;
  };
  const rows = () => page.getByRole('list', { name: 'Conversations' }).getByRole('link');

  beforeAll(async () => {
    t = await sandboxTenantWithKey(env.app, env.partner.partnerKey);
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    agent = await memberSession(env.app, t.apiKey, 'agent');
    admin = await memberSession(env.app, t.apiKey, 'admin');
    await api('POST', '/sla-policies', { name: 'Fast', firstResponseMinutes: 1 });
    await api('POST', '/rules', {
      name: 'escalate',
      trigger: { event: 'conversation.sla_breached' },
      actions: [{ type: 'add_label', label: 'escalated' }],
    });
    // Ann first (due first), then Bea (the more recent activity).
    ann = await customerWrites('+14155553401', 'My order is late', 'Ann');
    bea = await customerWrites('+14155553402', 'Can I change my address?', 'Bea');
  });

  it('sorts the open conversations SLA due first, each row with its badge', async () => {
    ({ page, problems } = await signedInPage(env, agent, '/inbox'));
    await expect.poll(() => rows().first().textContent()).toContain('Bea');
    expect(await rows().first().textContent()).toMatch(/First response due in \d+ min/);
    expect(await page.getByRole('link', { name: 'SLA policies' }).count()).toBe(0);

    const sort = page.getByLabel('Sort', { exact: true });
    await sort.selectOption('sla_due');
    await expect.poll(() => rows().first().textContent()).toContain('Ann');
    expect(await rows().nth(1).textContent()).toContain('Bea');
    // SLA due first lists open conversations only: another status goes back to recent activity.
    await page.getByLabel('Status', { exact: true }).selectOption('closed');
    await expect.poll(() => sort.inputValue()).toBe('recent');
    expect(await sort.locator('option[value="sla_due"]').isDisabled()).toBe(true);
    await page.getByLabel('Status', { exact: true }).selectOption('open');
    expect(problems).toEqual([]);
  });

  it('shows a breach live and the rule it fires (escalated), without a reload', async () => {
    await rows().filter({ hasText: 'Ann' }).click();
    const sla = page.getByRole('list', { name: 'Service level' });
    await sla.getByText(/^First response due in \d+ min/).waitFor();

    // Past the one-minute due time: the scan finds it missed, the rule adds `escalated`.
    clock.offset = 2 * 60_000;
    await env.app.ctx.automation.scan();
    await sla.getByText(/^First response missed/).waitFor({ timeout: 15_000 });
    await page
      .getByRole('list', { name: 'Labels' })
      .getByRole('button', { name: 'Remove label escalated' })
      .waitFor({ timeout: 15_000 });
    const row = rows().filter({ hasText: 'Ann' });
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('First response missed');
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('escalated');
    expect((await api('GET', `/conversations/${ann.conversationId}`)).labels).toEqual(['escalated']);
    await expectAccessible(page, 'a conversation showing its missed SLA, 1280 px');
    expect(problems).toEqual([]);
  });

  it('schedules a reply for later, shows it scheduled, and cancels it', async () => {
    await rows().filter({ hasText: 'Bea' }).click();
    await page.getByRole('log', { name: 'Messages' }).getByText('Can I change my address?').waitFor();
    await page.getByLabel('Reply', { exact: true }).fill('We will call you tomorrow.');
    // More than 30 days ahead is refused before anything is sent.
    const later = page.getByLabel('Send later at');
    await later.fill(localInput(Date.now() + 31 * 24 * 3600_000));
    await page.getByRole('button', { name: 'Send later', exact: true }).click();
    await page.getByText('Pick a time at most 30 days ahead.').waitFor();

    await later.fill(localInput(Date.now() + 3 * 3600_000));
    await page.getByRole('button', { name: 'Send later', exact: true }).click();
    const bubble = page.locator('.bubble-outbound', { hasText: 'We will call you tomorrow.' });
    await bubble.waitFor();
    expect(await bubble.getAttribute('data-status')).toBe('scheduled');
    await page.getByText(/^Scheduled for /).waitFor();
    const [message] = (
      (await api('GET', `/conversations/${bea.conversationId}/messages`)).data as any[]
    ).filter((m) => m.direction === 'outbound');
    expect(message).toMatchObject({ status: 'scheduled', text: 'We will call you tomorrow.' });

    await page.getByRole('button', { name: /^Cancel the message scheduled for / }).click();
    await page.getByText(/^Canceled: it was scheduled for /).waitFor();
    await expect.poll(() => bubble.getAttribute('data-status')).toBe('canceled');
    expect((await api('GET', `/messages/${message.id}`)).status).toBe('canceled');

    // One scheduled and canceled through the API shows both live (message.scheduled, message.canceled).
    const other = await api('POST', `/conversations/${bea.conversationId}/messages`, {
      type: 'text',
      text: 'A reminder from the API.',
      sendAt: new Date(clock.now().getTime() + 3600_000).toISOString(),
    });
    const live = page.locator('li', {
      has: page.locator('.bubble-outbound', { hasText: 'A reminder from the API.' }),
    });
    await live.getByText(/^Scheduled for /).waitFor({ timeout: 15_000 });
    await api('POST', `/messages/${other.id}/cancel`);
    await live.getByText(/^Canceled: /).waitFor({ timeout: 15_000 });
    expect(problems).toEqual([]);
  });

  it('lets an admin add a policy on the SLA policies page', async () => {
    const team = await api('POST', '/teams', { name: 'Billing' });
    const opened = await signedInPage(env, admin, '/inbox');
    const p = opened.page;
    await p.getByRole('link', { name: 'SLA policies' }).click();
    await p.getByRole('heading', { name: 'SLA policies', level: 1 }).waitFor();
    await p.getByRole('table', { name: 'SLA policies' }).getByText('Fast', { exact: true }).waitFor();
    await p.getByLabel('Name').fill('VIP');
    await p.getByLabel('First response (minutes)').fill('15');
    await p.getByLabel('Resolution (minutes)').fill('240');
    await p.getByLabel('Count business hours only').check();
    await p.getByLabel('Labels').fill('vip, Gold');
    await p.getByLabel('Teams').selectOption([team.id]);
    await p.getByLabel('Position').fill('1');
    await p.getByRole('button', { name: 'Add SLA policy' }).click();
    await p.getByRole('table', { name: 'SLA policies' }).getByText('VIP', { exact: true }).waitFor();
    const vip = ((await api('GET', '/sla-policies')).data as any[]).find((x) => x.name === 'VIP');
    expect(vip).toMatchObject({
      firstResponseMinutes: 15,
      resolutionMinutes: 240,
      businessHours: true,
      labels: ['vip', 'gold'],
      teamIds: [team.id],
      position: 1,
    });
    expect(opened.problems).toEqual([]);
  });
});
