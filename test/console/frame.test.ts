// The console's frame in real Chromium on a real port: the first run with the bootstrap token,
// sign out (the cookie stops working), sign in again, sign out everywhere, an invitation link,
// the nav by role, the partner admin's account picker, axe-core at 1280 and 390 px, and the CSP
// holding (no inline script runs, nothing the page does trips it).
import type { BrowserContext, Page } from 'playwright-core';
import { expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import {
  type BrowserEnv,
  DESKTOP,
  describeBrowser,
  expectAccessible,
  openPage,
  PHONE,
  useBrowser,
} from '../helpers/browser.ts';
import { call } from '../helpers/client.ts';
import { BOOTSTRAP_TOKEN } from '../helpers/harness.ts';

const ADMIN = { name: 'Ada Admin', email: 'ada@example.com', password: 'correct horse battery' };

interface Session {
  cookie: string;
  csrf: string;
}

async function sessionOf(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((c) => c.name === 'tidings_session');
  expect(cookie, 'the session cookie').toBeDefined();
  expect(cookie!.httpOnly).toBe(true);
  return `tidings_session=${cookie!.value}`;
}

/** A call made with a session, as the page makes it (the cookie and, on changes, the CSRF token). */
function asSession(app: App, s: Session, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) {
  return call(app, method, path, { body, headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
}

async function signIn(app: App, email: string, password: string): Promise<Session> {
  const res = await call(app, 'POST', '/console/sessions', { body: { email, password } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const setCookie = String(res.headers['set-cookie']);
  return { cookie: setCookie.split(';')[0]!, csrf: res.body.csrfToken };
}

async function navLabels(page: Page): Promise<string[]> {
  return page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents();
}

describeBrowser('the console frame', () => {
  const env: BrowserEnv = useBrowser({ bootstrap: false });

  it('runs the first run with the bootstrap token, signs out, and signs in again', async () => {
    const { context, page, problems } = await openPage(env);
    await page.goto('/console/');
    await page.getByRole('heading', { name: 'Set up Tidings' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/setup');
    await expectAccessible(page, 'first run, 1280 px');

    // A wrong token: the API's own message is shown.
    await page.getByLabel('Bootstrap token').fill('not-the-token');
    await page.getByLabel('Your name').fill(ADMIN.name);
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Create the administrator' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('INVALID_BOOTSTRAP_TOKEN');

    await page.getByLabel('Bootstrap token').fill(BOOTSTRAP_TOKEN);
    await page.getByRole('button', { name: 'Create the administrator' }).click();
    await page.getByRole('heading', { name: 'Partner admin', level: 1 }).waitFor();
    expect(await navLabels(page)).toEqual([
      'Partner admin',
      'Developer portal',
      'Inbox',
      'Contacts',
      'Templates',
      'Automation',
      'Voice',
    ]);
    await expect.poll(() => page.getByText('The partner has no accounts yet.').count()).toBe(1);
    await expectAccessible(page, 'shell, 1280 px');

    // Sign out: the cookie the browser had no longer opens a session.
    const cookie = await sessionOf(context);
    expect((await call(env.app, 'GET', '/console/session', { headers: { cookie } })).status).toBe(200);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await call(env.app, 'GET', '/console/session', { headers: { cookie } })).status).toBe(401);
    await expectAccessible(page, 'sign in, 1280 px');

    // A wrong password: one message for a wrong email or password, shown as the API said it.
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('INVALID_CREDENTIALS');

    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Partner admin', level: 1 }).waitFor();
    // A reload keeps the session (the cookie) and finds the CSRF token again.
    await page.reload();
    await page.getByRole('heading', { name: 'Partner admin', level: 1 }).waitFor();

    // The CSP holds: an inline script is refused, and nothing the console did tripped it.
    await expect(page.addScriptTag({ content: 'window.inlineRan = true' })).rejects.toThrow(
      /Content Security Policy/,
    );
    expect(await page.evaluate('window.inlineRan === undefined')).toBe(true);
    expect(problems.filter((p) => !/inline script/.test(p))).toEqual([]);
    await context.close();
  });

  it('fits a 390 px phone: the nav folds behind the menu button; sign-in and shell pass axe', async () => {
    const { context, page, problems } = await openPage(env, PHONE);
    await page.goto('/console/sign-in');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectAccessible(page, 'sign in, 390 px');
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Partner admin', level: 1 }).waitFor();

    const menu = page.getByRole('button', { name: 'Menu' });
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav.isVisible()).toBe(false);
    await expectAccessible(page, 'shell, 390 px, menu folded');
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await nav.getByRole('link', { name: 'Inbox' }).click();
    // A partner admin who picked no account is asked to pick one, and the menu folds again.
    await page.getByText('Pick the account to act on').waitFor();
    expect(await nav.isVisible()).toBe(false);
    // Nothing wider than the phone.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('lets a partner admin pick the account it acts on, and sign out everywhere', async () => {
    const admin = await signIn(env.app, ADMIN.email, ADMIN.password);
    const made = await asSession(env.app, admin, 'POST', '/partner/accounts', {
      accountName: 'Acme Retail',
      countryCode: 'US',
      planCode: 'scale',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);

    const { context, page, problems } = await openPage(env, DESKTOP);
    await page.goto('/console/sign-in');
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Inbox' }).click();
    await page.getByText('Pick the account to act on').waitFor();
    await page.getByLabel('Account', { exact: true }).selectOption({ label: 'Acme Retail' });
    await page.getByText('No conversations here.').waitFor();

    // Sign out everywhere ends the other session too (the one made through the API above).
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(
      (await call(env.app, 'GET', '/console/session', { headers: { cookie: admin.cookie } })).status,
    ).toBe(401);

    // Ended from elsewhere: the page's next call finds the session gone and asks to sign in again.
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back where it was, on the account it had picked.
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    await expect
      .poll(() => page.getByLabel('Account', { exact: true }).inputValue())
      .toBe(made.body.accountId);
    const elsewhere = await signIn(env.app, ADMIN.email, ADMIN.password);
    expect((await asSession(env.app, elsewhere, 'POST', '/console/session/sign-out-everywhere')).status).toBe(
      200,
    );
    // The inbox's event stream may find the session gone first (its reconnection answers 401) and show the
    // sign-in page before the click lands; otherwise the click's own call finds it gone. Either way it ends there.
    const ended = page.getByText('Your session has ended.');
    try {
      await page.getByRole('button', { name: 'Sign out', exact: true }).click({ timeout: 4000 });
    } catch (err) {
      if (!(await ended.isVisible())) throw err;
    }
    await ended.waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('accepts an invitation link: an agent signs in and sees the inbox side only', async () => {
    const admin = await signIn(env.app, ADMIN.email, ADMIN.password);
    const accounts = await asSession(env.app, admin, 'GET', '/partner/accounts');
    const accountId = accounts.body.data[0].accountId as string;
    const member = await call(env.app, 'POST', '/team/members', {
      body: { name: 'Abe Agent', email: 'abe@example.com', role: 'agent' },
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf, 'x-account-id': accountId },
    });
    expect(member.status, JSON.stringify(member.body)).toBe(201);
    const invitation = await call(env.app, 'POST', `/team/members/${member.body.id}/invitation`, {
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf, 'x-account-id': accountId },
    });
    expect(invitation.status, JSON.stringify(invitation.body)).toBe(201);

    const { context, page, problems } = await openPage(env, DESKTOP);
    await page.goto(`/console/invite#${invitation.body.token}`);
    await page.getByRole('heading', { name: 'Accept your invitation' }).waitFor();
    await page.getByLabel('Password', { exact: true }).fill('agents answer customers');
    await page.getByLabel('Password again').fill('agents answer customers');
    await page.getByRole('button', { name: 'Accept and sign in' }).click();
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    expect(await navLabels(page)).toEqual(['Inbox', 'Contacts', 'Templates']);
    // The spent token is gone from the address bar.
    expect(new URL(page.url()).hash).toBe('');
    // The developer portal is not the agent's: the page says so (and the API refuses it, step 1).
    await page.goto('/console/portal');
    await page.getByText('Your role cannot use this section.').waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });
});
