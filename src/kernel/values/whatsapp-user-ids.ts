// WhatsApp's business-scoped user ids (BSUIDs) and usernames, as Meta documents them
// (docs/history/issue-45-meta-identity.md § 8): an ISO 3166-1 alpha-2 country code, a dot, and up
// to 128 letters and digits (`US.13491208655302741918`); a parent id, shared by the portfolios of
// one enterprise, has `ENT.` after the country (`US.ENT.11815799212886844830`). Meta asks that an
// id be stored and sent back exactly as received: nothing here changes one, it only says whether a
// value has the shape.

const USER_ID = /^[A-Z]{2}\.[A-Za-z0-9]{1,128}$/;
const PARENT_USER_ID = /^[A-Z]{2}\.ENT\.[A-Za-z0-9]{1,128}$/;

/** Whether `value` is a business-scoped user id (a parent id is not: its `ENT.` has a dot). */
export function isWhatsAppUserId(value: unknown): value is string {
  return typeof value === 'string' && USER_ID.test(value);
}

export function isWhatsAppParentUserId(value: unknown): value is string {
  return typeof value === 'string' && PARENT_USER_ID.test(value);
}

/** The country a user id names (its prefix): how a message to a customer without a phone is priced. */
export function countryOfUserId(userId: string): string {
  return userId.slice(0, 2);
}

/** The JSON-schema pattern of a user id, for request bodies and queries. */
export const WHATSAPP_USER_ID_PATTERN = '^[A-Z]{2}\\.[A-Za-z0-9]{1,128}$';

/**
 * A username as Meta showed it, without the leading @ some of its examples carry; null for
 * anything that is not a string of 1–64 characters (Meta allows 3–35: a longer one is not kept).
 */
export function usernameFrom(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const name = value.trim().replace(/^@/, '');
  return name.length > 0 && name.length <= 64 ? name : null;
}

/**
 * A chat's address: the E.164 number a message goes to (`+14155550123`), or the customer's user id
 * when there is no number to send to (`US.1349…`). The two never look alike (a number begins with
 * +), so one string names a chat wherever messages are keyed by their recipient (the per-recipient
 * order of hand-overs, the contacts a batch looks up, the message's columns).
 */
export const isPhoneAddress = (address: string): boolean => address.startsWith('+');

/**
 * A user id as a provider reported it, kept exactly as given (Meta: "store and send it back as
 * received"): any string of 1–160 characters without spaces; null for anything else. A shape Meta
 * has not documented yet is the provider's fact, not a client's typo, so it is not refused here.
 */
export function providerUserId(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const id = value.trim();
  return id.length > 0 && id.length <= 160 && !/\s/.test(id) ? id : null;
}
