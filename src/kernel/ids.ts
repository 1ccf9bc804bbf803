// Prefixed, time-sortable ids (TypeID: a type prefix and a UUIDv7 in base32). Sorting ids sorts by
// creation time, which is what cursor pagination relies on.
import { fromUUID, typeid } from 'typeid-js';

export const ID_PREFIXES = {
  account: 'acc',
  apiKey: 'key',
  partner: 'ptn',
  walletTransaction: 'txn',
  event: 'evt',
  webhook: 'whk',
  delivery: 'dlv',
  contact: 'ctc',
  teamMember: 'usr',
  bulkJob: 'job',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export function newId(kind: IdKind): string {
  return typeid(ID_PREFIXES[kind]).toString();
}

/**
 * The smallest possible id of this kind made at `date`: every id made before then sorts below it,
 * so `id < idAt(kind, date)` selects older rows through the primary key alone.
 */
export function idAt(kind: IdKind, date: Date): string {
  const ms = date.getTime().toString(16).padStart(12, '0');
  const uuid = `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7000-8000-000000000000`;
  return fromUUID(uuid, ID_PREFIXES[kind]).toString();
}
