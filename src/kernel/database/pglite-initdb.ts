// Creates an embedded database's data directory in a child process, then leaves.
//
// Why: PGlite runs initdb as a second WebAssembly module whose memory (over 400 MiB touched) stays
// with the PGlite instance for as long as it is open. A server that made its data directory on its
// first start carried that memory for its whole life: 780 MiB resident before the first request,
// against 300 MiB when it opens a directory that already exists. Done in a child process, that
// memory goes back to the system when the child exits.
//
// The child builds the directory beside the one asked for and renames it into place once initdb has
// finished, so a start that dies half-way leaves no half-made database behind (the next start finds
// no PG_VERSION and begins again; the leftover is removed).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { OwnerOnlyNodeFS } from '../runtime/owner-only-fs.ts';

const SELF = fileURLToPath(import.meta.url);
const PARTIAL = '.initdb-';

/** True when `dir` holds a database (initdb finished there). */
export function hasDatabase(dir: string): boolean {
  return existsSync(join(dir, 'PG_VERSION'));
}

/** Makes a database in `dir` (which must not hold one) in a child process. */
export async function initDataDirInChild(dir: string): Promise<void> {
  // A directory with files in it but no database is not ours to fill or replace.
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new Error(`${dir} holds files but no database: give DATA_DIR an empty or new directory`);
  }
  // Leftovers of earlier starts that died during initdb.
  for (const name of readdirSync(dirname(dir))) {
    if (name.startsWith(`${basename(dir)}${PARTIAL}`))
      rmSync(join(dirname(dir), name), { recursive: true, force: true });
  }
  const partial = `${dir}${PARTIAL}${process.pid}`;
  // Made here for its owner alone, whatever the umask: it becomes the database's directory.
  mkdirSync(partial, { mode: 0o700 });
  // The child needs the parent's flags that make it able to load TypeScript, not its profilers or
  // inspector (a second process would claim the same port or profile directory).
  const flags = process.execArgv.filter((flag) => !/^--(cpu-prof|heap-prof|inspect|prof)/.test(flag));
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [...flags, SELF, partial], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('exit', (exitCode) => resolve({ code: exitCode, output }));
  });
  if (code !== 0 || !hasDatabase(partial)) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(
      `could not create the embedded database in ${dir} (initdb exited with ${code}): ${output.trim()}`,
    );
  }
  // rmdir, not rm: it refuses a directory that gained files meanwhile.
  if (existsSync(dir)) rmdirSync(dir);
  renameSync(partial, dir);
}

// Run as a script: node pglite-initdb.ts <dir>
if (process.argv[1] === SELF) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: pglite-initdb.ts <data directory>');
  const db = await PGlite.create({ fs: new OwnerOnlyNodeFS(dir) });
  await db.close();
}
