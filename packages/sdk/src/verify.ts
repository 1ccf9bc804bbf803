// Verifying a webhook delivery: the Standard Webhooks signature (webhook-id, webhook-timestamp,
// webhook-signature over "id.timestamp.body"), checked by the `standardwebhooks` package, which
// also refuses timestamps more than five minutes off (replays).
import { WebhookVerificationError as StandardError, Webhook } from 'standardwebhooks';
import type { WebhookEvent } from './types.ts';

export class WebhookVerificationError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'WebhookVerificationError';
  }
}

/** Headers as fetch (Headers), Node (IncomingHttpHeaders) or a plain object gives them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checks a delivery's signature with the webhook's secret (`whsec_…`) and returns the event.
 * `body` must be the raw body exactly as received (a string or bytes), not re-serialised JSON.
 * Throws WebhookVerificationError when the signature, the headers or the timestamp do not hold.
 */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
): WebhookEvent {
  const payload = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const signed: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = header(headers, name);
    if (!value) throw new WebhookVerificationError(`Missing the ${name} header`);
    signed[name] = value;
  }
  let verifier: Webhook;
  try {
    verifier = new Webhook(secret);
  } catch (err) {
    throw new WebhookVerificationError('The secret is not a Standard Webhooks secret (whsec_…)', err);
  }
  try {
    return verifier.verify(payload, signed) as WebhookEvent;
  } catch (err) {
    if (err instanceof StandardError) throw new WebhookVerificationError(err.message, err);
    throw new WebhookVerificationError('The body is not a JSON event', err);
  }
}
