// The embedded database's first start: initdb runs in a child process (its memory leaves with it),
// the directory appears whole or not at all, the page cache takes the configured size, and the
// migrations of a first start stay far under the 500 MiB the embedded server is held to.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/kernel/database/db.ts';
import { onPostgres } from '../helpers/harness.ts';

const root = mkdtempSync(`${tmpdir()}/tidings-initdb-`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the embedded database’s first start', { timeout: 120_000 }, () => {
  it('makes the database in a new directory, removes a dead start’s leftovers, and opens it again', async () => {
    const dir = `${root}/fresh/db`;
    mkdirSync(`${root}/fresh`);
    // What a start killed during initdb leaves beside the directory.
    mkdirSync(`${dir}.initdb-99999`);
    writeFileSync(`${dir}.initdb-99999/PG_VERSION`, '18');
    const db = await openPglite(dir, { sharedBuffers: '16MB' });
    try {
      await db.query('CREATE TABLE notes (body text)');
      await db.query("INSERT INTO notes VALUES ('kept')");
      expect(
        (await db.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0]!.shared_buffers,
      ).toBe('16MB');
    } finally {
      await db.close();
    }
    expect(readdirSync(`${root}/fresh`)).toEqual(['db']);
    expect(existsSync(`${dir}/PG_VERSION`)).toBe(true);
    const again = await openPglite(dir);
    try {
      expect((await again.query<{ body: string }>('SELECT body FROM notes')).rows).toEqual([
        { body: 'kept' },
      ]);
      // Without the setting, PostgreSQL's own default.
      expect(
        (await again.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0]!.shared_buffers,
      ).toBe('128MB');
    } finally {
      await again.close();
    }
  });

  it('refuses a directory that holds other files, and leaves them as they were', async () => {
    const dir = `${root}/taken`;
    mkdirSync(dir);
    writeFileSync(`${dir}/notes.txt`, 'mine');
    await expect(openPglite(dir)).rejects.toThrow(/holds files but no database/);
    expect(readdirSync(dir)).toEqual(['notes.txt']);
    expect(readdirSync(root).filter((name) => name.startsWith('taken'))).toEqual(['taken']);
  });

  // The embedded database's own property: once, in the PGlite half of the suite.
  it.skipIf(onPostgres)(
    'runs a first start and its migrations with the SQL parser kept off V8’s optimising compiler',
    () => {
      // Before: V8 compiled PostgreSQL's parser a second time during the migrations, with ~600 MiB of
      // compiler memory, and this process peaked at about 770 MiB (src/kernel/database/pglite-module.ts).
      const dir = `${root}/first-start`;
      const out = execFileSync(process.execPath, ['test/fixtures/pglite-first-start.ts', dir], {
        encoding: 'utf8',
      });
      const { parserPinned, count, peakMib } = JSON.parse(out);
      expect(parserPinned).toBe(true);
      expect(count).toBe(2000);
      expect(peakMib).toBeLessThan(500);
    },
  );
});
