// Prefixed, time-sortable ids (TypeID: a type prefix and a UUIDv7 in base32). Sorting ids sorts by
// creation time, which is what cursor pagination relies on.
import { typeid } from 'typeid-js';

export const ID_PREFIXES = {
  account: 'acc',
  apiKey: 'key',
  partner: 'ptn',
  walletTransaction: 'txn',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export function newId(kind: IdKind): string {
  return typeid(ID_PREFIXES[kind]).toString();
}

/** A cheap shape check, so malformed ids are answered 404 without a query. */
export function looksLikeId(kind: IdKind, value: string): boolean {
  return new RegExp(`^${ID_PREFIXES[kind]}_[0-7][0-9a-hjkmnp-tv-z]{25}$`).test(value);
}
