// Every request example of docs/*.md, run as written (issue 43, item 13's class): each page's
// `sh` blocks of curl commands (docs/README.md § Examples says how a page writes them; the parser is
// test/helpers/doc-examples.ts) are run by bash and the real curl, one command after another, with
// what the README's first five minutes leave a reader (its variables, its `field` function, an
// account of the page's own), against a server process started as the README's quick start says.
// Each answer must be the documented one: its status (any 2xx unless the page says another), its
// error code, the fields it shows. Then the page runs a second time on the same account and data,
// which is what a reader pasting an example again does: each command must answer as before, or
// as the page says a second time answers (`again: …`). WhatsApp and Twilio are fakes that take the
// pages' own ids and numbers (and hand out the credentials a reader would paste for `…`).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeTwilio } from '../fakes/twilio.ts';
import { FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import {
  type Command,
  type ExampleBlock,
  examplesOf,
  shapeMisses,
  withoutComments,
} from '../helpers/doc-examples.ts';
import { BOOTSTRAP_TOKEN } from '../helpers/harness.ts';
import { type OpenApiDocument, operationsOf } from '../helpers/openapi-operations.ts';
import { processApi, runProcess } from '../helpers/processes.ts';
import {
  firstFiveMinutes,
  quickStartLocalEnv,
  type ReaderServer,
  readerAccount,
  startReaderServer,
} from '../helpers/reader.ts';

/**
 * Examples that fail only for a fault another group of issue 43 fixes (the item named), skipped
 * until it is merged: the lead removes each entry with that merge. Keys are `page#section`.
 */
const AWAITING_ISSUE_43_ITEMS: Record<string, number> = {};

/**
 * What a page's examples take as given besides the README's state, as its opening says: templates
 * of the names its sends use, approved (the sandbox reviews them).
 */
const ASSUMED_TEMPLATES: Record<
  string,
  { name: string; category?: string; text: string; buttons?: string[] }[]
> = {
  'docs/automation.md': [
    { name: 'trial_tips', text: 'Three tips for your trial: reply TIPS to get them.' },
    { name: 'trial_ending', text: 'Hi {{1}}, your trial ends tomorrow. Reply to keep your plan.' },
    { name: 'we_miss_you', category: 'MARKETING', text: 'Hi {{1}}, we miss you: 10% off this week.' },
  ],
  'docs/messaging.md': [
    { name: 'confirm_visit', text: 'Your visit is on {{1}}. Will you come?', buttons: ['Yes', 'No'] },
    { name: 'spring_sale', category: 'MARKETING', text: 'Hi {{1}}, our spring sale starts today.' },
  ],
};

const DOCS = new URL('../../docs/', import.meta.url).pathname;
const PAGES = readdirSync(DOCS)
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => `docs/${f}`);
/** The issues' work journals (they were the end of decisions.md): not run, their request shapes checked. */
const HISTORY = readdirSync(join(DOCS, 'history'))
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => `docs/history/${f}`);

/** The README's `field` function, as its walkthrough defines it for every later block. */
function readmeField(): string {
  const line = firstFiveMinutes()
    .split('\n')
    .find((l) => l.startsWith('field() {'));
  if (!line) throw new Error('README.md: the walkthrough no longer defines field()');
  return line;
}

/** Values a reader brings for a `"name": "…"` no earlier answer gave (set when the fakes start). */
const READER_VALUES: Record<string, string> = { token: BOOTSTRAP_TOKEN };

let reader: ReaderServer;
let meta: FakeWhatsAppCloud;
let twilio: FakeTwilio;
const work = mkdtempSync(join(tmpdir(), 'tidings-docs-'));

beforeAll(async () => {
  meta = await FakeWhatsAppCloud.start({ autoApprove: true });
  twilio = await FakeTwilio.start();
  // The numbers and ids the pages show are the reader's own.
  const business = meta.createBusiness({
    phoneNumberId: '106540352242922',
    businessAccountId: '102290129340398',
    verifyToken: 'a-long-random-string',
  });
  const voice = twilio.createAccount({
    sid: 'AC0123456789abcdef0123456789abcdef',
    numbers: ['+14155550100'],
  });
  Object.assign(READER_VALUES, {
    accessToken: business.accessToken,
    appSecret: business.appSecret,
    authToken: voice.authToken,
  });
  reader = await startReaderServer({
    ...quickStartLocalEnv(),
    TIDINGS_WHATSAPP_GRAPH_URL: meta.graphUrl,
    TIDINGS_TWILIO_API_URL: twilio.apiUrl,
  });
}, 150_000);

