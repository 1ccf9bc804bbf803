// The embedded server's admin socket: a Unix socket in the data directory (mode 0600) through which
// `tidings backup` asks the running server, the embedded database's one owner, for a backup. Who
// may open it may read the data directory, and so the database, already: the file system is the
// authorisation, and nothing listens on a port for it.
import { chmodSync, existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../kernel/database/db.ts';
import { takeBackup } from './take.ts';

export const adminSocketPath = (dataDir: string) => `${dataDir}/admin.sock`;

export async function openAdminSocket(options: {
  dataDir: string;
  db: Database;
  /** The key kept in backups (the server's own), or null when SECRETS_KEY came from the environment. */
  secretsKey: string | null;
  log: FastifyBaseLogger;
}): Promise<() => Promise<void>> {
  const path = adminSocketPath(options.dataDir);
  // Left by a server that died: `serve` refuses to start beside a running one, so it is stale.
  if (existsSync(path)) rmSync(path);
  const server = createServer((request, response) => {
    if (request.method !== 'POST' || request.url !== '/backup') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const started = performance.now();
    takeBackup(options.db, options.secretsKey).then(
      ({ file, manifest }) => {
        options.log.info(
          {
            bytes: file.length,
            tables: Object.keys(manifest.tables).length,
            ms: Math.round(performance.now() - started),
          },
          'backup taken',
        );
        response
          .writeHead(200, { 'content-type': 'application/gzip', 'content-length': file.length })
          .end(file);
      },
      (err: Error) => {
        options.log.error({ err }, 'backup failed');
        response
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: err.message }));
      },
    );
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, resolve);
    });
    chmodSync(path, 0o600);
  } catch (err) {
    // A data directory whose path is too long for a socket (about 100 bytes) still serves; only
    // backups while it runs are lost, and the log says so.
    options.log.warn({ err, path }, 'no admin socket: tidings backup will not reach this server');
    return async () => {};
  }
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => {
        rmSync(path, { force: true });
        resolve();
      });
      server.closeAllConnections();
    });
}
