// `tidings contacts import FILE.csv`, run as a real process against this file's app listening on a
// real port: a 2,516-row CSV (BOM, CRLF, quoted commas and line breaks, a blank line, tags, extra
// attribute columns, 15 bad rows, a phone repeated), its summary, exit code and rejects file, the
// contacts as the API shows them, an upsert re-run in smaller chunks with a partner key, retries
// of a lost 202 with the same Idempotency-Key, a 429 waited out, and the usage errors.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { defaultRejectsPath } from '../../src/cli/contacts-import/command.ts';
import { csvLine, describeError } from '../../src/cli/contacts-import/rejects.ts';
import { type Columns, mapHeader, toContactInput } from '../../src/cli/contacts-import/rows.ts';
import { parseRetryAfter } from '../../src/cli/sdk.ts';
import { listAll, tenant } from '../helpers/client.ts';
import { projectPath, ROOT, runProcess } from '../helpers/processes.ts';
import { useTestApp } from '../helpers/setup.ts';

const dir = mkdtempSync(`${tmpdir()}/tidings-import-`);

/** Faults the app injects into bulk requests, for the retry test. */
const faults = {
  /** Accepted POSTs (202, key already stored) answered with a 503 instead. */
  post503: 0,
  /** Accepted POSTs whose connection is cut instead of answered. */
  postCut: 0,
  /** Job polls answered 429 with Retry-After: 1. */
  poll429: 0,
  postKeys: [] as string[],
  polls429Sent: 0,
};

function injectFaults(app: App): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.includes('/bulk/contacts')) return;
    if (request.method === 'POST') faults.postKeys.push(String(request.headers['idempotency-key']));
    if (request.method === 'GET' && faults.poll429 > 0) {
      faults.poll429--;
      faults.polls429Sent++;
      const body = JSON.stringify({ error: { code: 'RATE_LIMITED', message: 'Injected by the test.' } });
      return reply.code(429).header('retry-after', '1').type('application/json').send(body);
    }
  });
  // Runs after the idempotency hook has stored the 202: the job exists, the client never hears.
  app.addHook('onSend', async (request, reply, payload) => {
    const fresh = reply.statusCode === 202 && !reply.getHeader('idempotent-replayed');
    if (request.method !== 'POST' || !request.url.endsWith('/bulk/contacts') || !fresh) return payload;
    if (faults.post503 > 0) {
      faults.post503--;
      reply.code(503);
      return JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'Injected by the test.' } });
    }
    if (faults.postCut > 0) {
      faults.postCut--;
      request.raw.socket.destroy();
    }
    return payload;
  });
}

const env = useTestApp({ workers: true, beforeReady: injectFaults });
let baseUrl: string;