afterAll(async () => {
  await reader?.stop();
  await meta?.close();
  await twilio?.close();
  rmSync(work, { recursive: true, force: true });
});

interface PageState {
  vars: Record<string, string>;
  /** The latest id of each prefix an answer gave (either run). */
  ids: Map<string, string>;
  /** The latest text of each field an answer of this run gave, and of the run before. */
  fields: Map<string, string>;
  earlierFields: Map<string, string>;
  dir: string;
}

const README_VARIABLES = ['BASE', 'API_KEY', 'SANDBOX_KEY', 'PARTNER_KEY', 'ACCOUNT'];
const TYPEID = /^([a-z]{2,8})_[0-7][0-9a-hjkmnp-tv-z]{25}$/;

/**
 * What an answer gives later commands: its own id and `…Id` fields (not ids inside lists, which
 * name other things), those an error names in its details (the template a 409 says exists), and
 * its top-level text fields.
 */
function learn(state: PageState, answer: unknown): void {
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return;
  const own = Object.entries(answer);
  const details = (answer as { error?: { details?: unknown } }).error?.details;
  const named = Array.isArray(details)
    ? details.flatMap((d) => (d && typeof d === 'object' ? Object.entries(d) : []))
    : [];
  // The answer's own id last: it is the latest of its prefix.
  for (const [key, value] of [
    ...named,
    ...own.filter(([k]) => k !== 'id'),
    ...own.filter(([k]) => k === 'id'),
  ]) {
    if (typeof value !== 'string') continue;
    if (own.some(([k]) => k === key)) state.fields.set(key, value);
    const id = TYPEID.exec(value);
    if (id && (key === 'id' || key.endsWith('Id'))) state.ids.set(id[1]!, value);
  }
}

/** The command with its placeholders filled in, or what it names that nothing gave. */
function resolve(text: string, state: PageState): { text: string; unresolved: string[] } {
  const unresolved: string[] = [];
  let out = text.replace(/\b([a-z]{2,8})_…/g, (whole, prefix: string) => {
    const id = state.ids.get(prefix);
    if (!id) unresolved.push(`${whole} (no earlier answer gave a ${prefix}_ id)`);
    return id ?? whole;
  });
  out = out.replace(/"(\w+)"(\s*:\s*)"([^"]*…[^"]*)"/g, (whole, name: string, colon: string) => {
    // This run's answers first, then what the reader brings, then what the run before was given.
    const value = state.fields.get(name) ?? READER_VALUES[name] ?? state.earlierFields.get(name);
    if (value === undefined) unresolved.push(`"${name}": "…" (no earlier answer has it)`);
    return value === undefined ? whole : `"${name}"${colon}${JSON.stringify(value)}`;
  });
  const runs = withoutComments(out);
  if (runs.includes('…')) unresolved.push(`an ellipsis in: ${runs.split('\n').find((l) => l.includes('…'))}`);
  for (const m of runs.matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g)) {
    if (!(m[1]! in state.vars)) unresolved.push(`$${m[1]} (neither the README nor the page sets it)`);
  }
  return { text: out, unresolved };
}

interface Answer {
  status: number | null;
  body: any;
  raw: string;
  stderr: string;
  /** The last answer's `Retry-After`, in seconds (1 when it has none). */
  retryAfter: number;
}

/** Runs one command in bash, curl answering through a wrapper that records its status and body. */
async function bash(command: string, state: PageState): Promise<Answer> {
  const headers = join(state.dir, '.headers');
  const body = join(state.dir, '.body');
  const envDump = join(state.dir, '.env');
  writeFileSync(headers, '');
  writeFileSync(body, '');
  const script = [
    'set -a',
    readmeField(),
    `curl() { command curl -sS -D ${JSON.stringify(headers)} "$@" | tee ${JSON.stringify(body)}; return "\${PIPESTATUS[0]}"; }`,
    command,
    `__rc=$?; env -0 > ${JSON.stringify(envDump)}; exit $__rc`,
  ].join('\n');
  const { stderr } = await runProcess('bash', ['-c', script], {
    cwd: state.dir,
    env: { PATH: process.env.PATH, HOME: state.dir, ...state.vars },
    timeoutMs: 30_000,
  });
  // Gone only when the file's time ran out and its folder was removed: no answer then.
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  };
  const head = read(headers);
  const statuses = [...head.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)];
  const raw = read(body);
  let parsed: unknown = null;
  try {
    parsed = raw ? JSON.parse(raw) : null;
  } catch {
    // not JSON (a file downloaded with -o, a TwiML answer): only the status is checked
  }
  // Variables the command set (NAME=$(curl … | field …)) are the page's from now on.
  for (const m of command.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)) {
    const entry = read(envDump)
      .split('\0')
      .find((e) => e.startsWith(`${m[1]}=`));
    if (entry) state.vars[m[1]!] = entry.slice(m[1]!.length + 1);
  }
  const retryAfter = Number([...head.matchAll(/^retry-after: *(\d+)/gim)].at(-1)?.[1] ?? 1);
  return {
    status: statuses.length ? Number(statuses.at(-1)![1]) : null,
    body: parsed,
    raw,
    stderr,
    retryAfter,
  };
}

