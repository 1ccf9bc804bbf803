// One meaning of `sandbox` on every resource that has it (issue 43, item 14): made with a sandbox
// key (or by automation that a sandbox key or a sandbox event started), so simulated whatever the
// account's channel and never charged. Which provider carried it is the resource's `channel` or
// `provider`. A live key on the sandbox channel is simulated too (`channel`/`provider: sandbox`),
// but is `sandbox: false`: the same send would go out on a real channel. Messages, calls, message
// campaigns and voice campaigns each made with both keys, on the same account, say the same.
import { describe, expect, it } from 'vitest';
import { call, createAccountKey } from '../helpers/client.ts';
import { approvedTemplate, sandboxTenant } from '../helpers/messaging.ts';
import { useTestApp } from '../helpers/setup.ts';

const env = useTestApp({ workers: true, config: { voiceSandboxStepMs: 20, voicePollMs: 20 } });

async function made(key: string, method: 'POST', path: string, body: object, status: number) {
  const res = await call(env.app, method, path, { key, body });
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

describe('sandbox on messages, calls and campaigns', () => {
  it('says whether a sandbox key made it, the same for each, on the sandbox channel', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey, undefined, { planCode: 'business' });
    const sandbox = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, {
      scope: 'sandbox',
    });
    await approvedTemplate(env.app, t.apiKey, { name: 'notice', category: 'UTILITY' });
    const script = await made(
      t.apiKey,
      'POST',
      '/voice/scripts',
      { name: 'Hi', type: 'tts', tts: { text: 'Hello' } },
      201,
    );
    await made(t.apiKey, 'POST', `/voice/scripts/${script.id}/publish`, {}, 200);
    await made(t.apiKey, 'POST', '/contacts', { phone: '+14155550161', tags: ['flag'] }, 201);

    for (const [key, isSandbox] of [
      [t.apiKey, false],
      [sandbox.apiKey, true],
    ] as const) {
      const message = await made(
        key,
        'POST',
        '/messages',
        {
          to: '+14155550161',
          templateName: 'notice',
          templateLanguage: 'en_US',
          parameters: ['Ann', 'Monday'],
        },
        202,
      );
      expect(message).toMatchObject({ channel: 'sandbox', sandbox: isSandbox });
      const placed = await made(
        key,
        'POST',
        '/voice/calls',
        { to: '+15005550002', scriptId: script.id },
        202,
      );
      expect(placed).toMatchObject({ provider: 'sandbox', sandbox: isSandbox });
      const read = await call(env.app, 'GET', `/voice/calls/${placed.id}`, { key: t.apiKey });
      expect(read.body).toMatchObject({ provider: 'sandbox', sandbox: isSandbox });

      const campaign = await made(
        key,
        'POST',
        '/campaigns',
        {
          name: 'flag',
          message: { templateName: 'notice', templateLanguage: 'en_US', parameters: ['Ann', 'Monday'] },
          audience: { tag: 'flag' },
        },
        201,
      );
      expect(await made(key, 'POST', `/campaigns/${campaign.id}/start`, {}, 200)).toMatchObject({
        sandbox: isSandbox,
      });
      const voice = await made(
        key,
        'POST',
        '/voice/campaigns',
        { name: 'flag', scriptId: script.id, audience: { tag: 'flag' } },
        201,
      );
      expect(await made(key, 'POST', `/voice/campaigns/${voice.id}/start`, {}, 200)).toMatchObject({
        sandbox: isSandbox,
      });
    }
  });
});
