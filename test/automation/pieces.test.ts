// The pure pieces of automation: conditions (what is refused when saved, and the trace a run
// records), keyword matching, Liquid templating, durations, zones and send windows.
import { describe, expect, it } from 'vitest';
import {
  type Conditions,
  type Context,
  conditionProblems,
  evaluate,
} from '../../src/modules/automation/conditions.ts';
import { conditionContext, scopeOf } from '../../src/modules/automation/context.ts';
import { matchesKeyword, normalise } from '../../src/modules/automation/keywords.ts';
import { render, TemplateError, templateProblem } from '../../src/modules/automation/templating.ts';
import {
  contactZone,
  countryZone,
  durationProblem,
  localTime,
  nextOpening,
  type SendWindow,
  sendWindowProblems,
  signedDurationMs,
} from '../../src/modules/automation/time.ts';
import type { ContactRow } from '../../src/modules/contacts/repo.ts';

function context(values: Record<string, unknown>, previous: Record<string, unknown> = {}): Context {
  return {
    values: (field) => values[field],
    previous: (field) => (field in previous ? { known: true, value: previous[field] } : { known: false }),
  };
}

describe('conditions', () => {
  it('refuses a field or op that does not fit, naming each fault', () => {
    const problems = conditionProblems(
      {
        all: [
          { field: 'contact.nickname', op: 'eq', value: 'x' },
          { field: 'contact.tags', op: 'starts_with', value: 'vip' },
          { field: 'contact.optedIn', op: 'eq', value: 'yes' },
          { field: 'time.localHour', op: 'gt', value: '9' },
          { field: 'message.text', op: 'in', value: [] },
          { field: 'message.text', op: 'exists', value: 'x' },
          { field: 'message.text', op: 'matches_keyword', value: { keywords: ['stop'], mode: 'loose' } },
          {
            field: 'contact.attributes.plan',
            op: 'matches_keyword',
            value: { keywords: ['a'], mode: 'exact' },
          },
        ],
        none: [],
      },
      'conditions',
    );
    expect(problems.map((p) => p.field)).toEqual([
      'conditions.none',
      'conditions.all[0].field',
      'conditions.all[1].op',
      'conditions.all[2].value',
      'conditions.all[3].value',
      'conditions.all[4].value',
      'conditions.all[5].value',
      'conditions.all[6].value',
      'conditions.all[7].op',
    ]);
    expect(problems[2]!.issue).toContain('starts_with does not apply to contact.tags (list)');
    expect(
      conditionProblems(
        {
          all: [
            { field: 'contact.attributes.plan', op: 'eq', value: 'gold' },
            { field: 'event.data.tagsAdded', op: 'contains', value: 'vip' },
            {
              field: 'message.text',
              op: 'matches_keyword',
              value: { keywords: ['stop', 'unsubscribe'], mode: 'fuzzy', threshold: 0.75 },
            },
          ],
          any: [{ field: 'time.weekday', op: 'in', value: [6, 7] }],
        },
        'conditions',
      ),
    ).toEqual([]);
  });

  it('holds when every `all` and one `any` hold, with the trace of each condition', () => {
    const conditions: Conditions = {
      all: [
        { field: 'contact.tags', op: 'contains', value: 'VIP' },
        { field: 'contact.attributes.plan', op: 'in', value: ['gold', 'silver'] },
      ],
      any: [
        { field: 'message.text', op: 'starts_with', value: 'order' },
        { field: 'time.localHour', op: 'gte', value: 18 },
      ],
    };
    const values = {
      'contact.tags': ['vip'],
      'contact.attributes.plan': 'gold',
      'message.text': 'hi',
      'time.localHour': 19,
    };
    const yes = evaluate(conditions, context(values));
    expect(yes.matched).toBe(true);
    expect(yes.trace).toEqual([
      { field: 'contact.tags', op: 'contains', expected: 'VIP', actual: ['vip'], result: true },
      {
        field: 'contact.attributes.plan',
        op: 'in',
        expected: ['gold', 'silver'],
        actual: 'gold',
        result: true,
      },
      { field: 'message.text', op: 'starts_with', expected: 'order', actual: 'hi', result: false },
      { field: 'time.localHour', op: 'gte', expected: 18, actual: 19, result: true },
    ]);
    expect(evaluate(conditions, context({ ...values, 'time.localHour': 9 })).matched).toBe(false);
    expect(evaluate(conditions, context({ ...values, 'contact.attributes.plan': 'bronze' })).matched).toBe(
      false,
    );
    expect(evaluate({}, context({})).matched).toBe(true);
  });

  it('changed, changed_to and changed_from read the previous value the event carries', () => {
    const to = { all: [{ field: 'conversation.status', op: 'changed_to' as const, value: 'closed' }] };
    expect(
      evaluate(to, context({ 'conversation.status': 'closed' }, { 'conversation.status': 'open' })).matched,
    ).toBe(true);
    // Not changed by this event (no previous value), or changed to something else.
    expect(evaluate(to, context({ 'conversation.status': 'closed' })).matched).toBe(false);
    expect(
      evaluate(to, context({ 'conversation.status': 'open' }, { 'conversation.status': 'closed' })).matched,
    ).toBe(false);
    const from = { all: [{ field: 'contact.optedIn', op: 'changed_from' as const, value: true }] };
    expect(evaluate(from, context({ 'contact.optedIn': false }, { 'contact.optedIn': true })).matched).toBe(
      true,
    );
    expect(evaluate(from, context({ 'contact.optedIn': false }, { 'contact.optedIn': false })).matched).toBe(
      false,
    );
    const changed = { all: [{ field: 'contact.tags', op: 'changed' as const }] };
    expect(
      evaluate(changed, context({ 'contact.tags': ['a', 'b'] }, { 'contact.tags': ['a'] })).matched,
    ).toBe(true);
  });
});

