// `tidings backup FILE` and `tidings restore FILE`, for the embedded database. A running server owns
// its database, so a backup is asked of it through its admin socket (modules/backup/admin-socket.ts);
// with no server running the command opens the database itself. A restore fills an empty data
// directory and checks every table's row count against the backup's manifest. PostgreSQL has its
// own tools (pg_dump, pg_restore: docs/operations.md).
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { Config } from '../../config.ts';
import { readSecretsKeyFile, secretsKeyFile } from '../../kernel/crypto/secrets.ts';
import { embeddedDir, loadPgliteDump, openDatabase, openPglite } from '../../kernel/database/db.ts';
import { hasDatabase } from '../../kernel/database/pglite-initdb.ts';
import { claimDataDir } from '../../kernel/runtime/data-dir.ts';
import {
  adminSocketPath,
  type BackupManifest,
  countRows,
  decodeBackup,
  takeBackup,
} from '../../modules/backup/index.ts';
import { serverRunning } from '../server-pid.ts';
import { UsageError } from '../usage-error.ts';

type Out = { write(text: string): unknown };

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const total = (tables: Record<string, number>) => Object.values(tables).reduce((a, b) => a + b, 0);

function embeddedOnly(cfg: Config, what: string, instead: string): void {
  if (cfg.databaseUrl)
    throw new UsageError(`DATABASE_URL is set: ${what} is for the embedded database; ${instead}`);
}

/** The backup, from the running server through its socket. */
function askServer(dataDir: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: adminSocketPath(dataDir), method: 'POST', path: '/backup' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        if (res.statusCode !== 200)
          reject(new Error(`the server could not take the backup: ${body.toString('utf8')}`));
        else if (body.length !== Number(res.headers['content-length']))
          reject(new Error('the backup was cut short'));
        else resolve(body);
      });
    });
    req.on('error', (err) =>
      reject(
        new Error(
          `cannot reach the running server's admin socket ${adminSocketPath(dataDir)}: ${err.message}`,
        ),
      ),
    );
    req.end();
  });
}

async function backupWithoutServer(cfg: Config): Promise<Buffer> {
  const key = cfg.secretsKey ? null : readSecretsKeyFile(cfg.dataDir);
  const db = await openDatabase(cfg);
  try {
    return (await takeBackup(db, key)).file;
  } finally {
    await db.close();
  }
}

export async function backupCommand(
  cfg: Config,
  file: string,
  options: { force?: boolean },
  out: Out,
): Promise<void> {
  embeddedOnly(cfg, 'tidings backup', 'back PostgreSQL up with pg_dump (docs/operations.md, Backups)');
  if (existsSync(file) && !options.force)
    throw new UsageError(`${file} exists: give another name, or --force`);
  if (!hasDatabase(embeddedDir(cfg.dataDir))) throw new UsageError(`no embedded database in ${cfg.dataDir}`);
  const pid = serverRunning(cfg);
  const bytes = pid ? await askServer(cfg.dataDir) : await backupWithoutServer(cfg);
  const { manifest } = decodeBackup(bytes);
  // Written aside, then renamed: a backup cut short never passes for a whole one.
  // Made anew for its owner alone: a partial left by an earlier run keeps its mode if written over.
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  writeFileSync(partial, bytes, { mode: 0o600, flag: 'wx' });
  renameSync(partial, file);
  out.write(
    [
      `Backed up ${pid ? `the running server's (pid ${pid}) ` : ''}database to ${file} (${mib(bytes.length)}):`,
      `  ${total(manifest.tables)} rows in ${Object.keys(manifest.tables).length} tables, ${manifest.migrations.length} migrations, taken ${manifest.createdAt}.`,
      manifest.secretsKey
        ? '  It holds the secrets key: keep it as safe as the data directory.'
        : '  SECRETS_KEY came from the environment and is not in it: keep that key with the backup.',
      '',
    ].join('\n'),
  );
}

function describeDifferences(expected: Record<string, number>, got: Record<string, number>): string[] {
  const names = new Set([...Object.keys(expected), ...Object.keys(got)]);
  return [...names]
    .filter((n) => expected[n] !== got[n])
    .map((n) => `  ${n}: ${expected[n] ?? 'absent'} in the backup, ${got[n] ?? 'absent'} restored`);
}

export async function restoreCommand(cfg: Config, file: string, out: Out): Promise<number> {
  embeddedOnly(
    cfg,
    'tidings restore',
    'unset it to restore into the embedded database (then tidings migrate-to-postgres), or pg_restore a pg_dump',
  );
  const pid = serverRunning(cfg);
  if (pid) throw new UsageError(`a server (pid ${pid}) runs on ${cfg.dataDir}: restore into a new DATA_DIR`);
  const dir = embeddedDir(cfg.dataDir);
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new UsageError(`${cfg.dataDir} already holds a database: restore into an empty or new DATA_DIR`);
  }
  if (!existsSync(file)) throw new UsageError(`no file ${file}`);
  claimDataDir(cfg.dataDir, { create: true });
  const { manifest, tar } = decodeBackup(readFileSync(file));
  const keyFile = secretsKeyFile(cfg.dataDir);
  const keyNote = secretsKeyNote(cfg, manifest, keyFile);
  await loadPgliteDump(dir, new Blob([new Uint8Array(tar)]));
  if (manifest.secretsKey && !existsSync(keyFile))
    writeFileSync(keyFile, manifest.secretsKey, { mode: 0o600 });
  const db = await openPglite(dir);
  let restored: Record<string, number>;
  try {
    restored = await countRows(db);
  } finally {
    await db.close();
  }
  const differences = describeDifferences(manifest.tables, restored);
  if (differences.length > 0) {
    out.write(`The restored database differs from the backup's manifest:\n${differences.join('\n')}\n`);
    return 1;
  }
  out.write(
    [
      `Restored ${file} (taken ${manifest.createdAt} by Tidings ${manifest.tidingsVersion}) into ${cfg.dataDir}:`,
      `  ${total(restored)} rows in ${Object.keys(restored).length} tables, each as many as the backup counted.`,
      ...(keyNote ? [`  ${keyNote}`] : []),
      '  Start it with: tidings serve (it applies any migrations this version adds, then finishes pending work).',
      '',
    ].join('\n'),
  );
  return 0;
}

/** Which key will open the restored secrets; refuses a data directory whose own key differs. */
function secretsKeyNote(cfg: Config, manifest: BackupManifest, keyFile: string): string | null {
  if (
    manifest.secretsKey &&
    existsSync(keyFile) &&
    readFileSync(keyFile, 'utf8').trim() !== manifest.secretsKey
  ) {
    throw new UsageError(
      `${keyFile} holds another key than the backup's: restore into an empty or new DATA_DIR`,
    );
  }
  if (manifest.secretsKey && cfg.secretsKey && cfg.secretsKey !== manifest.secretsKey) {
    return "SECRETS_KEY in the environment is not the backup's key: unset it (the backup's key is now in secrets.key), or sealed secrets will not open.";
  }
  if (!manifest.secretsKey && !cfg.secretsKey) {
    return 'The backup was taken with SECRETS_KEY from the environment: set that same key before tidings serve.';
  }
  return null;
}