beforeAll(async () => {
  baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `node src/cli.ts contacts import …` in the repo, with a clean environment. */
function tidingsImport(args: string[], extraEnv: Record<string, string> = {}) {
  return runProcess('node', ['src/cli.ts', 'contacts', 'import', ...args], {
    cwd: ROOT,
    env: {
      PATH: projectPath(),
      HOME: process.env.HOME,
      DATA_DIR: `${dir}/data`,
      LOG_LEVEL: 'silent',
      // No profile (tidings login) of the machine's user: the key and server are the test's.
      TIDINGS_CONFIG: `${dir}/no-profiles.json`,
      ...extraEnv,
    },
  });
}

/** The figures of the summary printed on stdout. */
function summaryOf(stdout: string): Record<string, number> {
  const figures: Record<string, number> = {};
  for (const name of ['rows read', 'created', 'updated', 'failed', 'jobs']) {
    const match = new RegExp(`^  ${name}\\s+(\\d+)`, 'm').exec(stdout);
    if (match) figures[name] = Number(match[1]);
  }
  return figures;
}

function allContacts(t: { apiKey: string }): Promise<any[]> {
  return listAll(env.app, t.apiKey, '/contacts');
}

async function jobCount(accountId: string): Promise<number> {
  const { rows } = await env.tdb.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM bulk_jobs WHERE account_id = $1',
    [accountId],
  );
  return rows[0]!.n;
}

// ---------------------------------------------------------------------------------------------
// The big file, written as a user's spreadsheet would be, with what each row must become.

const HEADER = ['Phone', 'Name', 'EMAIL', 'tags', 'opted_in', 'plan', 'city', 'score'];
const GOOD_ROWS = 2500;
const phoneOf = (i: number) => `+1415${2000000 + i}`;

interface Expected {
  name: string | null;
  email: string | null;
  tags: string[];
  attributes: Record<string, string>;
  optedIn: boolean;
}

interface BigFile {
  path: string;
  /** By E.164 phone, every contact the file makes. */
  contacts: Map<string, Expected>;
  /** By line, the bad rows: their phone cell and the error code they must get. */
  bad: Map<number, { phone: string; code: string; field?: string }>;
  rows: number;
}

const OPTED_IN = ['true', 'no', '1', '', 'FALSE', 'yes'];
const FLAG: Record<string, boolean | undefined> = {
  true: true,
  no: false,
  '1': true,
  '': undefined,
  false: false,
  yes: true,
};

/** A good row i: cells as written in the file, and the contact they must make. */
function goodRow(i: number): { cells: string[]; expected: Expected } {
  const name =
    i % 50 === 0
      ? `Multi\nLine ${i}`
      : i % 10 === 0
        ? `Smith, Jane ${i}`
        : i % 7 === 0
          ? `The "Boss" ${i}`
          : `Person ${i}`;
  const email = i % 3 === 0 ? '' : `User${i}@Example.com`;
  const tags = i % 4 === 0 ? '' : i % 4 === 1 ? 'vip;Lead' : i % 4 === 2 ? 'West Coast | vip' : 'lead';
  const opted = OPTED_IN[i % OPTED_IN.length]!;
  const plan = i % 5 === 0 ? '' : 'gold';
  const city = i % 2 === 0 ? 'Paris, France' : '';
  const cells = [phoneOf(i), name, email, tags, opted, plan, city, String(i)];
  const attributes: Record<string, string> = { score: String(i) };
  if (plan) attributes.plan = plan;
  if (city) attributes.city = city;
  return {
    cells,
    expected: {
      name,
      email: email ? email.toLowerCase() : null,
      tags: tags ? tags.split(/[;|]/).map((t) => t.trim().toLowerCase()) : [],
      attributes,
      optedIn: FLAG[opted.toLowerCase()] ?? false,
    },
  };
}

/** 15 bad rows: cells and the code (and field) of their error. Phones 9000+ are never created. */
const BAD_ROWS: { cells: string[]; code: string; field?: string }[] = [
  { cells: ['12345', 'Bad phone'], code: 'INVALID_REQUEST', field: 'phone' },
  { cells: ['not-a-phone', 'Bad phone'], code: 'INVALID_REQUEST', field: 'phone' },
  { cells: ['+1555', 'Bad phone'], code: 'INVALID_REQUEST', field: 'phone' },
  { cells: ['', 'No phone', 'nophone@example.com'], code: 'INVALID_REQUEST', field: 'phone' },
  { cells: ['abc', 'Bad phone'], code: 'INVALID_REQUEST', field: 'phone' },
  { cells: ['+99912345678', 'Bad country'], code: 'INVALID_REQUEST', field: 'phone' },
  { cells: ['+1 415 20', 'Short phone'], code: 'INVALID_REQUEST', field: 'phone' },
  { cells: [phoneOf(9001), 'Bad email', 'foo@'], code: 'INVALID_REQUEST', field: 'email' },
  { cells: [phoneOf(9002), 'Bad email', 'no-at-sign'], code: 'INVALID_REQUEST', field: 'email' },
  { cells: [phoneOf(9003), 'Bad email', 'a b@example.com'], code: 'INVALID_REQUEST', field: 'email' },
  { cells: [phoneOf(9004), 'Bad email', '@example.com'], code: 'INVALID_REQUEST', field: 'email' },
  { cells: [phoneOf(9005), 'Bad email', 'x@y'], code: 'INVALID_REQUEST', field: 'email' },
  { cells: [phoneOf(9006), 'Bad tag', '', 'ok;bad/tag'], code: 'INVALID_REQUEST', field: 'tags[1]' },
  { cells: [phoneOf(9007), 'Bad flag', '', '', 'maybe'], code: 'INVALID_REQUEST', field: 'optedIn' },
  {
    cells: [phoneOf(9008), 'Too many', '', '', '', '', '', '', 'extra'],
    code: 'INVALID_CSV_ROW',
  },
];

function writeBigFile(path: string): BigFile {
  const contacts = new Map<string, Expected>();
  const bad = new Map<number, { phone: string; code: string; field?: string }>();
  const parts: string[] = [`\uFEFF${csvLine(HEADER).replace('\n', '\r\n')}`];
  let line = 2;
  let rows = 0;
  const write = (cells: string[]) => {
    const text = csvLine(cells).replace(/\n$/, '\r\n');
    parts.push(text);
    rows++;
    const start = line;
    line += text.split('\r\n').length - 1 + (text.match(/[^\r]\n/g)?.length ?? 0);
    return start;
  };
  for (let i = 0; i < GOOD_ROWS; i++) {
    // A bad row every 150 rows, from row 100 on.
    if (i >= 100 && (i - 100) % 150 === 0 && (i - 100) / 150 < BAD_ROWS.length) {
      const b = BAD_ROWS[(i - 100) / 150]!;
      const cells = [...b.cells, ...Array(Math.max(0, HEADER.length - b.cells.length)).fill('')];
      bad.set(write(cells), { phone: b.cells[0]!, code: b.code, field: b.field });
    }
    if (i === 1234) {
      parts.push('\r\n');
      line++;
    }
    const { cells, expected } = goodRow(i);
    write(cells);
    contacts.set(phoneOf(i), expected);
  }
  // The phone of row 7 again, written nationally: an update of that contact, with this name.
  write(['(415) 200-0007', 'Dup Seven', '', '', '', '', '', '']);
  contacts.get(phoneOf(7))!.name = 'Dup Seven';
  writeFileSync(path, parts.join(''));
  return { path, contacts, bad, rows };
}

// ---------------------------------------------------------------------------------------------

describe('the CSV rules', () => {
  it('matches columns case-insensitively and makes the others attributes', () => {
    const columns = mapHeader([' Phone ', 'NAME', 'Email', 'Tags', 'optedIn', 'plan']);
    expect(columns.fields).toEqual({ phone: 0, name: 1, email: 2, tags: 3, optedIn: 4 });
    expect(columns.attributes).toEqual([{ name: 'plan', index: 5 }]);
    expect(mapHeader(['opted_in', 'phone']).fields).toEqual({ optedIn: 0, phone: 1 });
    expect(mapHeader(['phone', 'MarketingOptOut']).fields).toEqual({ phone: 0, marketingOptOut: 1 });
    expect(mapHeader(['marketing_opt_out', 'phone']).fields).toEqual({ marketingOptOut: 0, phone: 1 });
  });

  it('refuses a header without phone, with a repeated or unusable column', () => {
    expect(() => mapHeader(['name', 'email'])).toThrow(/no "phone" column/);
    expect(() => mapHeader(['phone', 'Phone'])).toThrow(/twice/);
    expect(() => mapHeader(['phone', 'optedIn', 'opted_in'])).toThrow(/both give optedIn/);
    expect(() => mapHeader(['phone', 'marketingOptOut', 'marketing_opt_out'])).toThrow(
      /both give marketingOptOut/,
    );
    expect(() => mapHeader(['phone', 'first seen'])).toThrow(/cannot be an attribute/);
    expect(() => mapHeader(['phone', ''])).toThrow(/no name/);
  });

  it('turns a row into a ContactInput, leaving empty cells out', () => {
    const columns: Columns = mapHeader(['phone', 'name', 'email', 'tags', 'opted_in', 'plan', 'city']);
    expect(toContactInput(['+14152000000', ' Ann ', '', 'a; b|c;;', 'YES', 'gold', ''], columns)).toEqual({
      contact: {
        phone: '+14152000000',
        name: 'Ann',
        tags: ['a', 'b', 'c'],
        optedIn: true,
        attributes: { plan: 'gold' },
      },
    });
    expect(toContactInput(['+14152000000'], columns)).toEqual({ contact: { phone: '+14152000000' } });
    expect(toContactInput(['+1', '', '', '', 'maybe'], columns)).toMatchObject({
      error: { code: 'INVALID_REQUEST', details: [{ field: 'optedIn' }] },
    });
    expect(toContactInput(['+1', '', '', '', '', '', '', 'x'], columns)).toMatchObject({
      error: { code: 'INVALID_CSV_ROW' },
    });
  });

  it('reads marketingOptOut as a flag, apart from optedIn', () => {
    const columns: Columns = mapHeader(['phone', 'opted_in', 'marketing_opt_out', 'plan']);
    expect(toContactInput(['+14152000000', 'yes', 'Yes', 'gold'], columns)).toEqual({
      contact: { phone: '+14152000000', optedIn: true, marketingOptOut: true, attributes: { plan: 'gold' } },
    });
    expect(toContactInput(['+14152000000', '', '0', ''], columns)).toEqual({
      contact: { phone: '+14152000000', marketingOptOut: false },
    });
    expect(toContactInput(['+14152000000', 'no', '', ''], columns)).toEqual({
      contact: { phone: '+14152000000', optedIn: false },
    });
    expect(toContactInput(['+14152000000', '', 'stop', ''], columns)).toEqual({
      error: {
        code: 'INVALID_REQUEST',
        message: 'Invalid request: marketingOptOut must be true, false, yes, no, 1 or 0.',
        details: [{ field: 'marketingOptOut', issue: 'must be true, false, yes, no, 1 or 0' }],
      },
    });
  });

  it('writes rejects as CSV and errors as CODE: message', () => {
    expect(csvLine(['a', 'b,c', 'say "hi"', 'two\nlines'])).toBe('a,"b,c","say ""hi""","two\nlines"\n');
    expect(
      describeError({
        code: 'X',
        message: 'Invalid request: phone is bad.',
        details: [{ field: 'phone', issue: 'is bad' }],
      }),
    ).toBe('X: Invalid request: phone is bad.');
    expect(describeError({ code: 'X', message: 'Nope.', details: [{ field: 'a', issue: 'is b' }] })).toBe(
      'X: Nope. (a is b)',
    );
    expect(defaultRejectsPath('/x/contacts.CSV')).toBe('/x/contacts.rejected.csv');
    expect(defaultRejectsPath('list.txt')).toBe('list.txt.rejected.csv');
    // The import waits out a 429 by the SDK's reading of Retry-After.
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter(null)).toBeNull();
  });
});

