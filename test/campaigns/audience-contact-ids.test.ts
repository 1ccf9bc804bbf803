// A campaign's `audience.contactIds` (broadcast and voice), checked when saved: ids that are not the
// account's contacts, unknown or another tenant's, are refused with 400 naming the field and the ids
// (docs/messaging.md § Campaigns), while the account has contacts of its own (with none, a check whose
// SQL compared a column with itself still fired). And the class: every `unnest` in src names its
// columns, so that no bare alias can be shadowed by a column of a table in the same query.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, tenant } from '../helpers/client.ts';
import { approvedTemplate, INSTANT_SANDBOX, sandboxTenant } from '../helpers/messaging.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp({ workers: true });

async function contact(key: string, phone: string): Promise<string> {
  const res = await call(env.app, 'POST', '/contacts', { key, body: { phone } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

const UNKNOWN = 'ctc_01jv0000000000000000000000';

/** The answer refuses exactly `audience.contactIds`, naming the `refused` ids and not the `kept` one. */
function refusesIds(res: Parameters<typeof expectError>[0], refused: string[], kept: string): void {
  expectError(res, 400, 'INVALID_REQUEST');
  const details = res.body.error.details as { field: string; issue: string }[];
  expect(details.map((d) => d.field)).toEqual(['audience.contactIds']);
  for (const id of refused) expect(details[0]!.issue).toContain(id);
  expect(details[0]!.issue).not.toContain(kept);
}

describe('audience.contactIds', () => {
  it('a broadcast campaign refuses unknown ids and another tenant’s, made or changed', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey, INSTANT_SANDBOX);
    const other = await tenant(env.app, env.partner.partnerKey);
    await approvedTemplate(env.app, t.apiKey, { name: 'news', examples: ['Ann', 'Monday'] });
    const own = await contact(t.apiKey, '+14155550101');
    const theirs = await contact(other.apiKey, '+14155550102');
    const body = (contactIds: string[]) => ({
      name: 'News',
      message: { templateName: 'news', templateLanguage: 'en_US', parameters: ['Ann', 'Monday'] },
      audience: { contactIds },
    });
    const post = (ids: string[]) => call(env.app, 'POST', '/campaigns', { key: t.apiKey, body: body(ids) });
    refusesIds(await post([own, UNKNOWN, theirs]), [UNKNOWN, theirs], own);
    refusesIds(await post([theirs]), [theirs], own);
    const made = await post([own]);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const path = `/campaigns/${made.body.id}`;
    refusesIds(
      await call(env.app, 'PATCH', path, {
        key: t.apiKey,
        body: { audience: { contactIds: [own, theirs] } },
      }),
      [theirs],
      own,
    );
    refusesIds(await call(env.app, 'PUT', path, { key: t.apiKey, body: body([UNKNOWN]) }), [UNKNOWN], own);
    const kept = await call(env.app, 'GET', path, { key: t.apiKey });
    expect(kept.body.audience).toEqual({ contactIds: [own] });
  });

  it('a voice campaign refuses them too, made or changed', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const other = await tenant(env.app, env.partner.partnerKey);
    const script = await call(env.app, 'POST', '/voice/scripts', {
      key: t.apiKey,
      body: { name: 'Hi', type: 'tts', tts: { text: 'Hello' } },
    });
    expect(
      (await call(env.app, 'POST', `/voice/scripts/${script.body.id}/publish`, { key: t.apiKey })).status,
    ).toBe(200);
    const own = await contact(t.apiKey, '+14155550103');
    const theirs = await contact(other.apiKey, '+14155550104');
    const post = (contactIds: string[]) =>
      call(env.app, 'POST', '/voice/campaigns', {
        key: t.apiKey,
        body: { name: 'Calls', scriptId: script.body.id, audience: { contactIds } },
      });
    refusesIds(await post([UNKNOWN, own, theirs]), [UNKNOWN, theirs], own);
    const made = await post([own]);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    refusesIds(
      await call(env.app, 'PATCH', `/voice/campaigns/${made.body.id}`, {
        key: t.apiKey,
        body: { audience: { contactIds: [theirs, own] } },
      }),
      [theirs],
      own,
    );
  });
});

describe('unnest in the SQL of src', () => {
  it('always names its columns (AS alias (column, …)), never a bare alias', () => {
    const files = readdirSync('src', { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const bare: string[] = [];
    for (const file of files) {
      const text = readFileSync(join('src', file), 'utf8');
      for (const m of text.matchAll(
        /unnest\(([^()]|\([^()]*\))*\)(\s+WITH ORDINALITY)?\s+AS\s+\w+(?!\s*\()/gi,
      ))
        bare.push(`${file}: ${m[0]}`);
    }
    expect(bare).toEqual([]);
  });
});
