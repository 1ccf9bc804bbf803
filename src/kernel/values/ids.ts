// Prefixed, time-sortable ids (TypeID: a type prefix and a UUIDv7 in base32). Sorting ids sorts by
// creation time, which is what cursor pagination relies on.
import { fromUUID } from 'typeid-js';
import { v7 } from 'uuid';

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
  template: 'tpl',
  message: 'msg',
  conversation: 'cnv',
  rule: 'rul',
  ruleRun: 'run',
  sequence: 'seq',
  enrollment: 'enr',
  automationCall: 'whc',
  journey: 'jny',
  journeyRun: 'jrn',
  journeyConfig: 'jcf',
  voiceScript: 'vsc',
  call: 'call',
  voiceCampaign: 'vcp',
  campaign: 'cmp',
  media: 'med',
  consoleUser: 'lgn',
  consoleSession: 'ses',
  consoleInvitation: 'inv',
  cannedResponse: 'cnr',
  note: 'nte',
  team: 'tem',
  slaPolicy: 'sla',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

// TypeID's suffix: the 128 bits of the UUIDv7, after two zero bits, in 26 Crockford base32
// characters. Encoded here because typeid-js's object-building path cost ~5 µs an id, and a bulk
// job makes two per row (ids.test.ts checks the output against typeid-js).
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const bytes = new Uint8Array(16);

function encode(b: Uint8Array): string {
  const c = (i: number) => ALPHABET[i & 31]!;
  let out = c(b[0]! >> 5) + c(b[0]!);
  // From here every 5 bytes make 8 characters.
  for (let i = 1; i < 16; i += 5) {
    const p = b[i]!;
    const q = b[i + 1]!;
    const r = b[i + 2]!;
    const s = b[i + 3]!;
    const t = b[i + 4]!;
    out +=
      c(p >> 3) +
      c((p << 2) | (q >> 6)) +
      c(q >> 1) +
      c((q << 4) | (r >> 4)) +
      c((r << 1) | (s >> 7)) +
      c(s >> 2) +
      c((s << 3) | (t >> 5)) +
      c(t);
  }
  return out;
}

/** A new id of this kind: `<prefix>_` and a UUIDv7 (monotonic within a process) as TypeID. */
export function newId(kind: IdKind): string {
  v7(undefined, bytes);
  return `${ID_PREFIXES[kind]}_${encode(bytes)}`;
}

/**
 * A new id of this kind as if made at `date` (its random bits its own): what a row stored now for
 * a time past carries, so that it sorts among the rows of its time (an imported chat history).
 */
export function newIdAt(kind: IdKind, date: Date): string {
  // UUIDv7 by hand: 48 bits of milliseconds, the version, random bits, the variant.
  const at = new Uint8Array(16);
  crypto.getRandomValues(at);
  let ms = Math.max(0, Math.floor(date.getTime()));
  for (let i = 5; i >= 0; i--) {
    at[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  at[6] = 0x70 | (at[6]! & 0x0f);
  at[8] = 0x80 | (at[8]! & 0x3f);
  return `${ID_PREFIXES[kind]}_${encode(at)}`;
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

/**
 * When an id was made: the millisecond its UUIDv7 carries (the suffix's first 10 characters are
 * two zero bits and those 48). messages/id-skew.ts compares it with a message's created_at.
 */
export function timeOfId(id: string): Date {
  const suffix = id.slice(id.lastIndexOf('_') + 1);
  let ms = 0;
  for (let i = 0; i < 10; i++) ms = ms * 32 + ALPHABET.indexOf(suffix[i]!);
  return new Date(ms);
}
