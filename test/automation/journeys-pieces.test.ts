// The pure pieces of journeys: the graph checks publishing runs (graph.ts) and the runner's
// decisions (decide.ts): a split's branch, a wait's end, whether a message is the awaited reply,
// and the run limits.
import { describe, expect, it } from 'vitest';
import { scopeOf } from '../../src/modules/automation/context.ts';
import { limitBroken, replyMatches, splitEdge, waitEnd } from '../../src/modules/journeys/decide.ts';
import { type Definition, graphProblems, type JourneyNode } from '../../src/modules/journeys/graph.ts';

const node = (id: string, type: JourneyNode['type'], config: Record<string, unknown> = {}): JourneyNode => ({
  id,
  type,
  config,
});

const definition = (
  nodes: JourneyNode[],
  edges: [string, string, string?][],
  start = nodes[0]!.id,
): Definition => ({
  entry: { trigger: 'api', reentry: 'never', start },
  nodes,
  edges: edges.map(([from, to, when]) => ({ from, to, when: when ?? 'next' })),
  settings: { maxRunDuration: 'P30D' },
});

const now = new Date('2026-11-25T12:00:00Z');
const scope = (attributes: Record<string, unknown> = {}, vars: Record<string, unknown> = {}) => {
  const base = scopeOf(
    {
      id: 'ctc_1',
      account_id: 'acc_1',
      phone: '+14155550100',
      name: null,
      email: null,
      tags: [],
      attributes,
      opted_in: true,
      created_at: now,
      updated_at: now,
      last_inbound_at: null,
    } as never,
    null,
    { id: 'jrn_1', type: 'journey.triggered', data: { at: '2026-11-30T09:00:00Z' } },
    now,
  );
  return { ...base, run: { vars }, trigger: { data: { at: '2026-11-30T09:00:00Z' } } };
};

describe('journey graph checks', () => {
  it('accepts a graph whose cycles all hold a wait, and finds each cycle without one', () => {
    const send = (id: string) => node(id, 'send_message', { message: { type: 'text', text: id } });
    expect(
      graphProblems(
        definition(
          [send('a'), node('w', 'wait', { duration: 'P1D' })],
          [
            ['a', 'w'],
            ['w', 'a'],
          ],
        ),
      ),
    ).toEqual([]);
    const twoLoops = definition(
      [send('a'), send('b'), send('c'), send('d'), node('w', 'wait', { duration: 'PT1H' })],
      [
        ['a', 'b'],
        ['b', 'a', 'failed'],
        ['c', 'c'],
        ['w', 'c'],
        ['c', 'w', 'failed'],
        ['d', 'd'],
      ],
      'a',
    );
    const cycles = graphProblems(twoLoops).filter((p) => p.issue.includes('cycle'));
    expect(cycles.map((p) => p.issue).sort()).toEqual([
      'a → b → a is a cycle without a wait or wait_for_reply node',
      'c → c is a cycle without a wait or wait_for_reply node',
      'd → d is a cycle without a wait or wait_for_reply node',
    ]);
  });

  it('knows each node’s edges: switch cases, split keys, late only for waits until a time', () => {
    const d = definition(
      [
        node('s', 'switch', { field: 'contact.name', cases: [{ key: 'ann', value: 'Ann' }] }),
        node('p', 'split', { weights: { a: 1, b: 1 } }),
        node('w', 'wait', { duration: 'P1D' }),
        node('u', 'wait', { until: 'contact.attributes.at' }),
        node('e', 'end'),
      ],
      [
        ['s', 'p', 'case:ann'],
        ['s', 'w', 'default'],
        ['p', 'u', 'split:a'],
        ['p', 'e', 'split:b'],
        ['w', 'e', 'late'],
        ['u', 'e', 'late'],
        ['u', 'e'],
      ],
    );
    expect(graphProblems(d)).toEqual([
      { field: 'edges[4].when', issue: '"late" is not an edge of a wait node: it has next' },
    ]);
  });
});

