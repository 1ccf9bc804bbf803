// The console's inbox in real Chromium: an agent answers a customer's sandbox message and sees the
// reply go to read, a new inbound message appears in the open conversation without reloading (the
// page's GET /events/stream), the agent takes the conversation, closes and reopens it; a failed
// reply shows its reason; a customer who shared no number is named by their username and answered;
// once the window has closed the reply is an approved template with a preview; axe-core finds no
// serious violation at 1280 and 390 px with a conversation open.
import { beforeAll, expect, it } from 'vitest';
import { type BrowserEnv, describeBrowser, expectAccessible, PHONE, useBrowser } from '../helpers/browser.ts';
import { call } from '../helpers/client.ts';
import { memberSession, PASSWORD, type Session, sessionOf } from '../helpers/console.ts';
import { signedInPage } from '../helpers/console-page.ts';
import { approvedTemplate, credit, type SandboxTenant, sandboxTenantWithKey } from '../helpers/messaging.ts';

/** Real time, moved forward by the last test (the customer service window lapses after 24 hours). */
const clock = { offset: 0, now: () => new Date(Date.now() + clock.offset) };

describeBrowser('the inbox', () => {
  // Events reach an open stream within a poll after they settle (a second).
  const env: BrowserEnv = useBrowser({ workers: true, config: { eventStreamPollMs: 100 }, now: clock.now });
  let t: SandboxTenant;
  let agent: Session & { memberId: string; email: string };
  const customer = '+14155553101';

  const customerWrites = async (text: string) => {
    const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: customer, text, name: 'Carla Customer' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };

  beforeAll(async () => {
    // The instant sandbox: a reply is delivered and read as soon as it is handed over.
    t = await sandboxTenantWithKey(env.app, env.partner.partnerKey);
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    agent = await memberSession(env.app, t.apiKey, 'agent');
  });

  it('lets an agent answer a customer, see the reply read, and see the next message arrive live', async () => {
    const first = await customerWrites('Hello, is my order ready?');
    const { context, page, problems } = await signedInPage(env, agent, '/inbox');
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    const list = page.getByRole('list', { name: 'Conversations' });
    const row = list.getByRole('link', { name: /Carla Customer/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('Hello, is my order ready?');
    expect(await row.textContent()).toContain('1 unread');
    await row.click();
    expect(new URL(page.url()).pathname).toBe(`/console/inbox/${first.conversationId}`);

    const conversation = page.getByRole('heading', { name: `Carla Customer (${customer})`, level: 2 });
    await conversation.waitFor();
    await page.getByText(/Customer service window open until/).waitFor();
    const log = page.getByRole('log', { name: 'Messages' });
    await log.getByText('Hello, is my order ready?').waitFor();

    // The reply, and its ticks moving to read (the sandbox reads it; message.read arrives live).
    await page.getByLabel('Reply').fill('Yes, it ships today.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const reply = page.locator('.bubble-outbound', { hasText: 'Yes, it ships today.' });
    await reply.waitFor();
    await expect.poll(() => reply.getAttribute('data-status'), { timeout: 15_000 }).toBe('read');
    expect(await reply.locator('.ticks').textContent()).toContain('Read');
    expect(await page.getByLabel('Reply').inputValue()).toBe('');

    // The customer writes again: it appears in the open conversation without a reload.
    await customerWrites('Great, thanks!');
    await log.getByText('Great, thanks!').waitFor({ timeout: 15_000 });
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('Great, thanks!');

    // Take it (Mine needs the session's memberId), then close and reopen it.
    await page.getByRole('button', { name: 'Assign to me' }).click();
    await expect.poll(() => page.getByLabel('Assigned to').inputValue()).toBe(agent.memberId);
    await page.getByLabel('Assigned', { exact: true }).selectOption('mine');
    await list.getByRole('link', { name: /Carla Customer/ }).waitFor();
    await page.getByLabel('Assigned', { exact: true }).selectOption('unassigned');
    await page.getByText('No conversations here.').waitFor();

    await page.getByRole('button', { name: 'Close', exact: true }).click();
    await page.getByText('This conversation is closed. Reopen it to reply.').waitFor();
    await page.getByRole('button', { name: 'Reopen' }).click();
    await page.getByLabel('Reply').waitFor();
    const after = await call(env.app, 'GET', `/conversations/${first.conversationId}`, { key: t.apiKey });
    expect(after.body).toMatchObject({ status: 'open', assigneeId: agent.memberId });

    await expectAccessible(page, 'inbox with a conversation open, 1280 px');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('fits a 390 px phone: the list, then the conversation alone, and passes axe', async () => {
    const { context, page, problems } = await signedInPage(env, agent, '/inbox', PHONE);
    const row = page
      .getByRole('list', { name: 'Conversations' })
      .getByRole('link', { name: /Carla Customer/ });
    await row.click();
    await page.getByRole('log', { name: 'Messages' }).getByText('Great, thanks!').waitFor();
    // One column: the list gives way to the conversation, with a way back.
    expect(await page.getByRole('list', { name: 'Conversations' }).isVisible()).toBe(false);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await expectAccessible(page, 'inbox with a conversation open, 390 px');
    await page.getByRole('link', { name: /Back to the conversations/ }).click();
    await row.waitFor();
    await expectAccessible(page, 'inbox list, 390 px');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows a reply that failed, with its reason', async () => {
    // The sandbox's test number 555-0102: handed over, then delivery fails.
    const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: '+14155550102', text: 'Can you hear me?' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { context, page, problems } = await signedInPage(env, agent, `/inbox/${res.body.conversationId}`);
    await page.getByLabel('Reply').fill('Loud and clear.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const reply = page.locator('.bubble-outbound', { hasText: 'Loud and clear.' });
    await expect.poll(() => reply.getAttribute('data-status'), { timeout: 15_000 }).toBe('failed');
    await reply
      .getByText('Failed: Sandbox test number +1…555-0102: the message could not be delivered.')
      .waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('names a customer who shared no number by their username, and answers them', async () => {
    // The sandbox's test number 555-0113 withholds its number: the message carries a user id and
    // the username sandbox.customer13 only, like a WhatsApp user who adopted a username.
    const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: '+14155550113', text: 'Writing from my username' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { context, page, problems } = await signedInPage(env, agent, '/inbox');
    const row = page
      .getByRole('list', { name: 'Conversations' })
      .getByRole('link', { name: /@sandbox\.customer13/ });
    await row.waitFor();
    await row.click();
    await page.getByRole('heading', { name: '@sandbox.customer13', level: 2 }).waitFor();
    await page.getByLabel('Reply').fill('Happy to help.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const reply = page.locator('.bubble-outbound', { hasText: 'Happy to help.' });
    await expect.poll(() => reply.getAttribute('data-status'), { timeout: 15_000 }).toBe('read');

    // The contact's page: no phone, the username and the user id Meta reported.
    const [contact] = (
      await call(env.app, 'GET', '/contacts', { key: t.apiKey, query: { q: 'sandbox.customer13' } })
    ).body.data;
    expect(contact.phone).toBeNull();
    await page.goto(`/console/contacts/${contact.id}`);
    await page.getByRole('heading', { name: '@sandbox.customer13', level: 1 }).waitFor();
    const fields = await page.locator('.key-values').first().textContent();
    expect(fields).toContain('PhoneNot shared');
    expect(fields).toContain(contact.whatsappUserId);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('offers the approved templates, with a preview, once the customer service window has closed', async () => {
    const template = await approvedTemplate(env.app, t.apiKey, {
      name: 'order_followup',
      body: 'Hi {{1}}, your order {{2}} is on its way.',
      examples: ['Ann', 'ORD-1'],
    });
    clock.offset = 25 * 3600_000;
    try {
      // Sessions end after 12 hours: a new one, signed in the day after.
      const signIn = await call(env.app, 'POST', '/console/sessions', {
        body: { email: agent.email, password: PASSWORD },
      });
      const later = sessionOf(signIn);
      const conversation = (await call(env.app, 'GET', '/conversations', { key: t.apiKey })).body.data[0];
      const { context, page, problems } = await signedInPage(env, later, `/inbox/${conversation.id}`);
      await page.getByText(/Customer service window closed at .*: reply with a template\./).waitFor();
      expect(await page.getByLabel('Reply').count()).toBe(0);
      await page.getByLabel('Template', { exact: true }).selectOption({ label: `${template.name} (en_US)` });
      await page.getByLabel('Body {{1}}').fill('Carla');
      await page.getByLabel('Body {{2}}').fill('ORD-42');
      const preview = page.locator('figure', { hasText: 'Preview' });
      await expect.poll(() => preview.textContent()).toContain('Hi Carla, your order ORD-42 is on its way.');
      await expectAccessible(page, 'inbox, template reply, 1280 px');
      await page.getByRole('button', { name: 'Send template' }).click();
      await page
        .getByRole('log', { name: 'Messages' })
        .getByText('Hi Carla, your order ORD-42 is on its way.')
        .waitFor();
      expect(problems).toEqual([]);
      await context.close();
    } finally {
      clock.offset = 0;
    }
  });
});
