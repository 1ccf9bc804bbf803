// A Tidings backup of the embedded database: one gzip stream holding a header line, a manifest
// (one JSON line) and PGlite's data-directory tar. The manifest says what the backup holds, so a
// restore can check it got everything back: the row count of every table, the migrations, and the
// secrets key the sealed secrets need (unless SECRETS_KEY came from the environment, which then
// stays the operator's to keep).
import { gunzipSync, gzipSync } from 'node:zlib';

export const BACKUP_HEADER = 'TIDINGS-BACKUP 1';

export interface BackupManifest {
  createdAt: string;
  tidingsVersion: string;
  /** Applied migrations, by name, oldest first. */
  migrations: string[];
  /** Rows per table (schema-qualified), counted in the same moment as the dump. */
  tables: Record<string, number>;
  /** The key that opens the sealed secrets, or null when it came from SECRETS_KEY. */
  secretsKey: string | null;
}

export class BackupFormatError extends Error {
  override name = 'BackupFormatError';
}

export function encodeBackup(manifest: BackupManifest, tar: Uint8Array): Buffer {
  const head = Buffer.from(`${BACKUP_HEADER}\n${JSON.stringify(manifest)}\n`, 'utf8');
  return gzipSync(Buffer.concat([head, tar]), { level: 6 });
}

export function decodeBackup(file: Buffer): { manifest: BackupManifest; tar: Buffer } {
  let raw: Buffer;
  try {
    raw = gunzipSync(file);
  } catch {
    throw new BackupFormatError('not a Tidings backup (not gzip, or cut short)');
  }
  const first = raw.indexOf(0x0a);
  const second = first < 0 ? -1 : raw.indexOf(0x0a, first + 1);
  if (second < 0 || raw.subarray(0, first).toString('utf8') !== BACKUP_HEADER) {
    throw new BackupFormatError(`not a Tidings backup (no ${BACKUP_HEADER} header)`);
  }
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(raw.subarray(first + 1, second).toString('utf8')) as BackupManifest;
  } catch {
    throw new BackupFormatError('the backup manifest is not JSON');
  }
  return { manifest, tar: raw.subarray(second + 1) };
}