function answered(expected: Command['expected'], answer: Answer): boolean {
  return expected.some((e) => {
    if (answer.status === null) return false;
    if (e.status === 'any 2xx') return answer.status >= 200 && answer.status < 300;
    return answer.status === e.status && (!e.code || answer.body?.error?.code === e.code);
  });
}

/**
 * The command's answer, a 429 RATE_LIMITED the page does not expect waited out as the README says
 * (`Retry-After`) and the command run again: the pages run at curl's speed, faster than a reader
 * types, and a refused call did nothing. One the page expects (a sign-in lockout) is its answer.
 * Three tries at most, so a limiter that never admits still fails the page.
 */
async function answerOf(text: string, state: PageState, expected: Command['expected']): Promise<Answer> {
  for (let tries = 1; ; tries++) {
    const answer = await bash(text, state);
    // A file downloaded with -o leaves no body to read the code in: its 429 is taken as the limit's.
    const throttled =
      answer.status === 429 && (answer.body?.error?.code === 'RATE_LIMITED' || answer.body === null);
    if (!throttled || answered(expected, answer) || tries === 3) return answer;
    await new Promise((r) => setTimeout(r, 1000 * answer.retryAfter));
  }
}

const said = (expected: Command['expected']) =>
  expected.map((e) => `${e.status}${e.code ? ` ${e.code}` : ''}`).join(' or ');

