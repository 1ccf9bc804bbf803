// DATA_DIR is for the user Tidings runs as, alone (docs/operations.md § File modes): the embedded
// database (its WAL holds tenants' message texts), the secrets key, the bootstrap token, the admin
// socket. The directory is 0700 and what Tidings keeps in it 0600 (directories 0700).
//
// At start the modes are checked and what is open to others is closed: earlier versions made the
// database's files 0666 and its directories 0755, so every installation upgraded has them, and its
// operator chose none of them. Closing them at start ends the exposure with the upgrade; refusing to
// start (as PostgreSQL does for a data directory open to others) would take every upgraded server
// down for a fault of ours and leave the files just as open until someone acted. What cannot be
// closed (a directory of another owner) stops the start, saying what to do. `tidings doctor` reports
// anything open to others as a failure.
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The embedded database's own directory inside DATA_DIR. */
export const embeddedDir = (dataDir: string) => `${dataDir}/db`;

/** The umask of the commands that write into DATA_DIR: nothing they make is for others. */
export const PRIVATE_UMASK = 0o077;

/** What Tidings keeps in DATA_DIR (the database's directory with everything in it). */
const KEPT = ['db', 'secrets.key', 'bootstrap-token', 'server.pid', 'admin.sock'];

export interface OpenEntry {
  path: string;
  /** Its permission bits, e.g. 0o666. */
  mode: number;
}

export class DataDirError extends Error {}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

function visit(path: string, each: (path: string, mode: number, isDir: boolean) => void): void {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(path);
  } catch {
    return; // gone meanwhile (a socket closed, a WAL segment recycled)
  }
  if (stat.isSymbolicLink()) return;
  each(path, stat.mode & 0o777, stat.isDirectory());
  if (!stat.isDirectory()) return;
  let names: string[];
  try {
    names = readdirSync(path);
  } catch {
    return;
  }
  for (const name of names) visit(join(path, name), each);
}

/** DATA_DIR itself and what Tidings keeps in it, with their modes (nothing of it changed). */
function eachKept(dataDir: string, each: (path: string, mode: number, isDir: boolean) => void): void {
  if (!existsSync(dataDir)) return;
  const top = lstatSync(dataDir);
  each(dataDir, top.mode & 0o777, true);
  for (const name of KEPT) {
    const path = name === 'db' ? embeddedDir(dataDir) : join(dataDir, name);
    if (existsSync(path)) visit(path, each);
  }
}

/** What of DATA_DIR other users may read, write or enter (group or other bits set). */
export function openToOthers(dataDir: string): OpenEntry[] {
  const open: OpenEntry[] = [];
  eachKept(dataDir, (path, mode) => {
    if (mode & 0o077) open.push({ path, mode });
  });
  return open;
}

/** "db/pg_wal/000…1 (0666) and 41 more": the few first of a list, for a message. */
export function describeOpen(entries: OpenEntry[], shown = 3): string {
  const named = entries.slice(0, shown).map((e) => `${e.path} (${octal(e.mode)})`);
  const rest = entries.length - named.length;
  return `${named.join(', ')}${rest > 0 ? ` and ${rest} more` : ''}`;
}

/**
 * Makes DATA_DIR (0700) when `create` and it is missing, then takes group and other access off it
 * and off what Tidings keeps there. Answers what was closed (for the log); throws DataDirError when
 * something cannot be (another user's).
 */
export function claimDataDir(dataDir: string, options: { create: boolean }): OpenEntry[] {
  if (options.create) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const closed = openToOthers(dataDir);
  for (const entry of closed) {
    try {
      chmodSync(entry.path, entry.mode & 0o700);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new DataDirError(
        `${entry.path} is open to other users (mode ${octal(entry.mode)}) and cannot be closed: ${(err as Error).message}. ` +
          `As its owner run: chmod -R go-rwx ${dataDir}; or give DATA_DIR a directory of the user Tidings runs as.`,
      );
    }
  }
  return closed;
}
