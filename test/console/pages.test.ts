// The console's contacts, templates and read views in real Chromium, as an account admin: a
// template made with its live preview, submitted and approved by the sandbox's review; contacts
// searched, imported from a CSV with the progress bar reaching the end, tagged and given
// attributes; a rule with its run and a campaign with its counters in the read views. axe-core at
// 1280 and 390 px on each page.
import { beforeAll, expect, it } from 'vitest';
import { type BrowserEnv, describeBrowser, expectAccessible, PHONE, useBrowser } from '../helpers/browser.ts';
import { call } from '../helpers/client.ts';
import { memberSession, type Session } from '../helpers/console.ts';
import { signedInPage } from '../helpers/console-page.ts';
import {
  approvedTemplate,
  credit,
  eventually,
  type SandboxTenant,
  sandboxTenantWithKey,
} from '../helpers/messaging.ts';

describeBrowser('the contacts, templates and read views', () => {
  const env: BrowserEnv = useBrowser({ workers: true });
  let t: SandboxTenant;
  let admin: Session;

  beforeAll(async () => {
    // The instant sandbox: a submitted template is reviewed at once (sandbox.reviewAfterMs 0).
    t = await sandboxTenantWithKey(env.app, env.partner.partnerKey);
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    admin = await memberSession(env.app, t.apiKey, 'admin');
  });

  it('creates a template with a live preview, submits it, and sees the review approve it', async () => {
    const { context, page, problems } = await signedInPage(env, admin, '/templates');
    await page.getByRole('heading', { name: 'New template' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('order_ready');
    await page.getByLabel('Body', { exact: true }).fill('Hi {{1}}, your order {{2}} is ready for pickup.');
    await page.getByLabel('Footer (optional)').fill('Tidings test shop');
    await page.getByLabel('Quick reply buttons (optional)').fill('Thanks\nCall me');
    const preview = page.locator('figure', { hasText: 'Preview of the message' });
    expect(await preview.textContent()).toContain('Hi {{1}}, your order {{2}} is ready for pickup.');
    await page.getByLabel('Sample for {{1}}').fill('Ada');
    await page.getByLabel('Sample for {{2}}').fill('ORD-7');
    await expect.poll(() => preview.textContent()).toContain('Hi Ada, your order ORD-7 is ready for pickup.');
    expect(await preview.textContent()).toContain('Tidings test shop');
    expect(await preview.getByRole('listitem').allTextContents()).toEqual(['Thanks', 'Call me']);
    await expectAccessible(page, 'templates, 1280 px');

    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByText('order_ready was created as a draft').waitFor();
    const status = page.locator('[data-template="order_ready"]');
    expect(await status.textContent()).toBe('DRAFT');
    await page.getByRole('button', { name: 'Submit order_ready (en_US) for review' }).click();
    await expect.poll(() => status.textContent(), { timeout: 15_000 }).toBe('APPROVED');

    // A name the API refuses: its message is shown.
    await page.getByLabel('Name', { exact: true }).fill('order_ready');
    await page.getByRole('button', { name: 'Create template' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('CONFLICT');
    expect(problems).toEqual([]);
    await context.close();

    const phone = await signedInPage(env, admin, '/templates', PHONE);
    await phone.page.locator('[data-template="order_ready"]').waitFor();
    expect(await phone.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
      PHONE.width,
    );
    await expectAccessible(phone.page, 'templates, 390 px');
    await phone.context.close();
  });

  it('searches contacts, imports a CSV with a progress bar, and edits tags and attributes', async () => {
    for (const body of [
      { phone: '+14155554001', name: 'Zed Zebra', tags: ['vip'] },
      { phone: '+14155554002', name: 'Yolanda Yak' },
    ]) {
      const res = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    const { context, page, problems } = await signedInPage(env, admin, '/contacts');
    const table = page.getByRole('table');
    await table.getByRole('link', { name: 'Yolanda Yak' }).waitFor();
    await page.getByLabel('Search contacts').fill('zebra');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('Contacts matching “zebra”').waitFor();
    await expect.poll(() => table.getByRole('link').allTextContents()).toEqual(['Zed Zebra']);
    await page.getByRole('button', { name: 'Show all' }).click();
    await table.getByRole('link', { name: 'Yolanda Yak' }).waitFor();

    const csv = [
      'phone,name,tags,plan',
      '+14155554101,"Quinn, Q.",new;vip,gold',
      '+14155554102,"Sam ""the"" Smith",new,',
      '+14155554001,Zed Zebra,vip|imported,silver',
    ].join('\r\n');
    await page.getByLabel('CSV file').setInputFiles({
      name: 'contacts.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csv),
    });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText('Done: 2 created, 1 updated, 0 failed.').waitFor({ timeout: 15_000 });
    const progress = page.getByLabel('Import progress');
    expect(await progress.getAttribute('max')).toBe('3');
    expect(await progress.getAttribute('value')).toBe('3');
    await table.getByRole('link', { name: 'Quinn, Q.' }).waitFor();
    await table.getByRole('link', { name: 'Sam "the" Smith' }).waitFor();
    await expectAccessible(page, 'contacts after an import, 1280 px');

    // A bad file: what is wrong with it is said.
    await page.getByLabel('CSV file').setInputFiles({
      name: 'bad.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('name\nNo Phone\n'),
    });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('no "phone" column');

    await table.getByRole('link', { name: 'Quinn, Q.' }).click();
    await page.getByRole('heading', { name: 'Quinn, Q.', level: 1 }).waitFor();
    const tags = page.getByRole('list', { name: 'Tags' });
    expect((await tags.getByRole('listitem').allTextContents()).map((s) => s.replace('×', ''))).toEqual([
      'new',
      'vip',
    ]);
    await page.getByText('gold').waitFor();
    await page.getByLabel('New tag').fill('called');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await tags.getByText('called').waitFor();
    await page.getByRole('button', { name: 'Remove tag new' }).click();
    await expect.poll(() => tags.getByText('new', { exact: true }).count()).toBe(0);
    await page.getByLabel('Attribute name').fill('tier');
    await page.getByLabel('Value').fill('two');
    await page.getByRole('button', { name: 'Set attribute' }).click();
    await page.locator('dd', { hasText: 'two' }).waitFor();
    await page.getByRole('button', { name: 'Remove attribute plan' }).click();
    await expect.poll(() => page.getByText('gold').count()).toBe(0);
    // A tag the API refuses: its message is shown.
    await page.getByLabel('New tag').fill('no/slashes');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('INVALID_REQUEST');
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const stored = await call(env.app, 'GET', `/contacts/${id}`, { key: t.apiKey });
    expect(stored.body).toMatchObject({ tags: ['vip', 'called'], attributes: { tier: 'two' } });
    await expectAccessible(page, 'a contact, 1280 px');
    expect(problems).toEqual([]);
    await context.close();

    const phone = await signedInPage(env, admin, '/contacts', PHONE);
    await phone.page.getByRole('table').getByRole('link', { name: 'Quinn, Q.' }).waitFor();
    expect(await phone.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
      PHONE.width,
    );
    await expectAccessible(phone.page, 'contacts, 390 px');
    await phone.context.close();
  });

  it('shows a rule with its run and a campaign with its counters in the read views', async () => {
    const rule = await call(env.app, 'POST', '/rules', {
      key: t.apiKey,
      body: {
        name: 'Welcome new contacts',
        trigger: { event: 'contact.created' },
        actions: [{ type: 'add_tag', tag: 'welcomed' }],
      },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+14155554201', tags: ['autumn'] },
    });
    await eventually(
      () => call(env.app, 'GET', `/rules/${rule.body.id}/runs`, { key: t.apiKey }),
      (r) => r.body.data.length === 1,
    );

    await approvedTemplate(env.app, t.apiKey, {
      name: 'autumn_news',
      category: 'MARKETING',
      body: 'News for {{1}} today.',
      examples: ['you'],
    });
    const made = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: {
        name: 'Autumn',
        message: { templateName: 'autumn_news', templateLanguage: 'en_US', parameters: ['friend'] },
        audience: { tag: 'autumn' },
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect((await call(env.app, 'POST', `/campaigns/${made.body.id}/start`, { key: t.apiKey })).status).toBe(
      200,
    );
    // Settled: the sandbox reads the message about 3 s after it is sent, and the page shows the
    // counters as they are when it loads.
    const done = await eventually(
      () => call(env.app, 'GET', `/campaigns/${made.body.id}`, { key: t.apiKey }),
      (r) => r.body.status === 'completed' && r.body.counters.read === 1,
    );
    expect(done.body.status).toBe('completed');
    expect(done.body.counters).toMatchObject({ total: 1, read: 1 });

    const { context, page, problems } = await signedInPage(env, admin, '/automation');
    await page.getByRole('heading', { name: 'Automation', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Welcome new contacts' }).click();
    await page.getByRole('heading', { name: 'Rule: Welcome new contacts' }).waitFor();
    const runs = page.getByRole('table', { name: 'Runs, newest first' });
    await runs.getByText('succeeded', { exact: true }).waitFor();
    expect(await runs.textContent()).toContain('add_tag: succeeded');
    await expectAccessible(page, 'a rule and its runs, 1280 px');

    await page.goto('/console/voice');
    const campaigns = page.getByRole('table', { name: 'WhatsApp campaigns' });
    const row = campaigns.getByRole('row', { name: /Autumn/ });
    await row.waitFor();
    const c = done.body.counters;
    expect(await row.getByRole('cell').allTextContents()).toEqual([
      'Autumn',
      'completed',
      String(c.total),
      String(c.sent),
      String(c.delivered),
      String(c.read),
      String(c.failed),
    ]);
    await expectAccessible(page, 'voice and campaigns, 1280 px');
    await row.getByRole('link', { name: 'Autumn' }).click();
    await page.getByRole('heading', { name: 'Campaign: Autumn' }).waitFor();
    expect(await page.getByText('autumn_news (en_US)').count()).toBe(1);
    expect(problems).toEqual([]);
    await context.close();

    // The read views are the admins': an agent's page says so (and the API refuses it).
    const agent = await memberSession(env.app, t.apiKey, 'agent');
    const asAgent = await signedInPage(env, agent, '/automation');
    await asAgent.page.getByText('Your role cannot use this section.').waitFor();
    await asAgent.context.close();
  });
});
