// Screenshots of the console's main pages for docs/console.md (a docs tool, not a test): builds the
// console if stale, starts `tidings serve` on a free port over a fresh PGlite database in a temp
// DATA_DIR with the instant sandbox, seeds a small world through the public API, and has Chromium
// save docs/console/<name>.png. Run: npm run console:screenshots
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ensureConsoleBuilt } from './console-build.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const OUT = join(ROOT, 'docs/console');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TOKEN = 'screenshots-bootstrap-token-0123456789';
const PASSWORD = 'correct horse battery';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startServer(port: number, dataDir: string): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['src/cli.ts', 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      BOOTSTRAP_TOKEN: TOKEN,
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      TIDINGS_EVENT_STREAM_POLL_MS: '200',
      TIDINGS_WEBHOOK_POLL_MS: '200',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.once('exit', () => proc.kill('SIGKILL'));
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) throw new Error(`server exited with code ${proc.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return proc;
    } catch {
      // not up yet
    }
    await sleep(100);
  }
  throw new Error('server did not start');
}

/** Who calls: an API key, or a console session (its cookie and CSRF token). */
type Caller = { key: string } | { cookie: string; csrf: string } | null;

function makeApi(base: string) {
  return async function api(caller: Caller, method: string, path: string, body?: unknown) {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (caller && 'key' in caller) headers['x-api-key'] = caller.key;
    if (caller && 'cookie' in caller) {
      headers.cookie = `tidings_session=${caller.cookie}`;
      headers['x-csrf-token'] = caller.csrf;
    }
    const res = await fetch(`${base}/api/v1/public${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : null;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    const cookie = /tidings_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
    return { body: json, cookie };
  };
}

type Api = ReturnType<typeof makeApi>;

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface World {
  partnerAdmin: { cookie: string; csrf: string };
  admin: { cookie: string; csrf: string };
  agent: { cookie: string; csrf: string };
  conversationId: string;
}

