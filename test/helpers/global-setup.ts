// Builds one migrated database (schema + pg-boss) per test run; each test file clones it, which is
// much faster than migrating per file. PGlite: a data-dir dump on disk. PostgreSQL: a template
// database that CREATE DATABASE … TEMPLATE copies.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import type { Database } from '../../src/kernel/database/db.ts';
import { openPostgres, PGLITE_OPTIONS, pgliteDatabase } from '../../src/kernel/database/db.ts';
import { migrate } from '../../src/kernel/database/migrate.ts';
import { Jobs } from '../../src/kernel/jobs/jobs.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    postgresTemplate: string | null;
  }
}

async function prepare(db: Database): Promise<void> {
  await migrate(db);
  const jobs = new Jobs(db);
  await jobs.start();
  await jobs.stop(0);
}

export function databaseUrl(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(`${tmpdir()}/tidings-test-`);
  const raw = await PGlite.create(PGLITE_OPTIONS);
  const lite = pgliteDatabase(raw);
  await prepare(lite);
  const dump = await raw.dumpDataDir('gzip');
  writeFileSync(`${dir}/template.tar.gz`, Buffer.from(await dump.arrayBuffer()));
  await lite.close();
  project.provide('pgliteTemplate', `${dir}/template.tar.gz`);

  const adminUrl = process.env.TEST_DATABASE_URL;
  let template: string | null = null;
  if (adminUrl) {
    template = `tidings_tpl_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${template}`);
    await admin.end();
    const db = await openPostgres(databaseUrl(adminUrl, template), 2);
    await prepare(db);
    await db.close();
  }
  project.provide('postgresTemplate', template);

  return async () => {
    rmSync(dir, { recursive: true, force: true });
    if (adminUrl && template) {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
      await admin.end();
    }
  };
}
