// A voice provider's requests about a call (docs/voice.md § Callbacks): Twilio's, or the sandbox
// simulator's in Twilio's shape. Each is checked before anything is read from it: X-Twilio-Signature
// over the public URL and the form (the call's provider's token: the account's Twilio auth token, or
// its sandbox token); a request that fails is refused (401) and changes nothing. Then, in one
// transaction with the call locked:
//   - a status callback moves the call through the status machine; a repeated (CallSid,
//     SequenceNumber) is recorded once and ignored; one that would move the call back is ignored;
//   - a TwiML request (answer, gather, node) is answered by the IVR (ivr.ts); the answer request
//     also says the call is in progress and who answered, whatever order the callbacks come in.
import twilio from 'twilio';
import type { Channels } from '../../channels/registry.ts';
import type { FormParams, VoiceChannel, VoiceProvider } from '../../channels/voice.ts';
import type { Database } from '../../kernel/database/db.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { loadVoiceChannel } from '../voice-channel/index.ts';
import { type IvrServices, type TwimlRequest, twimlFor } from './ivr.ts';
import { type CallRow, callForCallback, firstHeard } from './repo.ts';
import { applyCallUpdate } from './status.ts';
import { ENDED, fromTwilio } from './transition.ts';

export interface CallbackServices extends IvrServices {
  db: Database;
  events: EventOutbox;
  channels: Channels;
  prices: { currency: string };
}

export interface VoiceCallback {
  accountId: string;
  /** The URL as the provider requested it (PUBLIC_BASE_URL + path + query): the signature covers it. */
  url: string;
  signature: string | undefined;
  params: FormParams;
  /** Our call id, from the URL. */
  callId: string | null;
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** The tokens that may have signed a request about this call (none known: every one the account has). */
function tokensFor(
  s: CallbackServices,
  channel: VoiceChannel,
  accountId: string,
  call: CallRow | null,
): string[] {
  const providers: VoiceProvider[] = call
    ? [call.provider]
    : ['sandbox', ...(channel.provider === 'twilio' ? (['twilio'] as const) : [])];
  const tokens: string[] = [];
  for (const provider of providers) {
    try {
      tokens.push(s.channels.voiceToken(provider, channel, accountId));
    } catch {
      // A Twilio call of an account that left Twilio since: nothing can check its callbacks.
    }
  }
  return tokens;
}

async function verified(
  s: CallbackServices,
  tx: Parameters<Parameters<Database['transaction']>[0]>[0],
  cb: VoiceCallback,
) {
  const call = await callForCallback(tx, cb.accountId, {
    callId: cb.callId,
    providerCallId: one(cb.params.CallSid) ?? null,
  });
  const channel = await loadVoiceChannel(tx, cb.accountId);
  const ok = tokensFor(s, channel, cb.accountId, call).some((token) =>
    s.channels.voiceCallbacks.verify(token, cb.signature, cb.url, cb.params),
  );
  if (!ok) {
    throw new ApiError(
      'INVALID_SIGNATURE',
      'The request is not signed by the call’s voice provider (X-Twilio-Signature).',
    );
  }
  // A request naming another call than the one its URL names is not about this call.
  const sid = one(cb.params.CallSid);
  if (call && sid && call.provider_call_id && call.provider_call_id !== sid) return null;
  return call;
}

/** A status callback: answers whether it changed the call (a repeat or a step back does not). */
export async function receiveStatus(s: CallbackServices, cb: VoiceCallback): Promise<{ applied: boolean }> {
  return s.db.transaction(async (tx) => {
    const call = await verified(s, tx, cb);
    const report = s.channels.voiceCallbacks.parseStatus(cb.params, s.now());
    if (!call || !report) return { applied: false };
    const key = `${report.callSid}:${report.sequenceNumber ?? report.status}`;
    if (!(await firstHeard(tx, call, 'status', key, cb.params, s.now()))) return { applied: false };
    const status = fromTwilio(report.status);
    const { moved, call: after } = await applyCallUpdate(tx, s, call, {
      status,
      at: report.at,
      ...(report.durationSeconds !== null ? { durationSeconds: report.durationSeconds } : {}),
      answeredBy: report.answeredBy,
      providerCallId: report.callSid,
      ...(status === 'failed'
        ? {
            error: {
              code: 'CALL_FAILED',
              message: 'The provider could not connect the call.',
              providerCode:
                report.errorCode ?? (report.sipResponseCode ? `SIP ${report.sipResponseCode}` : null),
            },
          }
        : {}),
    });
    return { applied: moved || after !== call };
  });
}

/** A request for TwiML (answer, gather, node): the document to play. */
export async function answerTwiml(
  s: CallbackServices,
  cb: VoiceCallback,
  request: TwimlRequest,
): Promise<string> {
  return s.db.transaction(async (tx) => {
    let call = await verified(s, tx, cb);
    if (!call) {
      const response = new twilio.twiml.VoiceResponse();
      response.hangup();
      return response.toString();
    }
    if (request.kind === 'answer' && !ENDED.includes(call.status)) {
      const answeredBy = s.channels.voiceCallbacks.answeredBy(cb.params);
      call = (
        await applyCallUpdate(tx, s, call, {
          status: 'in_progress',
          at: s.now(),
          answeredBy,
          ...(one(cb.params.CallSid) ? { providerCallId: one(cb.params.CallSid)! } : {}),
        })
      ).call;
    }
    return twimlFor(tx, s, call, request);
  });
}