async function seed(api: Api, receiverUrl: string): Promise<World> {
  const boot = await api(null, 'POST', '/console/bootstrap', {
    token: TOKEN,
    email: 'pat@northwind.example',
    password: PASSWORD,
    name: 'Pat Partner',
  });
  const partnerAdmin = { cookie: boot.cookie ?? '', csrf: boot.body.csrfToken };

  // The partner's sub-accounts; the first is the one the pages show.
  const accounts: string[] = [];
  for (const [accountName, countryCode, planCode] of [
    ['Acme Coffee', 'US', 'scale'],
    ['Globex Bikes', 'GB', 'scale'],
    ['Initech Clinic', 'IN', 'scale'],
  ] as const) {
    const acc = await api(partnerAdmin, 'POST', '/partner/accounts', {
      accountName,
      countryCode,
      planCode,
      externalRef: accountName.toLowerCase().replace(/\W+/g, '-'),
    });
    accounts.push(acc.body.accountId);
  }
  const accountId = accounts[0]!;
  await api(partnerAdmin, 'POST', `/partner/accounts/${accountId}/wallet/credits`, {
    amount: '50.00',
    reference: 'INV-1001',
  });
  await api(partnerAdmin, 'POST', `/partner/accounts/${accountId}/wallet/credits`, {
    amount: '25.00',
    reference: 'INV-1002',
    description: 'November top-up',
  });
  await api(partnerAdmin, 'POST', `/partner/accounts/${accounts[1]}/wallet/credits`, { amount: '20.00' });
  const live = (
    await api(partnerAdmin, 'POST', `/partner/accounts/${accountId}/keys`, { name: 'Backend', scope: 'live' })
  ).body.apiKey as string;
  const sandbox = (
    await api(partnerAdmin, 'POST', `/partner/accounts/${accountId}/keys`, {
      name: 'Staging',
      scope: 'sandbox',
    })
  ).body.apiKey as string;
  const key = { key: live };
  // The sandbox with quick statuses: delivered, then read, a moment after each message.
  await api(key, 'PUT', '/account/channel', {
    provider: 'sandbox',
    sandbox: { deliveredAfterMs: 300, readAfterMs: 600, reviewAfterMs: 0 },
  });

  const login = async (name: string, email: string, role: 'admin' | 'agent') => {
    const member = await api(key, 'POST', '/team/members', { name, email, role });
    const invitation = await api(key, 'POST', `/team/members/${member.body.id}/invitation`);
    const accepted = await api(null, 'POST', '/console/invitations/accept', {
      token: invitation.body.token,
      password: PASSWORD,
    });
    return { cookie: accepted.cookie ?? '', csrf: accepted.body.csrfToken as string };
  };
  const admin = await login('Alex Admin', 'alex@acme.example', 'admin');
  const agent = await login('Sam Support', 'sam@acme.example', 'agent');

  for (const contact of [
    { phone: '+14155553101', name: 'Carla Customer', tags: ['vip', 'wholesale'] },
    { phone: '+14155553102', name: 'Dev Patel', tags: ['newsletter'] },
    { phone: '+14155553103', name: 'Erin Ortiz', tags: ['vip'], attributes: { city: 'Oakland' } },
    { phone: '+14155553104', name: 'Farah Khan', tags: ['trial'] },
    { phone: '+14155553105', name: 'Gus Lindqvist' },
  ]) {
    await api(key, 'POST', '/contacts', contact);
  }

  const template = await api(key, 'POST', '/templates', {
    name: 'order_shipped',
    language: 'en_US',
    category: 'UTILITY',
    components: [
      {
        type: 'BODY',
        text: 'Hi {{1}}, your order {{2}} has shipped.',
        example: { body_text: [['Ann', 'ORD-1']] },
      },
    ],
  });
  await api(key, 'POST', `/templates/${template.body.id}/submit`);

  const hook = await api(key, 'POST', '/webhooks', {
    url: receiverUrl,
    description: 'Order system',
    events: ['message.*', 'webhook.test'],
  });

  // A customer writes from the sandbox; the reply goes to read.
  const inbound = async (from: string, text: string, name: string) =>
    (await api({ key: sandbox }, 'POST', '/sandbox/inbound-messages', { from, text, name })).body;
  await inbound('+14155553102', 'Do you ship to Canada?', 'Dev Patel');
  const first = await inbound('+14155553101', 'Hello, is my order ready?', 'Carla Customer');
  const reply = await api(key, 'POST', `/conversations/${first.conversationId}/messages`, {
    type: 'text',
    text: 'Yes! It ships today, you will get the tracking number by message.',
  });
  await until('the reply to be read', async () => {
    const m = await api(key, 'GET', `/messages/${reply.body.id}`);
    return m.body.status === 'read' ? true : undefined;
  });
  await inbound('+14155553101', 'Great, thanks!', 'Carla Customer');
  await api(key, 'POST', `/webhooks/${hook.body.id}/test`);
  await until('webhook deliveries', async () => {
    const d = await api(key, 'GET', `/webhooks/${hook.body.id}/deliveries`);
    return d.body.data.length >= 3 ? true : undefined;
  });
  return { partnerAdmin, admin, agent, conversationId: first.conversationId };
}

async function shoot(
  browser: Browser,
  base: string,
  session: { cookie: string } | null,
  name: string,
  path: string,
  ready: (page: Page) => Promise<unknown>,
  viewport = DESKTOP,
): Promise<void> {
  const context = await browser.newContext({ viewport, baseURL: base });
  if (session) {
    await context.addCookies([
      { name: 'tidings_session', value: session.cookie, url: base, httpOnly: true, sameSite: 'Lax' },
    ]);
  }
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`/console${path}`);
  await ready(page);
  await sleep(300);
  const file = join(OUT, `${name}.png`);
  await page.screenshot({ path: file });
  process.stdout.write(`${name}.png ${(statSync(file).size / 1024).toFixed(0)} KiB\n`);
  await context.close();
}

