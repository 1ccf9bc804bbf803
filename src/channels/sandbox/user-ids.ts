// The sandbox's WhatsApp user ids. Meta gives every WhatsApp user a business-scoped user id (BSUID)
// and puts it in every webhook; the sandbox does the same for its simulated customers: a stable id
// per account and number, in Meta's shape (the number's country, a dot, 19 digits), so a business
// sees one customer under one id in its sandbox, and another account sees another id (as two
// businesses do with Meta).
//
// Some test numbers play customers with a username who withhold their number
// (docs/messaging.md § Sandbox test numbers): +1 NXX 555-011Y. What they send comes with their user
// id and username only, as Meta's webhooks do for such a customer.
import { createHash } from 'node:crypto';
import { countryOf } from '../../kernel/values/phones.ts';

/** The sandbox customer's user id at `phone`, for the account. */
export function sandboxUserId(accountId: string, phone: string): string {
  const digest = createHash('sha256').update(`${accountId}\u0000${phone}`).digest();
  const digits = (digest.readBigUInt64BE(0) % 10n ** 18n).toString().padStart(18, '0');
  return `${countryOf(phone) ?? 'US'}.1${digits}`;
}

const WITHHELD = /^\+1[2-9]\d{2}55501(1\d)$/;

/** The username of a test number's customer who withholds their number; null for any other number. */
export function sandboxUsername(phone: string): string | null {
  const suffix = WITHHELD.exec(phone)?.[1];
  return suffix ? `sandbox.customer${suffix}` : null;
}
