// The CLI as an API client, run as real processes against this file's app on a real port (never
// 3000): `tidings login` checks the key and saves a 0600 profile (a refused key saves nothing),
// `send` and `messages get` through the profile, `contacts list` over several pages, `contacts
// import` at the profile's URL, partner keys with an account, flags and environment over the
// profile, the errors with nothing configured, `logout`, and `--version`.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPrefix, resolveConnection, saveProfile } from '../../src/cli/profiles.ts';
import { UsageError } from '../../src/cli/usage-error.ts';
import { call, tenant } from '../helpers/client.ts';
import {
  approvedTemplate,
  customerWrote,
  messageWhen,
  sandboxTenant,
  useMessagingApp,
} from '../helpers/messaging.ts';
import { type ProcessRun, projectPath, ROOT, runProcess, useWatchedProcesses } from '../helpers/processes.ts';
import { verifySignature } from '../helpers/receiver.ts';
import { until } from '../helpers/wait.ts';

const dir = mkdtempSync(`${tmpdir()}/tidings-profiles-`);
const env = useMessagingApp({ config: { eventStreamPollMs: 50 } });
let base: string;

beforeAll(async () => {
  base = await env.app.listen({ port: 0, host: '127.0.0.1' });
  expect(new URL(base).port).not.toBe('3000');
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
// Registered after the removal above, so its afterAll (killing the listeners left) runs before it.
const processes = useWatchedProcesses();

/** `node src/cli.ts …` with a clean environment: a HOME of its own, no TIDINGS_* but those given. */
function tidings(args: string[], extraEnv: Record<string, string> = {}) {
  return runProcess('node', ['src/cli.ts', ...args], {
    cwd: ROOT,
    env: {
      PATH: projectPath(),
      HOME: `${dir}/home`,
      DATA_DIR: `${dir}/data`,
      LOG_LEVEL: 'silent',
      ...extraEnv,
    },
  });
}

/** A long-running `tidings webhooks listen …`, its output, and its exit. */
function listen(args: string[], extraEnv: Record<string, string>) {
  const listener = processes.watch('node', ['src/cli.ts', 'webhooks', 'listen', ...args], {
    cwd: ROOT,
    env: { PATH: projectPath(), HOME: `${dir}/home`, ...extraEnv },
  });
  const out = listener.output;
  const ready = () =>
    until(
      () => out().includes('Ready: forwarding'),
      15_000,
      () => out(),
    );
  const stop = async () => {
    listener.child.kill('SIGINT');
    expect((await listener.done).code).toBe(0);
  };
  return { output: out, ready, stop, secret: () => /signing secret is (whsec_\S+)/.exec(out())?.[1] };
}

let configs = 0;
/** A profile file of its own for a test (TIDINGS_CONFIG), not yet written. */
const newConfig = () => `${dir}/config-${++configs}.json`;
const profilesIn = (path: string) => JSON.parse(readFileSync(path, 'utf8')).profiles;

async function login(config: string, args: string[]): Promise<ProcessRun> {
  const run = await tidings(['login', '--url', base, ...args], { TIDINGS_CONFIG: config });
  expect(run.code, run.stderr).toBe(0);
  return run;
}

describe('tidings login and logout', { timeout: 120_000 }, () => {
  it('checks the key, saves the profile in a 0600 file under XDG_CONFIG_HOME, and never prints the key', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const xdg = `${dir}/xdg`;
    const run = await tidings(['login', '--url', `${base}/`, '--key', t.apiKey], { XDG_CONFIG_HOME: xdg });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`account ${t.accountId}`);
    expect(run.stdout).toContain(t.apiKey.slice(0, 13));
    expect(run.stdout + run.stderr).not.toContain(t.apiKey);
    const file = `${xdg}/tidings/config.json`;
    expect(run.stdout).toContain(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(`${xdg}/tidings`).mode & 0o777).toBe(0o700);
    expect(profilesIn(file)).toEqual({
      default: { url: base, apiKey: t.apiKey, scope: 'live', label: expect.any(String) },
    });

    // A second profile beside it; a wrong key is refused and changes nothing.
    const other = await tenant(env.app, env.partner.partnerKey);
    const second = await tidings(['login', '--url', base, '--key', other.apiKey, '--profile', 'other'], {
      XDG_CONFIG_HOME: xdg,
    });
    expect(second.code, second.stderr).toBe(0);
    const before = readFileSync(file, 'utf8');
    const wrong = await tidings(
      ['login', '--url', base, '--key', `${t.apiKey.slice(0, -4)}AAAA`, '--profile', 'bad'],
      {
        XDG_CONFIG_HOME: xdg,
      },
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^INVALID_API_KEY: .+ \(req_[\w-]+\)$/m);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(Object.keys(profilesIn(file))).toEqual(['default', 'other']);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    // A server that is not there: refused, nothing stored.
    const fresh = newConfig();
    const nowhere = await tidings(['login', '--url', 'http://127.0.0.1:9', '--key', t.apiKey], {
      TIDINGS_CONFIG: fresh,
    });
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain('cannot reach http://127.0.0.1:9');
    expect(existsSync(fresh)).toBe(false);

    const out = await tidings(['logout', '--profile', 'other'], { XDG_CONFIG_HOME: xdg });
    expect(out.code, out.stderr).toBe(0);
    expect(Object.keys(profilesIn(file))).toEqual(['default']);
  });

  it('takes a partner key, with an account to act on or alone', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const config = newConfig();
    const withAccount = await login(config, ['--key', env.partner.partnerKey, '--account', t.accountId]);
    expect(withAccount.stdout).toContain(`partner key acting on account ${t.accountId}`);
    const alone = await login(config, ['--key', env.partner.partnerKey, '--profile', 'partner']);
    expect(alone.stdout).toMatch(/partner key key_\w+ .*acting on no account/);
    expect(profilesIn(config)).toMatchObject({
      default: { accountId: t.accountId, scope: 'partner' },
      partner: { scope: 'partner' },
    });
    expect(profilesIn(config).partner.accountId).toBeUndefined();

    // The partner profile acts on the account its login named; the other needs --account.
    const created = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+14155552300' },
    });
    expect(created.status).toBe(201);
    const listed = await tidings(['contacts', 'list', '--json'], { TIDINGS_CONFIG: config });
    expect(listed.code, listed.stderr).toBe(0);
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual([created.body.id]);
    const noAccount = await tidings(['contacts', 'list', '--profile', 'partner'], { TIDINGS_CONFIG: config });
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain('INVALID_REQUEST: A partner key must name the account');
    const named = await tidings(['contacts', 'list', '--profile', 'partner', '--account', t.accountId], {
      TIDINGS_CONFIG: config,
    });
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout).toContain(created.body.id);
  });
});

