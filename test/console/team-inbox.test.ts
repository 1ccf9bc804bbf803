// The console's team inbox in real Chromium (issue 47's "Done when"): an agent answers with a
// canned response (`/thanks`, rendered for this customer; one the customer lacks a variable of shows
// its problems), leaves a note mentioning a colleague who sees it live in their own browser (on the
// contacts page, then in the inbox), labels and snoozes the conversation (it leaves the open list,
// the label filter and the Snoozed view show it; unsnoozed, snoozed until a chosen time); the canned
// responses' own page adds, changes and deletes one; a customer who writes while the business is closed
// gets the away message once; closing sends the survey and the customer's tap shows on the
// conversation; a team with capacity 1 and two online members gives two of three new conversations
// out and queues the third, as the console's team view shows. axe-core at 1280 and 390 px.
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import {
  type BrowserEnv,
  describeBrowser,
  expectAccessible,
  openPage,
  PHONE,
  useBrowser,
} from '../helpers/browser.ts';
import { call } from '../helpers/client.ts';
import { memberSession, type Session } from '../helpers/console.ts';
import { signedInPage } from '../helpers/console-page.ts';
import { credit, type SandboxTenant, sandboxTenantWithKey } from '../helpers/messaging.ts';

describeBrowser('the team inbox', () => {
  const env: BrowserEnv = useBrowser({
    workers: true,
    config: { eventStreamPollMs: 100, automationPollMs: 50 },
  });
  let t: SandboxTenant;
  let agent: Session & { memberId: string };
  let colleague: Session & { memberId: string };
  let page: Page;
  let problems: string[];
  let ann: { conversationId: string };

  const customerWrites = async (from: string, body: Record<string, unknown>) => {
    const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from, ...body },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; conversationId: string };
  };
  const api = async (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) => {
    const res = await call(env.app, method, path, { key: t.apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body;
  };
  const outbound = async (conversationId: string) =>
    ((await api('GET', `/conversations/${conversationId}/messages`)).data as any[]).filter(
      (m) => m.direction === 'outbound',
    );
  /** Every customer message's automation (rules, away message, survey) has run. */
  const settled = () =>
    expect
      .poll(
        async () =>
          (await env.tdb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM automation_inbox')).rows[0]!
            .n,
        { timeout: 10_000 },
      )
      .toBe(0);
  const list = () => page.getByRole('region', { name: 'Inbox' });
  const rows = () => list().getByRole('list', { name: 'Conversations' }).getByRole('link');

  beforeAll(async () => {
    t = await sandboxTenantWithKey(env.app, env.partner.partnerKey);
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    agent = await memberSession(env.app, t.apiKey, 'agent'); // "A agent"
    colleague = await memberSession(env.app, t.apiKey, 'admin'); // "A admin"
    await api('POST', '/canned-responses', {
      shortcut: 'thanks',
      title: 'Thanks',
      text: 'Thanks {{ contact.name | default: "there" }}, we are on it.',
    });
    await api('POST', '/canned-responses', {
      shortcut: 'hours',
      title: 'Opening hours',
      text: 'We open at 9.',
    });
    await api('POST', '/canned-responses', {
      shortcut: 'plan',
      title: 'Your plan',
      text: 'Your plan: {{ contact.attributes.plan }}.',
    });
  });

  it('answers with a canned response typed as /shortcut, rendered for the customer', async () => {
    ann = await customerWrites('+14155553201', { text: 'Where is my parcel?', name: 'Ann' });
    await customerWrites('+14155553202', { text: 'Another matter', name: 'Bea' });
    ({ page, problems } = await signedInPage(env, agent, `/inbox/${ann.conversationId}`));
    const log = page.getByRole('log', { name: 'Messages' });
    await log.getByText('Where is my parcel?').waitFor();

    // A canned response Ann lacks a variable of: its problems are shown, nothing is sent.
    const reply = page.getByLabel('Reply', { exact: true });
    await reply.pressSequentially('/pla');
    await page
      .getByRole('listbox', { name: 'Canned responses' })
      .getByRole('option', { name: /\/plan/ })
      .click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'did not render' })
      .getByText(/^text: /)
      .waitFor();
    await reply.fill('');

    // `/th`: the listbox offers /thanks (not /hours); Enter renders it for Ann.
    await reply.pressSequentially('/th');
    const menu = page.getByRole('listbox', { name: 'Canned responses' });
    await menu.getByRole('option', { name: /\/thanks/ }).waitFor();
    expect(await menu.getByRole('option').count()).toBe(1);
    expect(await reply.getAttribute('aria-activedescendant')).toBe(
      await menu.getByRole('option').first().getAttribute('id'),
    );
    await expectAccessible(page, 'canned responses offered, 1280 px');
    await reply.press('Enter');
    await expect.poll(() => reply.inputValue()).toBe('Thanks Ann, we are on it.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.locator('.bubble-outbound', { hasText: 'Thanks Ann, we are on it.' }).waitFor();

    expect(problems).toEqual([]);
  });

  it('leaves a note mentioning a colleague, who sees it live on any page', async () => {
    const log = page.getByRole('log', { name: 'Messages' });
    // The colleague is on another page: the console listens for their mentions there too.
    const other = await openPage(env);
    await other.context.addCookies([
      { name: 'tidings_session', value: colleague.cookie, url: env.base, httpOnly: true, sameSite: 'Lax' },
    ]);
    const listening = other.page.waitForResponse((r) => r.url().includes('/events/stream'));
    await other.page.goto('/console/contacts');
    await listening;
    // A note mentioning the colleague (picked from the members with @), between the messages.
    await page.getByRole('button', { name: 'Note', exact: true }).click();
    const note = page.getByLabel('Private note');
    await note.pressSequentially('Parcel lost? @adm');
    await page
      .getByRole('listbox', { name: 'Team members' })
      .getByRole('option', { name: /A admin/ })
      .click();
    await note.pressSequentially('please check.');
    expect(await note.inputValue()).toBe('Parcel lost? @A admin please check.');
    await page.getByRole('button', { name: 'Add note' }).click();
    await log.locator('.note', { hasText: 'Parcel lost? @A admin please check.' }).waitFor();
    expect(await log.locator('.bubble', { hasText: 'Parcel lost?' }).count()).toBe(0);
    const [saved] = (await api('GET', `/conversations/${ann.conversationId}/notes`)).data;
    expect(saved).toMatchObject({ authorId: agent.memberId, mentions: [colleague.memberId] });
    expect((await outbound(ann.conversationId)).map((m) => m.text)).toEqual(['Thanks Ann, we are on it.']);

    // The colleague's page, never reloaded, tells them, and links to the conversation.
    const told = other.page.getByRole('status').filter({ hasText: 'mentioned you' });
    await told.waitFor({ timeout: 15_000 });
    expect(await told.textContent()).toContain(
      'A agent mentioned you: “Parcel lost? @A admin please check.”',
    );
    await expectAccessible(other.page, 'a mention on the contacts page, 1280 px');
    await told.getByRole('link', { name: 'Open the conversation' }).click();
    const theirLog = other.page.getByRole('log', { name: 'Messages' });
    await theirLog.locator('.note', { hasText: 'Parcel lost?' }).waitFor();

    // In the inbox too (its own stream): a second note, the member picked with the keyboard.
    await other.page.getByText('Live', { exact: true }).waitFor();
    await note.pressSequentially('@adm');
    await note.press('Enter');
    await note.pressSequentially('found it.');
    await page.getByRole('button', { name: 'Add note' }).click();
    await told.filter({ hasText: '“@A admin found it.”' }).waitFor({ timeout: 15_000 });
    await theirLog.locator('.note', { hasText: '@A admin found it.' }).waitFor();
    await expectAccessible(other.page, 'a mention and its conversation, 1280 px');
    expect(other.problems).toEqual([]);
    await other.context.close();
    expect(problems).toEqual([]);
  });

  it('labels and snoozes a conversation: out of the open list, under its label and in Snoozed', async () => {
    // A label, on the conversation and its row; the label filter lists it alone.
    await page.getByLabel('New label').fill('Refund');
    await page.getByRole('button', { name: 'Add label' }).click();
    await page.getByRole('button', { name: 'Remove label refund' }).waitFor();
    const annRow = rows().filter({ hasText: 'Ann' });
    await expect.poll(() => annRow.textContent()).toContain('refund');
    await list().getByLabel('Label', { exact: true }).fill('refund');
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().first().textContent()).toContain('Ann');

    // Snoozed for an hour: out of the open list (even under its label), in the Snoozed view.
    await page.getByText('Snooze', { exact: true }).click();
    await page.getByRole('button', { name: 'For an hour' }).click();
    await page.getByText(/^Snoozed until /).waitFor();
    await list().getByText('No conversations here.').waitFor();
    await list().getByLabel('Status').selectOption('snoozed');
    await annRow.waitFor();
    expect(await annRow.textContent()).toContain('Snoozed');
    const snoozed = await api('GET', `/conversations/${ann.conversationId}`);
    expect(Date.parse(snoozed.snoozedUntil) - Date.now()).toBeGreaterThan(55 * 60_000);
    expect(snoozed.labels).toEqual(['refund']);
    await expectAccessible(page, 'a labelled, snoozed conversation with a note, 1280 px');

    // Woken by the agent, then snoozed until a chosen time (the browser's zone, as here).
    await page.getByRole('button', { name: 'Unsnooze' }).click();
    await page.getByText('Snooze', { exact: true }).click();
    const later = new Date(Date.now() + 2 * 86_400_000);
    const local = `${later.getFullYear()}-${String(later.getMonth() + 1).padStart(2, '0')}-${String(later.getDate()).padStart(2, '0')}T10:30`;
    await page.getByLabel('Until', { exact: true }).fill(local);
    await page.getByRole('button', { name: 'Snooze until then' }).click();
    await page.getByText(/^Snoozed until /).waitFor();
    expect((await api('GET', `/conversations/${ann.conversationId}`)).snoozedUntil).toBe(
      new Date(local).toISOString(),
    );
    await list().getByLabel('Label', { exact: true }).fill('');
    await list().getByLabel('Status').selectOption('open');
    expect(problems).toEqual([]);
  });

  it('sends a customer who writes while closed the away message once', async () => {
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const away = 'We are closed now: we answer from 9:00.';
    const hours = await api('PUT', '/account/business-hours', {
      timezone: 'UTC',
      weekly: [{ day: 'mon', from: '09:00', until: '17:00' }],
      holidays: [day(0), day(1)],
      awayMessage: { text: away },
    });
    expect(hours.openNow).toBe(false);
    try {
      const cara = await customerWrites('+14155553203', { text: 'Anyone there?', name: 'Cara' });
      await customerWrites('+14155553203', { text: 'Hello?' });
      await settled();
      await rows().filter({ hasText: 'Cara' }).click();
      const log = page.getByRole('log', { name: 'Messages' });
      await log.getByText('Hello?').waitFor();
      await log.getByText(away).waitFor();
      expect(await log.getByText(away).count()).toBe(1);
      expect((await outbound(cara.conversationId)).map((m) => m.text)).toEqual([away]);
    } finally {
      await api('PUT', '/account/business-hours', { enabled: false });
    }
  });

  it('sends the survey on close and shows the answer on the conversation', async () => {
    await api('PUT', '/account/csat', { scale: 'faces', question: 'How did we do?' });
    try {
      const dan = await customerWrites('+14155553204', { text: 'Thanks, all sorted', name: 'Dan' });
      await rows().filter({ hasText: 'Dan' }).click();
      await page.getByRole('log', { name: 'Messages' }).getByText('Thanks, all sorted').waitFor();
      await page.getByRole('button', { name: 'Close', exact: true }).click();
      await page.getByText('This conversation is closed. Reopen it to reply.').waitFor();
      // The survey goes once the close has run its automation; the customer taps 😊 once it is sent.
      await settled();
      const [survey] = await outbound(dan.conversationId);
      expect(survey).toMatchObject({ type: 'interactive', interactive: { body: 'How did we do?' } });
      await expect
        .poll(async () => (await api('GET', `/messages/${survey.id}`)).status, { timeout: 10_000 })
        .not.toBe('queued');
      await page.getByText(/no answer yet/).waitFor();
      await customerWrites('+14155553204', {
        replyTo: survey.id,
        interactive: { id: `csat:${dan.conversationId}:5` },
      });
      // Live: csat.received reaches the open conversation.
      const answer = page.getByRole('region', { name: 'Satisfaction survey' });
      await answer.getByText('Score: 5 of 5').waitFor({ timeout: 15_000 });
      expect(await answer.textContent()).toContain('Closed by A agent');
      await expectAccessible(page, 'a closed conversation with its survey answer, 1280 px');
    } finally {
      await api('PUT', '/account/csat', { enabled: false });
    }
    expect(problems).toEqual([]);
  });

  it('keeps the canned responses on a page of their own: add, change, delete', async () => {
    await list().getByRole('link', { name: 'Canned responses' }).click();
    await page.getByRole('heading', { name: 'Canned responses', level: 1 }).waitFor();
    await page.getByLabel('Shortcut').fill('bye');
    await page.getByLabel('Title').fill('Goodbye');
    await page.getByLabel('Text').fill('Bye {{ contact.name | default: "there" }}!');
    await page.getByRole('button', { name: 'Add canned response' }).click();
    await page.getByRole('button', { name: 'Edit /bye' }).click();
    await page.getByLabel('Text').fill('Goodbye {{ contact.name | default: "there" }}!');
    await page.getByRole('button', { name: 'Save' }).click();
    const table = page.getByRole('table');
    await table.getByText('Goodbye {{ contact.name | default: "there" }}!').waitFor();
    const [bye] = (await api('GET', '/canned-responses?q=bye')).data;
    expect(bye).toMatchObject({ shortcut: 'bye', title: 'Goodbye' });
    await expectAccessible(page, 'canned responses, 1280 px');
    await page.getByRole('button', { name: 'Delete /bye' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => table.getByText('/bye').count()).toBe(0);
    expect((await api('GET', '/canned-responses?q=bye')).data).toEqual([]);
    await page.getByRole('link', { name: 'Back to the inbox' }).click();
    expect(problems).toEqual([]);
  });

  it('gives a team’s new conversations out under capacity and queues the rest, in the team view', async () => {
    const team = await api('POST', '/teams', {
      name: 'Support',
      members: [agent.memberId, colleague.memberId],
      assignment: { mode: 'round_robin', capacity: 1 },
      default: true,
    });
    for (const [n, name] of ['Eve', 'Fay', 'Gus'].entries())
      await customerWrites(`+1415555321${n}`, { text: `Help, ${name} here`, name });
    await expect
      .poll(
        async () => {
          const open = (await api('GET', `/conversations?status=open&teamId=${team.id}`)).data as any[];
          return open.map((c) => c.assigneeId !== null).sort();
        },
        { timeout: 15_000 },
      )
      .toEqual([false, true, true]);
    const assigned = (await api('GET', `/conversations?status=open&teamId=${team.id}`)).data as any[];
    expect(new Set(assigned.map((c) => c.assigneeId).filter(Boolean))).toEqual(
      new Set([agent.memberId, colleague.memberId]),
    );

    // The team view: its three, then its queue (unassigned) alone.
    await page.reload();
    await list().getByLabel('Team').selectOption({ label: 'Support' });
    await expect.poll(() => rows().count()).toBe(3);
    expect(await rows().filter({ hasText: 'Support · A agent' }).count()).toBe(1);
    expect(await rows().filter({ hasText: 'Support · A admin' }).count()).toBe(1);
    await list().getByLabel('Assigned', { exact: true }).selectOption('unassigned');
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().first().textContent()).toContain('Support · in the queue');
    await rows().first().click();
    await page
      .getByRole('region', { name: /Gus|Fay|Eve/ })
      .getByText('Team: Support')
      .waitFor();
    await expectAccessible(page, 'a team’s queue, 1280 px');

    // The agent's own availability, from the inbox.
    await page.getByLabel('My availability').selectOption('away');
    await expect
      .poll(async () => (await api('GET', `/team/members/${agent.memberId}`)).availability)
      .toBe('away');
    await page.setViewportSize(PHONE);
    await expectAccessible(page, 'a team’s queue, 390 px');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