describe('contact.marketingOptOut', () => {
  const at = new Date('2026-11-25T12:00:00Z');
  const row = (marketingOptOut: boolean): ContactRow => ({
    id: 'ctc_1',
    account_id: 'acc_1',
    phone: '+14155550100',
    name: 'Ann',
    email: null,
    tags: [],
    attributes: {},
    opted_in: true,
    marketing_opt_out: marketingOptOut,
    created_at: at,
    updated_at: at,
    last_inbound_at: null,
    wa_id: null,
    whatsapp_user_id: null,
    whatsapp_parent_user_id: null,
    whatsapp_username: null,
  });
  const optedOut = { all: [{ field: 'contact.marketingOptOut', op: 'eq' as const, value: true }] };

  it('is a boolean field: eq true is accepted, text and list ops are refused', () => {
    expect(conditionProblems(optedOut, 'conditions')).toEqual([]);
    const problems = conditionProblems(
      {
        all: [
          { field: 'contact.marketingOptOut', op: 'eq', value: 'yes' },
          { field: 'contact.marketingOptOut', op: 'contains', value: true },
          { field: 'contact.marketingOptout', op: 'eq', value: true },
        ],
      },
      'conditions',
    );
    expect(problems.map((p) => p.field)).toEqual([
      'conditions.all[0].value',
      'conditions.all[1].op',
      'conditions.all[2].field',
    ]);
    expect(problems[2]!.issue).toContain('optedIn|marketingOptOut|attributes');
  });

  it("eq true holds for a contact who stopped marketing, read from the contact's row", () => {
    const event = { id: 'evt_1', type: 'message.received', data: {} };
    const yes = evaluate(optedOut, conditionContext(scopeOf(row(true), null, event, at)));
    expect(yes).toEqual({
      matched: true,
      trace: [{ field: 'contact.marketingOptOut', op: 'eq', expected: true, actual: true, result: true }],
    });
    expect(evaluate(optedOut, conditionContext(scopeOf(row(false), null, event, at))).matched).toBe(false);
    // Not opted in to messages is something else: a contact opted in may still refuse marketing.
    const optedIn = { all: [{ field: 'contact.optedIn', op: 'eq' as const, value: true }] };
    expect(evaluate(optedIn, conditionContext(scopeOf(row(true), null, event, at))).matched).toBe(true);
  });

  it('changed_to true reads the previous value of contact.updated', () => {
    const changedTo = {
      all: [{ field: 'contact.marketingOptOut', op: 'changed_to' as const, value: true }],
    };
    const updated = (previous: Record<string, unknown>) => ({
      id: 'evt_2',
      type: 'contact.updated',
      data: { previous },
    });
    const scope = (previous: Record<string, unknown>) =>
      conditionContext(scopeOf(row(true), null, updated(previous), at));
    expect(evaluate(changedTo, scope({ marketingOptOut: false })).matched).toBe(true);
    // Another field changed: marketingOptOut did not.
    expect(evaluate(changedTo, scope({ name: 'Old' })).matched).toBe(false);
  });
});

describe('keywords', () => {
  it('normalises case, accents and punctuation', () => {
    expect(normalise('  STÓP!! ')).toBe('stop');
    expect(normalise('Opt-out, please')).toBe('opt out please');
  });

  it('exact, contains (whole words) and fuzzy (edit distance)', () => {
    const exact = { keywords: ['stop', 'opt out'], mode: 'exact' as const };
    expect(matchesKeyword('Stop.', exact)).toBe(true);
    expect(matchesKeyword('OPT-OUT', exact)).toBe(true);
    expect(matchesKeyword('please stop', exact)).toBe(false);
    const contains = { keywords: ['stop'], mode: 'contains' as const };
    expect(matchesKeyword('please STOP sending', contains)).toBe(true);
    expect(matchesKeyword('nonstop deals', contains)).toBe(false);
    const fuzzy = { keywords: ['stop', 'unsubscribe'], mode: 'fuzzy' as const };
    expect(matchesKeyword('STOPP', fuzzy)).toBe(true);
    expect(matchesKeyword('pls unsubscibe me', fuzzy)).toBe(true);
    expect(matchesKeyword('shop', fuzzy)).toBe(false);
    expect(matchesKeyword('shop', { ...fuzzy, threshold: 0.7 })).toBe(true);
  });
});

