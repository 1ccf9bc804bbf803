// The URLs a voice provider is given for a call: all under the account's callback URL, all naming
// the call (so a callback finds it before the provider's id is recorded), all signed by the provider
// over exactly these bytes, so they are built in one place.
import { CALLBACKS_PREFIX } from '../../kernel/http/prefixes.ts';

/** The account's voice callback URL, as GET /account/voice-channel shows it. */
export function voiceCallbackBase(publicBaseUrl: string, accountId: string): string {
  return `${publicBaseUrl}${CALLBACKS_PREFIX}/twilio/voice/${accountId}`;
}

export interface CallUrls {
  status: string;
  answer: string;
  gather: (node: string, attempt: number) => string;
  node: (node: string) => string;
}

export function callUrls(publicBaseUrl: string, accountId: string, callId: string): CallUrls {
  const base = voiceCallbackBase(publicBaseUrl, accountId);
  const call = `call=${encodeURIComponent(callId)}`;
  return {
    status: `${base}?${call}`,
    answer: `${base}/answer?${call}`,
    gather: (node, attempt) => `${base}/gather?${call}&node=${encodeURIComponent(node)}&attempt=${attempt}`,
    node: (node) => `${base}/node?${call}&node=${encodeURIComponent(node)}`,
  };
}
