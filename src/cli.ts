// The `tidings` command line: serve, migrate, bootstrap-token, account/key management for a
// self-hoster who wants a working key without the partner API, the price book (prices load|list),
// and a client of the HTTP API (login profiles, send, contacts list|import, messages get, webhooks
// listen).
import { rmSync, writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { contactsListCommand } from './cli/api/contacts-list.ts';
import { loginCommand, logoutCommand } from './cli/api/login.ts';
import { messagesGetCommand } from './cli/api/messages-get.ts';
import { sendCommand } from './cli/api/send.ts';
import { contactsImportCommand } from './cli/contacts-import/command.ts';
import { pidFile, serverRunning } from './cli/server-pid.ts';
import { webhooksListenCommand } from './cli/webhooks-listen/command.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import type { Database } from './kernel/database/db.ts';
import { ApiError } from './kernel/http/errors.ts';
import { claimDataDir, DataDirError, PRIVATE_UMASK } from './kernel/runtime/data-dir.ts';
import { TIDINGS_VERSION } from './kernel/runtime/version.ts';
import { ADDONS, listAccounts, PLAN_CODES } from './modules/accounts/index.ts';
import { createKey, revokeKey } from './modules/keys/index.ts';
import {
  bootstrapTokenFile,
  installationPartner,
  provisionAccount,
  readBootstrapToken,
  renewBootstrapToken,
} from './modules/partner/index.ts';

// The server (Fastify, the database drivers, every module) is loaded only by the commands that
// need it: the API client commands start in a tenth of the time without it.
const server = () => import('./server.ts');

function config(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/**
 * The configuration of a command that writes into DATA_DIR (serve, migrate, backup, restore, the
 * account and key commands…): what it makes there, and what the processes it starts make, is for
 * this user alone (docs/operations.md § File modes).
 */
function dataDirConfig(): Config {
  process.umask(PRIVATE_UMASK);
  return config();
}

/** A DATA_DIR that cannot be made private stops the command with what to do, not a stack. */
function exitOnDataDirError(err: unknown): never {
  if (err instanceof DataDirError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

/** The embedded database serves one process at a time: refuse to open it beside a running server. */
function refuseIfServerRunning(cfg: Config): void {
  const pid = cfg.databaseUrl ? null : serverRunning(cfg);
  if (pid) {
    process.stderr.write(
      `A server (pid ${pid}) has the embedded database in ${cfg.dataDir} open. Stop it first, or use the HTTP API.\n`,
    );
    process.exit(1);
  }
}

/** Runs a command on the database, migrated first. */
async function withDatabase<T>(work: (db: Database, cfg: Config) => Promise<T>): Promise<T> {
  const cfg = dataDirConfig();
  refuseIfServerRunning(cfg);
  try {
    claimDataDir(cfg.dataDir, { create: !cfg.databaseUrl });
  } catch (err) {
    exitOnDataDirError(err);
  }
  const { prepareDatabase } = await server();
  const { db, jobs } = await prepareDatabase(cfg);
  await jobs.start();
  try {
    return await work(db, cfg);
  } catch (err) {
    if (err instanceof ApiError) {
      process.stderr.write(`${err.code}: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  } finally {
    await jobs.stop(0);
    await db.close();
  }
}

function printBootstrapToken(token: string, cfg: Config): void {
  process.stdout.write(
    [
      '',
      '  Tidings bootstrap token:',
      `    ${token}`,
      `  (kept in ${bootstrapTokenFile(cfg)} until used; print it again with: npx tidings bootstrap-token --show)`,
      '  Create your partner key with:',
      `    curl -X POST ${cfg.publicBaseUrl}/api/v1/public/partner/bootstrap -H "Authorization: Bearer ${token}"`,
      '',
      '',
    ].join('\n'),
  );
}

const program = new Command('tidings')
  .description('Tidings: self-hostable business messaging API')
  .version(TIDINGS_VERSION, '-v, --version', 'print the version');

program
  .command('serve')
  .description('run the API server (and background workers)')
  .action(async () => {
    const cfg = dataDirConfig();
    refuseIfServerRunning(cfg);
    const { startServer } = await server();
    const started = startServer(cfg, {
      announceBootstrapToken: (token) => printBootstrapToken(token, cfg),
    }).then((server) => {
      if (!cfg.databaseUrl) writeFileSync(pidFile(cfg), String(process.pid), { mode: 0o600 });
      return server;
    }, exitOnDataDirError);
    // Listening before the server has started: a signal that comes while it starts (the server
    // announces itself a moment before start-up returns) waits for it, then shuts it down cleanly.
    const stop = async (signal: string) => {
      const server = await started;
      server.app.log.info({ signal }, 'shutting down');
      await server.close();
      if (!cfg.databaseUrl) rmSync(pidFile(cfg), { force: true });
      process.exit(0);
    };
    process.once('SIGINT', () => void stop('SIGINT'));
    process.once('SIGTERM', () => void stop('SIGTERM'));
    await started;
  });

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(() =>
    withDatabase(async () => {
      process.stdout.write('database is up to date\n');
    }),
  );

program
  .command('doctor')
  .description('check the configuration, database, Redis, public URL and egress; say what to fix')
  .action(async () => {
    const { doctorCommand } = await import('./cli/doctor/command.ts');
    process.exitCode = await doctorCommand(process.stdout);
  });

/** Runs an operations command: a UsageError or a bad backup file is printed and exits 2 / 1. */
async function operation(work: () => Promise<number | undefined>): Promise<void> {
  const { UsageError } = await import('./cli/usage-error.ts');
  const { BackupFormatError } = await import('./modules/backup/index.ts');
  try {
    process.exitCode = (await work()) ?? 0;
  } catch (err) {
    if (!(err instanceof UsageError || err instanceof BackupFormatError || err instanceof DataDirError))
      throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  }
}

program
  .command('backup')
  .description('back the embedded database up into FILE (through the running server, if one runs)')
  .argument('<file>', 'the backup file to write')
  .option('--force', 'replace FILE if it exists')
  .action((file: string, options: { force?: boolean }) =>
    operation(async () => {
      const { backupCommand } = await import('./cli/backup/command.ts');
      await backupCommand(dataDirConfig(), file, options, process.stdout);
      return 0;
    }),
  );

program
  .command('restore')
  .description('restore a backup into an empty DATA_DIR, checking every table against it')
  .argument('<file>', 'the backup file (tidings backup)')
  .action((file: string) =>
    operation(async () => {
      const { restoreCommand } = await import('./cli/backup/command.ts');
      return restoreCommand(dataDirConfig(), file, process.stdout);
    }),
  );

program
  .command('migrate-to-postgres')
  .description('copy the embedded database into a new PostgreSQL database and check every table')
  .requiredOption('--database-url <url>', 'the new, empty PostgreSQL database')
  .action((options: { databaseUrl: string }) =>
    operation(async () => {
      const { migrateToPostgres } = await import('./cli/migrate-to-postgres/command.ts');
      return migrateToPostgres(dataDirConfig(), options.databaseUrl, process.stdout, process.stderr);
    }),
  );

program
  .command('bootstrap-token')
  .description('issue a new bootstrap token (only while the installation is not bootstrapped)')
  .option(
    '--show',
    'print the unused generated token from DATA_DIR/bootstrap-token (works while the server runs)',
  )
  .action((options: { show?: boolean }) => {
    if (options.show) {
      // Reads the file only: the embedded database may be open in the running server.
      const cfg = config();
      const token = readBootstrapToken(cfg);
      if (token) {
        process.stdout.write(`${token}\n`);
        return;
      }
      process.stderr.write(
        cfg.bootstrapToken
          ? 'BOOTSTRAP_TOKEN is set in the environment: that token is the bootstrap token.\n'
          : `No unused bootstrap token in ${bootstrapTokenFile(cfg)}: the installation is bootstrapped, or the server has not started yet.\n`,
      );
      process.exit(1);
    }
    return withDatabase(async (db, cfg) => {
      if (cfg.bootstrapToken) {
        process.stdout.write(
          'BOOTSTRAP_TOKEN is set in the environment: that token is the bootstrap token.\n',
        );
        return;
      }
      printBootstrapToken(await renewBootstrapToken(db, cfg), cfg);
    });
  });

const accounts = program.command('accounts').description('manage accounts');
accounts
  .command('create')
  .description("create an account (owned by the installation's partner, if bootstrapped)")
  .requiredOption('--name <name>', 'account name')
  .option('--country <code>', 'ISO 3166-1 alpha-2 country code', 'US')
  .addOption(new Option('--plan <code>', 'plan').choices(PLAN_CODES).default('business'))
  .addOption(new Option('--addon <addon...>', 'add-ons').choices([...ADDONS]))
  .option('--external-ref <ref>', 'your own reference')
  .action((opts) =>
    withDatabase(async (db) => {
      const partnerId = await installationPartner(db);
      const row = await provisionAccount(db, partnerId, {
        accountName: opts.name,
        countryCode: opts.country,
        planCode: opts.plan,
        addons: opts.addon ?? [],
        externalRef: opts.externalRef ?? null,
      });
      process.stdout.write(
        `${JSON.stringify({ accountId: row.id, status: row.status, planCode: row.plan_code })}\n`,
      );
    }),
  );

accounts
  .command('list')
  .description('list accounts')
  .action(() =>
    withDatabase(async (db) => {
      const partnerId = await installationPartner(db);
      for (const owner of partnerId ? [partnerId, null] : [null]) {
        let before: string | null = null;
        for (;;) {
          const rows = await listAccounts(db, owner, { limit: 500, before }, {});
          for (const r of rows.slice(0, 500)) {
            process.stdout.write(`${r.id}\t${r.status}\t${r.plan_code}\t${r.name}\n`);
          }
          if (rows.length <= 500) break;
          before = rows[499].id;
        }
      }
    }),
  );

const prices = program.command('prices').description("Meta's price book: the rows that price messages");
prices
  .command('load')
  .description('add the rows of a price file (docs/messaging.md § The price book); all of them, or none')
  .argument('<file>', 'a JSON file: { "currency": "USD", "rows": [...] }')
  .action((file: string) =>
    operation(() =>
      withDatabase(async (db) => {
        const { pricesLoadCommand } = await import('./cli/prices/command.ts');
        process.stdout.write(await pricesLoadCommand(db, file));
        return 0;
      }),
    ),
  );
prices
  .command('list')
  .description('print the rows, one JSON line each, saying which are in force')
  .option('--market <code>', 'only this market (ISO 3166-1 alpha-2, or *)')
  .option('--at <date>', 'in force on this day (YYYY-MM-DD); today by default')
  .action((opts: { market?: string; at?: string }) =>
    operation(() =>
      withDatabase(async (db, cfg) => {
        const { pricesListCommand } = await import('./cli/prices/command.ts');
        const { loadPrices } = await import('./modules/pricing/index.ts');
        process.stdout.write(await pricesListCommand(db, loadPrices(cfg.pricesFile), opts));
        return 0;
      }),
    ),
  );

const keys = program.command('keys').description('manage API keys');
keys
  .command('create')
  .description('create an API key for an account and print it (shown once)')
  .requiredOption('--account <accountId>', 'the account')
  .option('--name <name>', 'what the key is for', 'cli')
  .addOption(new Option('--scope <scope>', 'live or sandbox').choices(['live', 'sandbox']).default('live'))
  .action((opts) =>
    withDatabase(async (db, cfg) => {
      const { row, apiKey } = await db.transaction((tx) =>
        createKey(
          tx,
          { accountId: opts.account },
          { name: opts.name, scope: opts.scope },
          { keyPrefix: cfg.keyPrefix, now: new Date() },
        ),
      );
      process.stdout.write(`${JSON.stringify({ id: row.id, scope: row.scope, apiKey })}\n`);
    }),
  );

keys
  .command('revoke')
  .description("revoke an account's API key")
  .argument('<keyId>', 'the key id (key_…)')
  .requiredOption('--account <accountId>', 'the account the key belongs to')
  .action((keyId, opts) =>
    withDatabase(async (db) => {
      await revokeKey(db, { accountId: opts.account }, keyId, new Date());
      process.stdout.write(`revoked ${keyId}\n`);
    }),
  );

program.addCommand(loginCommand());
program.addCommand(logoutCommand());
program.addCommand(sendCommand());

const contacts = program.command('contacts').description('manage contacts through the HTTP API');
contacts.addCommand(contactsListCommand());
contacts.addCommand(contactsImportCommand(config));

const messages = program.command('messages').description('messages through the HTTP API');
messages.addCommand(messagesGetCommand());

const webhooks = program.command('webhooks').description('webhooks through the HTTP API');
webhooks.addCommand(webhooksListenCommand());

await program.parseAsync();