describe('journey decisions', () => {
  it('draws a split branch from the run and node, the same every time, in proportion to the weights', () => {
    const split = node('ab', 'split', { weights: { a: 3, b: 1 } });
    expect(splitEdge(split, 'jrn_x').edge).toBe(splitEdge(split, 'jrn_x').edge);
    let a = 0;
    for (let i = 0; i < 10_000; i++) if (splitEdge(split, `jrn_${i}`).edge === 'split:a') a++;
    expect(a / 10_000).toBeGreaterThan(0.72);
    expect(a / 10_000).toBeLessThan(0.78);
  });

  it('ends a wait after its duration, or at the time the run holds with its offset', () => {
    expect(waitEnd(node('w', 'wait', { duration: 'PT90M' }), scope(), now)).toEqual(
      new Date('2026-11-25T13:30:00Z'),
    );
    const at = (until: string, offset?: string, s = scope()) =>
      waitEnd(node('w', 'wait', { until, ...(offset ? { offset } : {}) }), s, now);
    expect(at('contact.attributes.visit', '-P1D', scope({ visit: '2026-12-01T10:00:00Z' }))).toEqual(
      new Date('2026-11-30T10:00:00Z'),
    );
    expect(at('trigger.data.at', 'PT1H')).toEqual(new Date('2026-11-30T10:00:00Z'));
    expect(
      at(
        'run.vars.hook.body.when',
        undefined,
        scope({}, { hook: { body: { when: '2026-12-24T00:00:00Z' } } }),
      ),
    ).toEqual(new Date('2026-12-24T00:00:00Z'));
    expect(at('2027-01-01T00:00:00Z')).toEqual(new Date('2027-01-01T00:00:00Z'));
    expect(at('contact.attributes.visit', undefined, scope({ visit: 'soon' }))).toEqual({
      error: 'contact.attributes.visit holds no date-time ("soon").',
    });
    expect(at('contact.attributes.missing')).toEqual({
      error: 'contact.attributes.missing holds no date-time (nothing).',
    });
  });

  it('takes any message as a reply, or only the buttons or keywords given', () => {
    const reply = (text: string | null, buttonId: string | null = null) => ({
      messageId: 'msg_1',
      text,
      buttonId,
    });
    expect(replyMatches(node('r', 'wait_for_reply', { timeout: 'P1D' }), reply('anything'))).toBe(true);
    const buttons = node('r', 'wait_for_reply', {
      timeout: 'P1D',
      match: { buttons: ['Confirm', 'Cancel'] },
    });
    expect(replyMatches(buttons, reply('Confirm', 'Confirm'))).toBe(true);
    expect(replyMatches(buttons, reply('confirm'))).toBe(false);
    const words = node('r', 'wait_for_reply', {
      timeout: 'P1D',
      match: { buttons: ['Yes'], keywords: { keywords: ['yes', 'ok'], mode: 'contains' } },
    });
    expect(replyMatches(words, reply('Ok, see you then'))).toBe(true);
    expect(replyMatches(words, reply('no thanks'))).toBe(false);
    expect(replyMatches(words, reply(null, 'Yes'))).toBe(true);
  });

  it('stops a run at 500 steps, and on the 11th entry of one node in a row', () => {
    expect(limitBroken({ step_count: 499, last_node_id: 'a', repeat_count: 1 }, 'b')).toBeNull();
    expect(limitBroken({ step_count: 500, last_node_id: 'a', repeat_count: 1 }, 'b')).toMatchObject({
      code: 'STEP_LIMIT',
    });
    expect(limitBroken({ step_count: 20, last_node_id: 'a', repeat_count: 9 }, 'a')).toBeNull();
    expect(limitBroken({ step_count: 20, last_node_id: 'a', repeat_count: 10 }, 'a')).toMatchObject({
      code: 'NODE_REPEAT_LIMIT',
    });
    expect(limitBroken({ step_count: 20, last_node_id: 'a', repeat_count: 10 }, 'b')).toBeNull();
  });
});
