// The developer portal and the partner admin pages in real Chromium on a real port: an account
// admin's key shown once and working, a webhook's failed delivery retried from the page, an agent
// kept out (page and API), a partner admin provisioning and crediting an account, and axe-core on
// the main pages at 1280 and 390 px. The app clock stands still (FakeClock), so a failed delivery
// waits for the page's retry rather than for its own schedule.
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type BrowserEnv,
  DESKTOP,
  describeBrowser,
  expectAccessible,
  openPage,
  PHONE,
  useBrowser,
} from '../helpers/browser.ts';
import { call, tenant } from '../helpers/client.ts';
import { memberSession, partnerAdminSession } from '../helpers/console.ts';
import { FakeClock } from '../helpers/harness.ts';
import { Receiver } from '../helpers/receiver.ts';

interface Signed {
  context: BrowserContext;
  page: Page;
  problems: string[];
}

describeBrowser('the developer portal and partner admin pages', () => {
  const clock = new FakeClock();
  const env: BrowserEnv = useBrowser({
    now: clock.now,
    config: { webhookAllowedHosts: ['127.0.0.1'], webhookPollMs: 50 },
  });
  let account: { accountId: string; apiKey: string };
  let admin: Signed;
  let partnerAdmin: Signed;
  const receivers: Receiver[] = [];

  /** A browser context signed in with a session made through the API (its cookie). */
  async function signedIn(cookie: string): Promise<Signed> {
    const opened = await openPage(env, DESKTOP);
    await opened.context.addCookies([{ name: 'tidings_session', value: cookie, url: env.base }]);
    return opened;
  }

  beforeAll(async () => {
    await env.app.ctx.dispatcher.start();
    account = await tenant(env.app, env.partner.partnerKey, { accountName: 'Acme' });
    admin = await signedIn((await memberSession(env.app, account.apiKey, 'admin')).cookie);
    partnerAdmin = await signedIn((await partnerAdminSession(env.app, env.partner.partnerKey)).cookie);
  });
  afterAll(async () => {
    await admin?.context.close();
    await partnerAdmin?.context.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  const focusedText = (page: Page) =>
    page.evaluate<string | null>('document.activeElement?.textContent ?? null');

  it('an account admin creates a sandbox key, sees it once, copies it, and the key works', async () => {
    const { context, page, problems } = admin;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.base });
    await page.goto('/console/portal');
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/portal/keys');

    await page.getByLabel('Name').fill('CI sandbox');
    await page.getByLabel('Sandbox').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Your new key “CI sandbox”' });
    await dialog.waitFor();
    await dialog.getByText('will not be shown again').waitFor();
    const secret = (await dialog.getByTestId('secret').textContent())!.trim();
    expect(secret.length).toBeGreaterThan(20);
    await dialog.getByRole('button', { name: 'Copy the api key' }).click();
    await dialog.getByRole('button', { name: 'Copied' }).waitFor();
    await dialog.getByRole('status').getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);

    // Closed, focus is back on the form's button, and the list shows only the last four.
    await dialog.getByRole('button', { name: 'I have stored it: close' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => focusedText(page)).toBe('Create key');
    const row = page.getByRole('row').filter({ hasText: 'CI sandbox' });
    await row.getByText(`…${secret.slice(-4)}`).waitFor();
    expect(await row.textContent()).toContain('Sandbox');
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await row.getByText(`…${secret.slice(-4)}`).waitFor();
    expect(await page.content()).not.toContain(secret);

    // The key works against the API, as a sandbox key of this account.
    const me = await call(env.app, 'GET', '/account', { key: secret });
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body).toMatchObject({ accountId: account.accountId, keyScope: 'sandbox' });

    // Revoked after a confirmation: the key stops working; focus lands on the page's heading.
    await row.getByRole('button', { name: 'Revoke CI sandbox' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke “CI sandbox”?' });
    await confirm.getByRole('button', { name: 'Revoke the key' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await row.getByRole('button', { name: 'Revoke CI sandbox' }).waitFor({ state: 'detached' });
    await expect.poll(() => focusedText(page)).toBe('API keys');
    expect((await call(env.app, 'GET', '/account', { key: secret })).status).toBe(401);
    expect(problems).toEqual([]);
  });

  it('an admin adds a webhook, sees a failed test delivery, and retries it to success', async () => {
    let status = 500;
    const rx = await Receiver.start(() => ({ status, body: status === 500 ? 'receiver down' : 'ok' }));
    receivers.push(rx);
    const { page, problems } = admin;
    await page.goto('/console/portal/webhooks');
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByLabel('URL').fill(rx.url());
    await page.getByLabel('Description').fill('Local receiver');
    await page.getByLabel('webhook.test').check();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const dialog = page.getByRole('dialog', { name: "Your new webhook's signing secret" });
    expect(await dialog.getByTestId('secret').textContent()).toMatch(/^whsec_/);
    await dialog.getByRole('link', { name: 'Open the webhook' }).click();
    await page.getByRole('heading', { name: 'Webhook', level: 1 }).waitFor();
    await page.getByText(rx.url()).waitFor();

    await page.getByRole('button', { name: 'Send a test event' }).click();
    const row = page.getByRole('row').filter({ hasText: 'webhook.test' });
    await row.getByText('Failed, retrying').waitFor();
    const cells = row.getByRole('cell');
    expect(await cells.nth(3).textContent()).toBe('1'); // attempts
    expect(await cells.nth(4).textContent()).toBe('500'); // last status code
    expect(await cells.nth(5).textContent()).toMatch(/^\d+ ms$/); // latency
    expect(await cells.nth(6).textContent()).toBe('receiver down');
    expect(rx.received).toHaveLength(1);

    status = 200;
    await row.getByRole('button', { name: /^Retry delivery/ }).click();
    await row.getByText('Succeeded').waitFor();
    expect(await cells.nth(3).textContent()).toBe('2');
    expect(await cells.nth(4).textContent()).toBe('200');
    expect(await cells.nth(6).textContent()).toBe('ok');
    expect(rx.received).toHaveLength(2);
    expect(problems).toEqual([]);
  });

  it('keeps an agent out of the developer portal: no nav entry, a not-available page, 403 from the API', async () => {
    const agent = await signedIn((await memberSession(env.app, account.apiKey, 'agent')).cookie);
    const { page, problems } = agent;
    await page.goto('/console/');
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.getByRole('link').allTextContents()).not.toContain('Developer portal');
    await page.goto('/console/portal/keys');
    await page.getByText('Not available to your role.').waitFor();
    expect(await page.getByRole('heading', { name: 'API keys' }).count()).toBe(0);
    // The browser's own cookie, straight to the API.
    for (const path of ['/api/v1/public/keys', '/api/v1/public/webhooks']) {
      const res = await page.request.get(path);
      expect(res.status(), path).toBe(403);
      expect((await res.json()).error.code, path).toBe('FORBIDDEN');
    }
    expect(problems).toEqual([]);
    await agent.context.close();
  });

  it('an admin adds a team member, hands over its invitation link, and removing it ends its sessions', async () => {
    const { page, problems } = admin;
    await page.goto('/console/portal/team');
    await page.getByRole('heading', { name: 'Team', level: 1 }).waitFor();
    await page.getByLabel('Name').fill('Tess Agent');
    await page.getByLabel('Email').fill('tess@example.com');
    await page.getByLabel('Role').selectOption('agent');
    await page.getByRole('button', { name: 'Add member' }).click();
    const row = page.getByRole('row').filter({ hasText: 'tess@example.com' });
    await row.waitFor();
    // A second member with the same email is the API's 409, shown with its message.
    await page.getByLabel('Name').fill('Tess Again');
    await page.getByLabel('Email').fill('tess@example.com');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /already/i })
      .waitFor();

    await row.getByRole('button', { name: 'Invite Tess Agent to sign in' }).click();
    const dialog = page.getByRole('dialog', { name: 'Invitation for Tess Agent' });
    await dialog.getByText('will not be shown again').waitFor();
    const link = (await dialog.getByTestId('secret').textContent())!.trim();
    // On PUBLIC_BASE_URL (the test app's is http://tidings.test): opened here on the test's port.
    expect(link).toMatch(/^http:\/\/tidings\.test\/console\/invite#.+/);
    await dialog.getByRole('button', { name: 'Close' }).click();

    const tess = await openPage(env, DESKTOP);
    await tess.page.goto(`/console/invite${new URL(link).hash}`);
    await tess.page.getByLabel('Password', { exact: true }).fill('tess answers customers');
    await tess.page.getByLabel('Password again').fill('tess answers customers');
    await tess.page.getByRole('button', { name: 'Accept and sign in' }).click();
    await tess.page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    expect((await tess.page.request.get('/api/v1/public/console/session')).status()).toBe(200);

    await row.getByRole('button', { name: 'Remove Tess Agent' }).click();
    await page
      .getByRole('dialog', { name: 'Remove “Tess Agent”?' })
      .getByRole('button', { name: 'Remove the member' })
      .click();
    await row.waitFor({ state: 'detached' });
    // The login went with the member: the agent's cookie no longer opens anything.
    await expect
      .poll(async () => (await tess.page.request.get('/api/v1/public/console/session')).status(), {
        timeout: 5000,
      })
      .toBe(401);
    expect(problems).toEqual([]);
    expect(tess.problems).toEqual([]);
    await tess.context.close();
  });

  it('a partner admin provisions an account, credits its wallet, suspends and reactivates it', async () => {
    const { page, problems } = partnerAdmin;
    await page.goto('/console/partner');
    await page.getByRole('heading', { name: 'Partner admin: accounts', level: 1 }).waitFor();
    await page.getByRole('row').filter({ hasText: 'Acme' }).waitFor();

    await page.getByLabel('Account name').fill('Globex');
    await page.getByLabel('Country').fill('gb');
    await page.getByLabel('Plan', { exact: true }).selectOption({ label: 'Scale' });
    await page.getByRole('button', { name: 'Provision' }).click();
    await page.getByRole('heading', { name: 'Globex', level: 1 }).waitFor();
    await page.getByText('Globex is provisioned.').waitFor();
    const accountId = new URL(page.url()).pathname.split('/').pop()!;
    const balance = page.getByTestId('wallet-balance');
    expect(await balance.textContent()).toBe('0.00 USD');
    // The account picker knows it at once.
    await page.getByLabel('Account', { exact: true }).locator('option', { hasText: 'Globex' }).waitFor({
      state: 'attached',
    });

    await page.getByLabel('Amount').fill('25.00');
    await page.getByLabel('Reference').fill('INV-1');
    await page.getByRole('button', { name: 'Credit the wallet' }).click();
    await expect.poll(() => balance.textContent()).toBe('25.00 USD');
    await page.getByText('Credited 25.00 USD. The balance is now 25.00 USD.').waitFor();

    // A bad amount: the API's message, shown.
    await page.getByLabel('Amount').fill('0');
    await page.getByRole('button', { name: 'Credit the wallet' }).click();
    await page.getByRole('alert').waitFor();
    expect(await balance.textContent()).toBe('25.00 USD');

    await page.getByRole('button', { name: 'Suspend' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Suspend the account' }).click();
    await page.getByText('Globex is suspended.').waitFor();
    let seen = await call(env.app, 'GET', `/partner/accounts/${accountId}`, { key: env.partner.partnerKey });
    expect(seen.body.status).toBe('SUSPENDED');
    // Focus comes back to the button in the same place, now Reactivate.
    await expect.poll(() => focusedText(page)).toBe('Reactivate');

    await page.getByRole('button', { name: 'Reactivate' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Reactivate the account' }).click();
    await page.getByText('Globex is active again.').waitFor();
    seen = await call(env.app, 'GET', `/partner/accounts/${accountId}`, { key: env.partner.partnerKey });
    expect(seen.body).toMatchObject({ status: 'ACTIVE', walletBalance: { amount: '25.0000' } });

    // Acting on the account it picked, the partner admin sees the credit in its wallet page.
    await page.getByLabel('Account', { exact: true }).selectOption({ label: 'Globex' });
    await page.goto('/console/portal/wallet');
    await page.getByRole('heading', { name: 'Wallet', level: 1 }).waitFor();
    await page.getByText('25.00 USD', { exact: true }).first().waitFor();
    const credit = page.getByRole('table', { name: 'Wallet transactions, newest first' }).getByRole('row');
    await credit.filter({ hasText: 'INV-1' }).filter({ hasText: 'Credit' }).waitFor();
    expect(problems).toEqual([]);
  });

  it('passes axe on the keys, webhooks, usage, team and partner pages at 1280 and 390 px', async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      const size = `${viewport.width} px`;
      await admin.page.setViewportSize(viewport);
      for (const [path, heading] of [
        ['/console/portal/keys', 'API keys'],
        ['/console/portal/webhooks', 'Webhooks'],
        ['/console/portal/usage', 'Usage'],
        ['/console/portal/team', 'Team'],
      ] as const) {
        await admin.page.goto(path);
        await admin.page.getByRole('heading', { name: heading, level: 1 }).waitFor();
        if (heading === 'Usage') {
          await admin.page.getByRole('table', { name: 'API calls per day (UTC)' }).waitFor();
          await admin.page.locator('.usage-chart canvas').waitFor();
        } else {
          await admin.page.getByRole('table').first().waitFor();
        }
        await expectAccessible(admin.page, `${heading}, ${size}`);
        expect(await admin.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
          viewport.width,
        );
      }
      // A webhook's page with its delivery log.
      await admin.page.goto('/console/portal/webhooks');
      await admin.page
        .getByRole('link', { name: /^http:\/\/127\.0\.0\.1/ })
        .first()
        .click();
      await admin.page.getByRole('row').filter({ hasText: 'webhook.test' }).first().waitFor();
      await expectAccessible(admin.page, `a webhook, ${size}`);

      const partnerPage = partnerAdmin.page;
      await partnerPage.setViewportSize(viewport);
      await partnerPage.goto('/console/partner');
      const globex = partnerPage.getByRole('row').filter({ hasText: 'Globex' });
      await globex.waitFor();
      await expectAccessible(partnerPage, `partner accounts, ${size}`);
      expect(await partnerPage.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        viewport.width,
      );
      // An account's page, with its usage chart.
      await globex.getByRole('link', { name: 'Globex' }).click();
      await partnerPage.locator('.usage-chart canvas').waitFor();
      await expectAccessible(partnerPage, `an account, ${size}`);
      expect(await partnerPage.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        viewport.width,
      );
    }
    expect(admin.problems).toEqual([]);
    expect(partnerAdmin.problems).toEqual([]);
  }, 90_000); // fourteen pages, each axed
});
