// Secrets kept at rest (webhook signing secrets, provider credentials) are sealed with AES-256-GCM
// under SECRETS_KEY. A sealed value is "v1." + base64url(iv | tag | ciphertext); the version lets
// a later key rotation tell old values apart.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the embedded server keeps the key it made at its first start (without SECRETS_KEY). */
export const secretsKeyFile = (dataDir: string) => join(dataDir, 'secrets.key');

/** The key the embedded server made in `dataDir`, or null if it has made none. */
export function readSecretsKeyFile(dataDir: string): string | null {
  const path = secretsKeyFile(dataDir);
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : null;
}

const VERSION = 'v1.';

export class SecretBox {
  readonly #key: Buffer | null;

  /** `base64Key`: the base64 of 32 bytes; null when none is configured (sealing then throws). */
  constructor(base64Key: string | null) {
    this.#key = base64Key ? Buffer.from(base64Key, 'base64') : null;
    if (this.#key && this.#key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes');
  }

  #requireKey(): Buffer {
    if (!this.#key) throw new Error('SECRETS_KEY is not configured');
    return this.#key;
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#requireKey(), iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return VERSION + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  open(sealed: string): string {
    if (!sealed.startsWith(VERSION)) throw new Error('unknown sealed secret format');
    const raw = Buffer.from(sealed.slice(VERSION.length), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.#requireKey(), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
