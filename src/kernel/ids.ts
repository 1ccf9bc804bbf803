// Prefixed, time-sortable ids (TypeID: a type prefix and a UUIDv7 in base32). Sorting ids sorts by
// creation time, which is what cursor pagination relies on.
import { typeid } from 'typeid-js';

export const ID_PREFIXES = {
  account: 'acc',
  apiKey: 'key',
  partner: 'ptn',
  walletTransaction: 'txn',
  event: 'evt',
  webhook: 'whk',
  delivery: 'dlv',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export function newId(kind: IdKind): string {
  return typeid(ID_PREFIXES[kind]).toString();
}