describe('tidings API commands with a profile', { timeout: 120_000 }, () => {
  it('sends a text and a template; messages get shows them', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const config = newConfig();
    await login(config, ['--key', t.apiKey]);
    const phone = '+14155552101';
    await customerWrote(env.tdb.db, t.accountId, phone, new Date());
    const sent = await tidings(['send', '--to', phone, '--text', 'Hello from the CLI'], {
      TIDINGS_CONFIG: config,
    });
    expect(sent.code, sent.stderr).toBe(0);
    const [id, status] = sent.stdout.trim().split('\t');
    expect(id).toMatch(/^msg_\w{26}$/);
    expect(status).toBe('queued');
    const read = await messageWhen(env.app, t.apiKey, id!, 'read');
    expect(read.text).toBe('Hello from the CLI');

    const shown = await tidings(['messages', 'get', id!], { TIDINGS_CONFIG: config });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id +${id}$`, 'm'));
    expect(shown.stdout).toMatch(/^status +read$/m);
    expect(shown.stdout).toMatch(/^text +Hello from the CLI$/m);
    const json = await tidings(['messages', 'get', id!, '--json'], { TIDINGS_CONFIG: config });
    // The API's whole answer (settlement may still add to it after `read`: the fields, not their values).
    const answer = JSON.parse(json.stdout);
    expect(Object.keys(answer).sort()).toEqual(Object.keys(read).sort());
    expect(answer).toMatchObject({ id, status: 'read', text: 'Hello from the CLI', to: phone });

    const template = await approvedTemplate(env.app, t.apiKey, { name: 'cli_reminder' });
    const viaTemplate = await tidings(
      [
        'send',
        '--to',
        '+14155552102',
        '--template',
        template.name,
        '--language',
        'en_US',
        '--param',
        'Ann',
        '--param',
        'Monday 10:00',
        '--json',
      ],
      { TIDINGS_CONFIG: config },
    );
    expect(viaTemplate.code, viaTemplate.stderr).toBe(0);
    const message = JSON.parse(viaTemplate.stdout);
    expect(message.template).toMatchObject({
      name: 'cli_reminder',
      parameters: ['Ann', 'Monday 10:00'],
      body: 'Hi Ann, your appointment is on Monday 10:00. Reply to confirm.',
    });

    // The API's refusal, as the API said it; a missing option is a usage error.
    const unknown = await tidings(['messages', 'get', 'msg_01jv4e2k7qf3x8m2n5p6r9s0tb'], {
      TIDINGS_CONFIG: config,
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^RESOURCE_NOT_FOUND: .+ \(req_[\w-]+\)$/m);
    const closed = await tidings(['send', '--to', '+14155552103', '--text', 'outside the window'], {
      TIDINGS_CONFIG: config,
    });
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(/^CSW_VIOLATION: /m);
    const both = await tidings(['send', '--to', phone, '--text', 'x', '--template', 'y'], {
      TIDINGS_CONFIG: config,
    });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give either --text or --template');
  });

  it('lists contacts: one page, or every page with --all, as a table or JSON lines', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const config = newConfig();
    await login(config, ['--key', t.apiKey]);
    const vip: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await call(env.app, 'POST', '/contacts', {
        key: t.apiKey,
        body: { phone: `+1415555240${i}`, name: `Person ${i}`, tags: i < 5 ? ['vip', 'lead'] : ['lead'] },
      });
      expect(res.status).toBe(201);
      if (i < 5) vip.unshift(res.body.id);
    }
    const all = await tidings(['contacts', 'list', '--tag', 'vip', '--limit', '2', '--all'], {
      TIDINGS_CONFIG: config,
    });
    expect(all.code, all.stderr).toBe(0);
    const lines = all.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +PHONE +NAME +TAGS$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(vip);
    expect(lines[1]).toMatch(/^ctc_\w+ +\+14155552404 +Person 4 +(vip,lead|lead,vip)$/);
    expect(all.stderr).toBe('5 contacts\n');

    const page = await tidings(['contacts', 'list', '--limit', '3', '--json'], { TIDINGS_CONFIG: config });
    expect(page.code, page.stderr).toBe(0);
    const json = page.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const api = await call(env.app, 'GET', '/contacts', { key: t.apiKey, query: { limit: '3' } });
    expect(json).toEqual(api.body.data);
    expect(page.stderr).toContain('3 contacts (more:');
  });

  it('imports at the profile’s URL, not port 3000', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const config = newConfig();
    await login(config, ['--key', env.partner.partnerKey, '--account', t.accountId, '--profile', 'imports']);
    const file = `${dir}/import.csv`;
    writeFileSync(file, 'phone,name,tags\n+14155552501,Ann,a\n+14155552502,Bob,b\n');
    const run = await tidings(['contacts', 'import', file, '--profile', 'imports'], {
      TIDINGS_CONFIG: config,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/created\s+2/);
    const res = await call(env.app, 'GET', '/contacts', { key: t.apiKey });
    expect(res.body.data.map((c: { phone: string }) => c.phone).sort()).toEqual([
      '+14155552501',
      '+14155552502',
    ]);
  });

  it('webhooks listen forwards with the profile’s server and key, and keeps its secret in the profile', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const config = newConfig();
    await login(config, ['--key', t.apiKey, '--profile', 'dev']);
    const receiver = await env.receiver();
    const first = listen(['--forward-to', receiver.url(), '--profile', 'dev'], { TIDINGS_CONFIG: config });
    await first.ready();
    const secret = first.secret();
    expect(secret).toMatch(/^whsec_/);
    expect(profilesIn(config).dev.webhookSecret).toBe(secret);
    expect(statSync(config).mode & 0o777).toBe(0o600);
    const created = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+14155552700' },
    });
    await receiver.waitFor(1, 15_000);
    expect(verifySignature(secret!, receiver.received[0]!)).toMatchObject({
      type: 'contact.created',
      data: { id: created.body.id },
    });
    await first.stop();

    // The next run signs with the same secret, so the receiver's stays valid.
    const second = listen(['--forward-to', receiver.url()], {
      TIDINGS_CONFIG: config,
      TIDINGS_PROFILE: 'dev',
    });
    await second.ready();
    expect(second.secret()).toBe(secret);
    await second.stop();
  });

  it('takes flags over the environment over the profile', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const other = await tenant(env.app, env.partner.partnerKey);
    const created = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+14155552600' },
    });
    const config = newConfig();
    await login(config, ['--key', other.apiKey]);
    // The profile's server made unreachable: --url or TIDINGS_URL must win for this to work.
    const file = profilesIn(config);
    file.default.url = 'http://127.0.0.1:9';
    writeFileSync(config, JSON.stringify({ profiles: file }), { mode: 0o600 });

    const viaProfile = await tidings(['contacts', 'list'], { TIDINGS_CONFIG: config });
    expect(viaProfile.code).toBe(1);
    expect(viaProfile.stderr).toContain('cannot reach http://127.0.0.1:9');
    const flags = await tidings(['contacts', 'list', '--json', '--url', base, '--key', t.apiKey], {
      TIDINGS_CONFIG: config,
      TIDINGS_API_KEY: 'tdg_live_not_this_one',
      TIDINGS_URL: 'http://127.0.0.1:9',
    });
    expect(flags.code, flags.stderr).toBe(0);
    expect(JSON.parse(flags.stdout).id).toBe(created.body.id);
    const environment = await tidings(['contacts', 'list', '--json'], {
      TIDINGS_CONFIG: config,
      TIDINGS_API_KEY: t.apiKey,
      TIDINGS_URL: base,
    });
    expect(environment.code, environment.stderr).toBe(0);
    expect(JSON.parse(environment.stdout).id).toBe(created.body.id);
    // The profile's key with only the server from the environment: the other account's (no contacts).
    const mixed = await tidings(['contacts', 'list', '--json'], {
      TIDINGS_CONFIG: config,
      TIDINGS_URL: base,
    });
    expect(mixed.code, mixed.stderr).toBe(0);
    expect(mixed.stdout).toBe('');
  });

  it('says to run tidings login when nothing is configured, names a missing profile, prints the version', async () => {
    const config = newConfig();
    const nothing = await tidings(['contacts', 'list'], { TIDINGS_CONFIG: config });
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('tidings login');
    const missing = await tidings(['send', '--to', '+14155552000', '--text', 'x', '--profile', 'staging'], {
      TIDINGS_CONFIG: config,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no profile "staging"');
    const fromEnv = await tidings(['messages', 'get', 'msg_x'], {
      TIDINGS_CONFIG: config,
      TIDINGS_PROFILE: 'ci',
    });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('no profile "ci"');

    const version = await tidings(['--version']);
    expect(version.code).toBe(0);
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
    expect(version.stdout.trim()).toBe(pkg.version);
  });
});

describe('resolveConnection', () => {
  it('takes each setting from flags, then the environment, then the profile; the account goes with its key', () => {
    const path = newConfig();
    saveProfile(path, 'default', {
      url: 'http://profile:1',
      apiKey: 'tdg_partner_P',
      accountId: 'acc_profile',
    });
    const env = { TIDINGS_CONFIG: path };
    expect(resolveConnection({}, env)).toMatchObject({
      baseUrl: 'http://profile:1',
      apiKey: 'tdg_partner_P',
      accountId: 'acc_profile',
      profileName: 'default',
    });
    // Another key (flag or environment) does not take the profile's account; the URL still comes from it.
    expect(resolveConnection({ key: 'tdg_live_K' }, env)).toMatchObject({
      baseUrl: 'http://profile:1',
      apiKey: 'tdg_live_K',
      accountId: null,
    });
    expect(resolveConnection({}, { ...env, TIDINGS_API_KEY: 'tdg_live_E' }).accountId).toBeNull();
    expect(
      resolveConnection(
        { account: 'acc_flag' },
        { ...env, TIDINGS_ACCOUNT_ID: 'acc_env', TIDINGS_URL: 'http://env:2/' },
      ),
    ).toMatchObject({ baseUrl: 'http://env:2', apiKey: 'tdg_partner_P', accountId: 'acc_flag' });
    expect(resolveConnection({}, { ...env, TIDINGS_ACCOUNT_ID: 'acc_env' }).accountId).toBe('acc_env');
    // Flags and environment giving key and URL need no profile file at all.
    expect(
      resolveConnection({ url: 'https://flag:3', key: 'k' }, { TIDINGS_CONFIG: `${dir}/absent.json` }),
    ).toMatchObject({ baseUrl: 'https://flag:3', apiKey: 'k', profileName: null });
    expect(() => resolveConnection({ url: 'ftp://x', key: 'k' }, env)).toThrow(
      '--url must use http or https',
    );
    expect(() => resolveConnection({ profile: '../etc' }, env)).toThrow(UsageError);
    writeFileSync(path, 'not json');
    expect(() => resolveConnection({}, env)).toThrow('is not a Tidings profile file');
  });

  it('shows a key by its first characters only', () => {
    const key = `tdg_live_${'A1b2'.repeat(9)}zz`;
    expect(keyPrefix(key)).toBe('tdg_live_A1b2…');
    expect(keyPrefix('short')).toBe('sh…');
  });
});
