// A voice provider's status callback about a call, signed as the sandbox signs them, for tests that
// say themselves what the provider reports (the sandbox's own simulation stopped or not yet there).
import { expect } from 'vitest';
import type { App } from '../../src/app.ts';
import { sandboxVoiceToken } from '../../src/channels/sandbox/voice.ts';
import { signTwilioRequest } from '../../src/channels/twilio-voice/callbacks.ts';
import type { Sql } from '../../src/kernel/database/db.ts';
import { callUrls } from '../../src/modules/voice-channel/urls.ts';

/** Posts a status callback for the call (its provider's CallSid, once it has one); asserts the 200. */
export async function postCallStatus(
  app: App,
  db: Sql,
  accountId: string,
  callId: string,
  params: Record<string, string>,
): Promise<void> {
  const { config } = app.ctx;
  const url = callUrls(config.publicBaseUrl, accountId, callId).status;
  const { rows } = await db.query<{ sid: string | null }>(
    'SELECT provider_call_id AS sid FROM calls WHERE id = $1',
    [callId],
  );
  const signed = { CallSid: rows[0]?.sid ?? `CAtest${callId}`, ...params };
  const res = await app.inject({
    method: 'POST',
    url: url.slice(config.publicBaseUrl.length),
    payload: new URLSearchParams(signed).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signTwilioRequest(sandboxVoiceToken(config.secretsKey, accountId), url, signed),
    },
  });
  expect(res.statusCode, res.body).toBe(200);
}
