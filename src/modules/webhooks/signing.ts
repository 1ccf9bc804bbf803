// The Standard Webhooks signing scheme (https://www.standardwebhooks.com): a secret `whsec_<base64>`
// whose decoded bytes key an HMAC-SHA256 of "id.timestamp.body", sent as
// `webhook-signature: v1,<base64>`; several signatures are separated by spaces (during a rotation).
// Receivers verify it with the `standardwebhooks` package; the tests do too.
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';
const MIN_BYTES = 24;
const MAX_BYTES = 64;

export function generateSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** Why a subscriber's own secret is not acceptable, or null. */
export function secretProblem(secret: string): string | null {
  if (!secret.startsWith(PREFIX)) return 'must start with whsec_';
  const body = secret.slice(PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0) {
    return 'must be whsec_ followed by standard base64';
  }
  const bytes = Buffer.from(body, 'base64').length;
  if (bytes < MIN_BYTES || bytes > MAX_BYTES) return `must encode ${MIN_BYTES} to ${MAX_BYTES} bytes`;
  return null;
}

function sign(secret: string, content: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
}

/** The three headers of one delivery attempt, signed with every given secret. */
export function signatureHeaders(
  secrets: string[],
  eventId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const content = `${eventId}.${timestampSeconds}.${body}`;
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => sign(s, content)).join(' '),
  };
}