/** Runs a page's examples once; answers what went otherwise than the page says. */
async function runPage(blocks: ExampleBlock[], state: PageState, again: boolean): Promise<string[]> {
  const faults: string[] = [];
  state.earlierFields = new Map([...state.earlierFields, ...state.fields]);
  state.fields = new Map();
  for (const block of blocks) {
    if (block.key in AWAITING_ISSUE_43_ITEMS) continue;
    for (const command of block.commands) {
      const where = `${block.page}:${command.line} (${again ? 'second run' : 'first run'})`;
      if (!/\bcurl\b/.test(command.text)) {
        faults.push(`${where}: an example block holds API calls only: ${command.text}`);
        continue;
      }
      if (!/\$\{?BASE\b/.test(command.text)) faults.push(`${where}: calls the API without $BASE`);
      const { text, unresolved } = resolve(command.text, state);
      if (unresolved.length) {
        faults.push(`${where}: ${unresolved.join('; ')}`);
        continue;
      }
      const expected = (again && command.again) || command.expected;
      const answer = await answerOf(text, state, expected);
      learn(state, answer.body);
      if (!answered(expected, answer)) {
        faults.push(
          `${where}: answered ${answer.status} (the page says ${said(expected)}): ${answer.raw.slice(0, 600)}${answer.stderr}\n    ${text.split('\n')[0]}`,
        );
        continue;
      }
      // The documented answer's fields, when this is the documented answer (not an `or`, not `again`).
      if (command.shape && !(again && command.again) && answered([command.expected[0]!], answer)) {
        const misses = shapeMisses(command.shape, answer.body);
        if (misses.length)
          faults.push(
            `${where}: the answer differs from the page's: ${misses.join(', ')}: ${answer.raw.slice(0, 600)}`,
          );
      }
    }
  }
  return faults;
}

async function assumeTemplates(page: string, apiKey: string): Promise<void> {
  for (const t of ASSUMED_TEMPLATES[page] ?? []) {
    const params = (t.text.match(/\{\{\d+\}\}/g) ?? []).map((_, i) => `example ${i + 1}`);
    const made = await processApi(reader.server, 'POST', '/templates', apiKey, {
      name: t.name,
      language: 'en_US',
      category: t.category ?? 'UTILITY',
      components: [
        { type: 'BODY', text: t.text, ...(params.length ? { example: { body_text: [params] } } : {}) },
        ...(t.buttons
          ? [{ type: 'BUTTONS', buttons: t.buttons.map((text) => ({ type: 'QUICK_REPLY', text })) }]
          : []),
      ],
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const submitted = await processApi(reader.server, 'POST', `/templates/${made.body.id}/submit`, apiKey);
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  }
  for (const t of ASSUMED_TEMPLATES[page] ?? []) {
    for (const deadline = Date.now() + 20_000; ; ) {
      const list = await processApi(reader.server, 'GET', `/templates?name=${t.name}`, apiKey);
      const status = list.body.data[0]?.status;
      if (status === 'APPROVED') break;
      if (status !== 'PENDING' || Date.now() > deadline)
        throw new Error(`${t.name}: ${JSON.stringify(list.body)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

// The pages at once, each on its own account: they spend most of their time waiting on the
// server (and on the sandbox's reviews), not on one another.
describe.concurrent('every request example of docs/*.md, run as written, twice', () => {
  for (const page of PAGES) {
    const blocks = examplesOf(page);
    if (blocks.length === 0) continue;
    it(`${page}: ${blocks.reduce((n, b) => n + b.commands.length, 0)} commands`, async () => {
      const account = await readerAccount(reader, page);
      await assumeTemplates(page, account.API_KEY);
      const dir = mkdtempSync(join(work, 'page-'));
      // The reader's own file, for the upload examples.
      writeFileSync(join(dir, 'brochure.pdf'), '%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
      const state: PageState = {
        vars: { BASE: reader.base, PARTNER_KEY: reader.partnerKey, ...account },
        ids: new Map([['acc', account.ACCOUNT]]),
        fields: new Map(),
        earlierFields: new Map(),
        dir,
      };
      const first = await runPage(blocks, state, false);
      expect(first, first.join('\n\n')).toEqual([]);
      const second = await runPage(blocks, state, true);
      expect(second, second.join('\n\n')).toEqual([]);
    }, 300_000); // a page takes 10–40 s; a machine running much else, several times that
  }
});

describe('request shapes in the prose', () => {
  // Not run (they name fields, on an id the text is about), but held to the API all the same: each
  // `METHOD /path {JSON}` of a page must be a body its operation takes.
  it('are bodies their operation takes', async () => {
    const doc = (await (await fetch(`${reader.base}/openapi.json`)).json()) as OpenApiDocument;
    const operations = operationsOf(doc);
    const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
    const problems: string[] = [];
    let checked = 0;
    for (const page of [...PAGES, ...HISTORY, 'README.md', 'CONTRIBUTING.md']) {
      for (const m of readFileSync(page, 'utf8').matchAll(/`(POST|PUT|PATCH) (\/[^`\s]*) (\{[^`]*\})`/g)) {
        let body: unknown;
        try {
          body = JSON.parse(
            m[3]!.replace(/"([a-z]{2,8})_…"/g, (_, prefix) => `"${prefix}_${'0'.repeat(26)}"`),
          );
        } catch {
          continue; // a shape with ellipses for values (`{"from": …}`), not JSON
        }
        const path = `/api/v1/public${m[2]}`;
        const op = operations.find(
          (o) => o.method === m[1] && new RegExp(`^${o.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
        );
        if (!op?.body) {
          problems.push(`${page}: ${m[0]} names no operation with a JSON body`);
          continue;
        }
        const validate = ajv.compile({ ...op.body, components: doc.components });
        if (!validate(body)) problems.push(`${page}: ${m[0]}: ${ajv.errorsText(validate.errors)}`);
        checked++;
      }
    }
    expect(problems, problems.join('\n')).toEqual([]);
    expect(checked).toBeGreaterThan(5);
  });
});

describe('the pages', () => {
  it('use only the README’s variables and their own, and skip nothing but what another item fixes', () => {
    for (const key of Object.keys(AWAITING_ISSUE_43_ITEMS)) {
      const page = key.split('#')[0]!;
      expect(
        examplesOf(page).some((b) => b.key === key),
        `${key} names no example block`,
      ).toBe(true);
    }
    expect(README_VARIABLES.every((v) => firstFiveMinutes().includes(`${v}=`))).toBe(true);
  });

  it('promise no later release: what the product does is in the pages, what it does not is not foretold', () => {
    for (const page of [
      ...PAGES.filter((p) => !p.endsWith('decisions.md')),
      'README.md',
      'CONTRIBUTING.md',
      'examples/README.md',
    ]) {
      const text = readFileSync(page, 'utf8');
      expect(text, page).not.toMatch(
        /later release|future release|coming soon|not yet (available|supported)/i,
      );
    }
  });
});