describe('tidings contacts import', () => {
  let t: { accountId: string; apiKey: string };
  let big: BigFile;

  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
    big = writeBigFile(`${dir}/contacts.csv`);
  });

  it('imports 2,516 rows in chunks of 1,000, rejecting exactly the 15 bad rows', {
    timeout: 240_000,
  }, async () => {
    const run = await tidingsImport([
      big.path,
      '--account',
      t.accountId,
      '--url',
      baseUrl,
      '--api-key',
      t.apiKey,
    ]);
    expect(run.code, run.stderr).toBe(1);
    expect(summaryOf(run.stdout)).toEqual({
      'rows read': big.rows,
      created: GOOD_ROWS,
      updated: 1,
      failed: BAD_ROWS.length,
      jobs: 3,
    });
    const rejectsPath = `${dir}/contacts.rejected.csv`;
    expect(run.stdout).toContain(`${BAD_ROWS.length} rows written to ${rejectsPath}`);
    expect(run.stdout).toMatch(/elapsed\s+\d+\.\d s/);
    // stderr is not a terminal: a line per chunk.
    expect(run.stderr.match(/^chunk \d+: /gm)).toHaveLength(3);
    expect(await jobCount(t.accountId)).toBe(3);

    const rejects: string[][] = parse(readFileSync(rejectsPath));
    expect(rejects[0]).toEqual([...HEADER, 'line', 'error']);
    const byLine = new Map(rejects.slice(1).map((r) => [Number(r[HEADER.length]), r]));
    expect([...byLine.keys()].sort((a, b) => a - b)).toEqual([...big.bad.keys()].sort((a, b) => a - b));
    for (const [line, want] of big.bad) {
      const row = byLine.get(line)!;
      expect(row[0], `line ${line}`).toBe(want.phone);
      expect(row[HEADER.length + 1], `line ${line}`).toMatch(new RegExp(`^${want.code}: `));
      if (want.field) expect(row[HEADER.length + 1], `line ${line}`).toContain(want.field);
    }

    const contacts = await allContacts(t);
    expect(contacts).toHaveLength(GOOD_ROWS);
    for (const c of contacts) {
      const want = big.contacts.get(c.phone);
      expect(want, c.phone).toBeDefined();
      expect(
        { name: c.name, email: c.email, tags: c.tags, attributes: c.attributes, optedIn: c.optedIn },
        c.phone,
      ).toEqual(want);
    }
  });

  it('re-runs the same file as updates, 700 rows a chunk, with a partner key: no duplicates', {
    timeout: 240_000,
  }, async () => {
    const rejectsPath = `${dir}/second-rejects.csv`;
    const run = await tidingsImport(
      [big.path, '--account', t.accountId, '--url', baseUrl, '--chunk-size', '700', '--rejects', rejectsPath],
      { TIDINGS_API_KEY: env.partner.partnerKey },
    );
    expect(run.code, run.stderr).toBe(1);
    expect(summaryOf(run.stdout)).toEqual({
      'rows read': big.rows,
      created: 0,
      updated: GOOD_ROWS + 1,
      failed: BAD_ROWS.length,
      jobs: 4,
    });
    expect(run.stderr.match(/^chunk \d+: /gm)).toHaveLength(4);
    expect(await jobCount(t.accountId)).toBe(3 + 4);
    const rejects: string[][] = parse(readFileSync(rejectsPath));
    expect(rejects).toHaveLength(BAD_ROWS.length + 1);
    expect(await allContacts(t)).toHaveLength(GOOD_ROWS);
  });

  it('retries a lost 202 with the same Idempotency-Key (one job per chunk) and waits out a 429', {
    timeout: 120_000,
  }, async () => {
    const other = await tenant(env.app, env.partner.partnerKey);
    const file = `${dir}/small.csv`;
    writeFileSync(
      file,
      'phone,name\n+14153000001,A\n+14153000002,B\n+14153000003,C\n+14153000004,D\n+14153000005,E\n',
    );
    Object.assign(faults, { post503: 1, postCut: 1, poll429: 1, postKeys: [], polls429Sent: 0 });
    const run = await tidingsImport([
      file,
      '--account',
      other.accountId,
      '--url',
      baseUrl,
      '--api-key',
      other.apiKey,
      '--chunk-size',
      '3',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run.stdout)).toEqual({ 'rows read': 5, created: 5, updated: 0, failed: 0, jobs: 2 });
    expect(run.stdout).toMatch(/rejects\s+none/);
    expect(existsSync(`${dir}/small.rejected.csv`)).toBe(false);
    expect(faults.polls429Sent).toBe(1);
    expect(run.stderr).toContain(
      'POST /bulk/contacts: HTTP 503 SERVICE_UNAVAILABLE: Injected by the test.; retrying',
    );
    expect(run.stderr).toMatch(/GET \/bulk\/contacts\/job_\w+: HTTP 429 RATE_LIMITED: .*; retrying in 1 s/);
    // Two chunks, each POSTed twice with its own key, and one job each.
    const [k1, , k2] = faults.postKeys;
    expect(k1).not.toBe(k2);
    expect(faults.postKeys).toEqual([k1, k1, k2, k2]);
    expect(await jobCount(other.accountId)).toBe(2);
    expect(await allContacts(other)).toHaveLength(5);
  });

  it('rejects a duplicate in create mode with CONFLICT', { timeout: 120_000 }, async () => {
    const file = `${dir}/create.csv`;
    writeFileSync(file, `phone,name\n${phoneOf(1)},Exists\n+14153999999,New\n`);
    const run = await tidingsImport([
      file,
      '--account',
      t.accountId,
      '--url',
      baseUrl,
      '--api-key',
      t.apiKey,
      '--mode',
      'create',
    ]);
    expect(run.code, run.stderr).toBe(1);
    expect(summaryOf(run.stdout)).toEqual({ 'rows read': 2, created: 1, updated: 0, failed: 1, jobs: 1 });
    const rejects: string[][] = parse(readFileSync(`${dir}/create.rejected.csv`));
    expect(rejects).toEqual([
      ['phone', 'name', 'line', 'error'],
      [phoneOf(1), 'Exists', '2', expect.stringMatching(/^CONFLICT: /)],
    ]);
  });

  it('exits 2 on usage errors: no phone column, a missing file, no key, a bad chunk size', {
    timeout: 120_000,
  }, async () => {
    const file = `${dir}/no-phone.csv`;
    writeFileSync(file, 'name,email\nAnn,ann@example.com\n');
    const common = ['--account', t.accountId, '--url', baseUrl];
    const noPhone = await tidingsImport([file, ...common, '--api-key', t.apiKey]);
    expect(noPhone.code).toBe(2);
    expect(noPhone.stderr).toContain('no "phone" column');
    const missing = await tidingsImport([`${dir}/nothing-here.csv`, ...common, '--api-key', t.apiKey]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such file');
    const noKey = await tidingsImport([big.path, ...common]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('TIDINGS_API_KEY');
    const badChunk = await tidingsImport([
      big.path,
      ...common,
      '--api-key',
      t.apiKey,
      '--chunk-size',
      '1001',
    ]);
    expect(badChunk.code).toBe(2);
    writeFileSync(`${dir}/one.csv`, 'phone\n+14153000009\n');
    const badKey = await tidingsImport([`${dir}/one.csv`, ...common, '--api-key', 'tdg_live_nope']);
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toContain('401');
  });
});