async function main(): Promise<void> {
  if (ensureConsoleBuilt()) process.stdout.write('console built\n');
  mkdirSync(OUT, { recursive: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'tidings-shots-'));
  const receiver: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/tidings`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let server: ChildProcess | undefined;
  let browser: Browser | undefined;
  try {
    server = await startServer(port, dataDir);
    const world = await seed(makeApi(base), receiverUrl);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
        '--disable-dev-shm-usage',
        '--disable-gpu',
      ],
    });
    const b = browser;
    const h1 = (page: Page, name: string) => page.getByRole('heading', { name, level: 1 }).waitFor();

    await shoot(b, base, null, 'sign-in', '/', async (page) => {
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByLabel('Email').fill('sam@acme.example');
    });
    const inbox = async (page: Page) => {
      await page.getByRole('log', { name: 'Messages' }).getByText('Great, thanks!').waitFor();
      await page.locator('.bubble-outbound[data-status="read"]').waitFor();
      // The live badge: the event stream has connected (best effort: the page is right either way).
      await page
        .getByText('Connecting…')
        .waitFor({ state: 'detached', timeout: 5000 })
        .catch(() => {});
    };
    await shoot(b, base, world.agent, 'inbox', `/inbox/${world.conversationId}`, inbox);
    await shoot(b, base, world.agent, 'inbox-phone', `/inbox/${world.conversationId}`, inbox, PHONE);
    await shoot(b, base, world.agent, 'contacts', '/contacts', (page) =>
      page.getByRole('table').getByRole('link', { name: 'Carla Customer' }).waitFor(),
    );
    await shoot(b, base, world.admin, 'templates', '/templates', async (page) => {
      await page.locator('[data-template="order_shipped"]').waitFor();
      await page.getByLabel('Name', { exact: true }).fill('table_ready');
      await page.getByLabel('Body', { exact: true }).fill('Hi {{1}}, your table for {{2}} is ready.');
      await page.getByLabel('Footer (optional)').fill('Acme Coffee');
      await page.getByLabel('Quick reply buttons (optional)').fill('On my way\nCancel');
      await page.getByLabel('Sample for {{1}}').fill('Ada');
      await page.getByLabel('Sample for {{2}}').fill('four');
      const preview = page.locator('figure', { hasText: 'Hi Ada, your table for four is ready.' });
      await preview.waitFor();
      await page.getByLabel('Sample for {{2}}').blur();
      await preview.evaluate((el) => el.scrollIntoView({ block: 'center' }));
    });
    await shoot(b, base, world.admin, 'portal-keys', '/portal/keys', async (page) => {
      await h1(page, 'API keys');
      await page.getByLabel('Name').fill('CI sandbox');
      await page.getByLabel('Sandbox').check();
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('dialog', { name: 'Your new key “CI sandbox”' }).waitFor();
    });
    await shoot(b, base, world.admin, 'portal-webhooks', '/portal/webhooks', async (page) => {
      await h1(page, 'Webhooks');
      await page.getByRole('link', { name: /^http:\/\/127\.0\.0\.1/ }).click();
      await h1(page, 'Webhook');
      await page.getByRole('row').filter({ hasText: 'webhook.test' }).first().waitFor();
      await page
        .getByRole('heading', { name: 'Delivery log' })
        .evaluate((el) => el.scrollIntoView({ block: 'start' }));
    });
    await shoot(b, base, world.admin, 'portal-usage', '/portal/usage', async (page) => {
      await h1(page, 'Usage');
      await page.getByRole('table', { name: 'API calls per day (UTC)' }).waitFor();
    });
    await shoot(b, base, world.admin, 'portal-wallet', '/portal/wallet', async (page) => {
      await h1(page, 'Wallet');
      await page.getByRole('table', { name: 'Wallet transactions, newest first' }).waitFor();
    });
    await shoot(b, base, world.partnerAdmin, 'partner-accounts', '/partner', async (page) => {
      await h1(page, 'Partner admin: accounts');
      await page.getByRole('row').filter({ hasText: 'Initech Clinic' }).waitFor();
    });
  } finally {
    await browser?.close();
    server?.kill('SIGTERM');
    await new Promise((resolve) =>
      server && server.exitCode === null ? server.once('exit', resolve) : resolve(0),
    );
    receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
