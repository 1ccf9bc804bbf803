// What a refused body costs the server and what its answer lists, through HTTP. A body of many wrong
// values (10,000 non-objects where template components go: a 20 KB body, any key) once held the
// event loop for most of a minute, every tenant waiting, because the error formatter compared every
// error with every other. Refusing such a body takes about as long as refusing a small one, and its
// answer lists at most MAX_DETAILS faults with a count of the rest; a small body still has every
// fault listed at once.
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_DETAILS } from '../../src/kernel/http/errors.ts';
import { FULLY_CHECKED_VALUES } from '../../src/kernel/http/validator.ts';
import { call, type Reply, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

// A refusal may take this many times a small one's, and never needs to be faster than the floor:
// a loaded CI machine stretches a 3 ms answer to tens of ms now and then.
const SLOWER_AT_MOST = 20;
const FLOOR_MS = 250;

let key: string;
let templateId: string;

beforeAll(async () => {
  key = (await tenant(env.app, env.partner.partnerKey)).apiKey;
  const res = await call(env.app, 'POST', '/templates', {
    key,
    body: {
      name: 'bounds',
      language: 'en',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'Hi.' }],
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  templateId = res.body.id;
});

async function timed(send: () => Promise<Reply>): Promise<{ res: Reply; ms: number }> {
  const started = performance.now();
  const res = await send();
  return { res, ms: performance.now() - started };
}

/** The median time of a few sends (the first warms up what the route compiles lazily). */
async function medianMs(send: () => Promise<Reply>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) times.push((await timed(send)).ms);
  return times.sort((a, b) => a - b)[2]!;
}

const templateBody = (components: unknown[]) => ({
  name: 'many',
  language: 'en',
  category: 'UTILITY',
  components,
});

const routes = [
  { method: 'POST' as const, path: () => '/templates', body: templateBody },
  { method: 'PUT' as const, path: () => `/templates/${templateId}`, body: templateBody },
  {
    method: 'PATCH' as const,
    path: () => `/templates/${templateId}`,
    body: (c: unknown[]) => ({ components: c }),
  },
];

function expectBoundedAnswer(res: Reply): void {
  expectError(res, 400, 'INVALID_REQUEST');
  const { details, detailsOmitted, message } = res.body.error;
  expect(details.length).toBeGreaterThan(0);
  expect(details.length).toBeLessThanOrEqual(MAX_DETAILS);
  if (detailsOmitted !== undefined) expect(details.length).toBe(MAX_DETAILS);
  expect(message.length).toBeLessThan(100 * MAX_DETAILS);
}

describe('a body of many wrong values', () => {
  for (const route of routes) {
    it(`${route.method} /templates…: 2,500 and 10,000 non-objects in components are refused at once`, async () => {
      const small = await medianMs(() =>
        call(env.app, route.method, route.path(), { key, body: route.body([1, 1]) }),
      );
      const bound = Math.max(SLOWER_AT_MOST * small, FLOOR_MS);
      for (const count of [2_500, 10_000]) {
        const { res, ms } = await timed(() =>
          call(env.app, route.method, route.path(), { key, body: route.body(Array(count).fill(1)) }),
        );
        expect(
          ms,
          `${count} items took ${ms.toFixed(0)} ms; a small body ${small.toFixed(1)} ms`,
        ).toBeLessThan(bound);
        expectBoundedAnswer(res);
        expect(res.body.error.details[0]).toEqual({
          field: 'components',
          issue: 'must NOT have more than 10 items',
        });
      }
    }, 20_000);
  }

  it('lists the first MAX_DETAILS faults of a body checked whole, and counts the rest', async () => {
    const count = FULLY_CHECKED_VALUES - 10;
    const res = await call(env.app, 'POST', '/templates', { key, body: templateBody(Array(count).fill(1)) });
    expectBoundedAnswer(res);
    const { details, detailsOmitted, message } = res.body.error;
    expect(details).toHaveLength(MAX_DETAILS);
    expect(details[1]).toEqual({ field: 'components[0]', issue: 'must be object' });
    expect(details.at(-1)).toEqual({ field: `components[${MAX_DETAILS - 2}]`, issue: 'must be object' });
    // The size fault and one per item.
    expect(detailsOmitted).toBe(count + 1 - MAX_DETAILS);
    expect(message).toContain(`and ${detailsOmitted} more`);
  });

  it('lists only the first fault of a body too large to be checked whole', async () => {
    const res = await call(env.app, 'POST', '/templates', {
      key,
      body: templateBody(Array(FULLY_CHECKED_VALUES).fill(1)),
    });
    expectBoundedAnswer(res);
    expect(res.body.error.details).toEqual([
      { field: 'components', issue: 'must NOT have more than 10 items' },
    ]);
    expect(res.body.error.detailsOmitted).toBeUndefined();
  });

  it('still lists every fault of a small body at once', async () => {
    const res = await call(env.app, 'POST', '/templates', {
      key,
      body: {
        name: 'Bad Name',
        language: 'en',
        category: 'SPAM',
        components: [{ type: 'BODY' }, 7],
        extra: 1,
      },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'category', issue: expect.stringContaining('must be one of') },
        { field: 'components[0].text', issue: 'is required' },
        { field: 'components[1]', issue: 'must be object' },
        { field: 'extra', issue: 'is not a known field' },
      ]),
    );
    expect(res.body.error.detailsOmitted).toBeUndefined();
  });
});

// Lists the largest-body pass found too long to read item by item (test/security/fuzz-largest.test.ts).
describe('a list longer than its bound', () => {
  const rule = (conditions: unknown) => ({
    name: 'many conditions',
    trigger: { event: 'message.received' },
    conditions,
    actions: [{ type: 'add_tag', tag: 'seen' }],
  });
  const condition = { field: 'not.a.field', op: 'eq', value: 'x' };

  it("is refused for its length alone: a rule's 20,000 conditions", async () => {
    const res = await call(env.app, 'POST', '/rules', {
      key,
      body: rule({ all: Array(20_000).fill(condition) }),
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([
      { field: 'conditions.all', issue: 'must NOT have more than 20 items' },
    ]);
  });

  it('is counted before its items are read: 15 conditions in `all` and 15 in `any`', async () => {
    const res = await call(env.app, 'POST', '/rules', {
      key,
      body: rule({ all: Array(15).fill(condition), any: Array(15).fill(condition) }),
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([{ field: 'conditions', issue: 'holds at most 20 conditions' }]);
  });
});