describe('templating', () => {
  it('renders the scope and fails, with the reason, on what is unknown', async () => {
    const scope = { contact: { name: 'Ann', attributes: { plan: 'gold' } }, event: { data: { total: 12 } } };
    expect(
      await render(
        'Hi {{ contact.name }}, your {{ contact.attributes.plan }} plan: {{ event.data.total }}',
        scope,
      ),
    ).toBe('Hi Ann, your gold plan: 12');
    await expect(render('Hi {{ contact.nickname }}', scope)).rejects.toThrow(TemplateError);
    await expect(render('Hi {{ contact.nickname }}', scope)).rejects.toThrow(
      'undefined variable: contact.nickname',
    );
    await expect(render('{{ contact.name | shout }}', scope)).rejects.toThrow('undefined filter: shout');
    await expect(render('{% include "/etc/hostname" %}', scope)).rejects.toThrow(TemplateError);
    await expect(render('{% for i in (1..100000000) %}x{% endfor %}', scope)).rejects.toThrow(TemplateError);
    expect(templateProblem('Hi {{ contact.name ')).toContain('not a valid Liquid template');
    expect(templateProblem('Plain text, no Liquid')).toBeNull();
  });
});

describe('time', () => {
  it('reads ISO-8601 durations, refusing months and years', () => {
    expect(durationProblem('P3D')).toBeNull();
    expect(durationProblem('PT2H30M')).toBeNull();
    expect(durationProblem('P1M')).toContain('no fixed length');
    expect(durationProblem('3 days')).toContain('not an ISO-8601 duration');
    expect(durationProblem('PT0S')).toContain('longer than zero');
    expect(durationProblem('P400D')).toContain('at most');
    expect(signedDurationMs('-P1D')).toBe(-86_400_000);
    expect(signedDurationMs('PT1H')).toBe(3_600_000);
  });

  it("finds a contact's zone: its attribute, its number's country, else the fallback", () => {
    expect(countryZone('US')).toBe('America/New_York');
    expect(countryZone('DE')).toBe('Europe/Berlin');
    expect(countryZone('IN')).toBe('Asia/Kolkata');
    expect(contactZone({ attributes: { timezone: 'America/Los_Angeles' }, country: 'US' }, 'UTC')).toBe(
      'America/Los_Angeles',
    );
    expect(contactZone({ attributes: { timezone: 'Mars/Olympus' }, country: 'BR' }, 'UTC')).toBe(
      'America/Sao_Paulo',
    );
    expect(contactZone({ attributes: {}, country: null }, 'Europe/Paris')).toBe('Europe/Paris');
    expect(localTime(new Date('2026-11-27T23:30:00Z'), 'Asia/Tokyo')).toEqual({ localHour: 8, weekday: 6 });
  });

  it("a send window defers across a weekend in the contact's zone", () => {
    const window: SendWindow = {
      timezone: 'contact',
      days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      from: '09:00',
      until: '17:00',
    };
    const zone = contactZone({ attributes: {}, country: 'JP' }, 'UTC');
    expect(zone).toBe('Asia/Tokyo');
    // Friday 18:00 in Tokyo (09:00 UTC): the next opening is Monday 09:00 in Tokyo (00:00 UTC).
    expect(nextOpening(new Date('2026-11-27T09:00:00Z'), window, zone).toISOString()).toBe(
      '2026-11-30T00:00:00.000Z',
    );
    // Inside: the time itself.
    expect(nextOpening(new Date('2026-11-26T02:00:00Z'), window, zone).toISOString()).toBe(
      '2026-11-26T02:00:00.000Z',
    );
    // Before the opening on a weekday: that day's opening.
    expect(nextOpening(new Date('2026-11-25T22:00:00Z'), window, zone).toISOString()).toBe(
      '2026-11-26T00:00:00.000Z',
    );
    // Across a change of clocks: New York's Monday 09:00 after the November change is 14:00 UTC.
    expect(
      nextOpening(
        new Date('2026-10-31T20:00:00Z'),
        { ...window, timezone: 'America/New_York' },
        'America/New_York',
      ).toISOString(),
    ).toBe('2026-11-02T14:00:00.000Z');
  });

  it('refuses a window it cannot read', () => {
    expect(
      sendWindowProblems(
        { timezone: 'Nowhere/City', days: ['mon', 'funday'], from: '9:00', until: '08:00', hours: 1 },
        'sendWindow',
      ).map((p) => p.field),
    ).toEqual(['sendWindow.hours', 'sendWindow.timezone', 'sendWindow.days', 'sendWindow.from']);
    expect(
      sendWindowProblems({ timezone: 'UTC', days: ['sat'], from: '10:00', until: '09:00' }, 'w'),
    ).toEqual([{ field: 'w.until', issue: 'must be later in the day than from' }]);
  });
});
