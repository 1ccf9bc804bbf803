// The job queue shares the caller's transaction: a job exists exactly when its change commits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_CHANNEL, Jobs } from '../../src/kernel/jobs/jobs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/harness.ts';

let tdb: TestDatabase;
let jobs: Jobs;
const received: string[] = [];

async function waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  await tdb.db.exec('CREATE TABLE notes (id text PRIMARY KEY)');
  jobs = new Jobs(tdb.db);
  jobs.define<{ note: string }>({
    name: 'test.note',
    handle: async ({ note }) => {
      received.push(note);
    },
  });
  jobs.define<{ ms: number }>({
    name: 'test.slow',
    handle: async ({ ms }) => {
      received.push('slow-started');
      await new Promise((r) => setTimeout(r, ms));
      received.push('slow-done');
    },
  });
  jobs.define<{ note: string }>({
    name: 'test.doomed',
    retryLimit: 1,
    retryDelaySeconds: 1,
    handle: async ({ note }) => {
      received.push(`attempt:${note}`);
      throw new Error('always fails');
    },
    onGiveUp: async ({ note }) => {
      received.push(`gave-up:${note}`);
    },
  });
  await jobs.start();
  await jobs.runWorkers();
});

afterAll(async () => {
  await jobs.stop(2000);
  await tdb.drop();
});

describe('enqueue in the caller transaction', () => {
  it('delivers the job of a committed transaction, with the row it goes with', async () => {
    await tdb.db.transaction(async (tx) => {
      await tx.query('INSERT INTO notes (id) VALUES ($1)', ['committed']);
      await jobs.enqueue(tx, 'test.note', { note: 'committed' });
    });
    await waitFor(() => received.includes('committed'));
    const { rows } = await tdb.db.query('SELECT id FROM notes WHERE id = $1', ['committed']);
    expect(rows).toHaveLength(1);
  });

  it('never delivers the job of a rolled-back transaction, nor keeps its row', async () => {
    await expect(
      tdb.db.transaction(async (tx) => {
        await tx.query('INSERT INTO notes (id) VALUES ($1)', ['rolled-back']);
        await jobs.enqueue(tx, 'test.note', { note: 'rolled-back' });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    // A job enqueued after it is delivered; by then the rolled-back one would have been too.
    await jobs.enqueue(tdb.db, 'test.note', { note: 'marker' });
    await waitFor(() => received.includes('marker'));
    expect(received).not.toContain('rolled-back');
    const { rows } = await tdb.db.query('SELECT id FROM notes WHERE id = $1', ['rolled-back']);
    expect(rows).toHaveLength(0);
  });

  it('gives a job up once its retries are used, and calls onGiveUp once', async () => {
    await jobs.enqueue(tdb.db, 'test.doomed', { note: 'd1' });
    await waitFor(() => received.includes('gave-up:d1'), 20_000);
    expect(received.filter((r) => r === 'attempt:d1')).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 2500));
    expect(received.filter((r) => r === 'gave-up:d1')).toHaveLength(1);
  });

  it('refuses a job of an undefined queue', async () => {
    await expect(jobs.enqueue(tdb.db, 'test.unknown', {})).rejects.toThrow('unknown job');
  });
});

// Last in the file: it stops the queue (afterAll's stop is then a no-op).
describe('graceful stop', () => {
  it('waits for a job in progress to finish', async () => {
    await jobs.enqueue(tdb.db, 'test.slow', { ms: 1500 });
    await waitFor(() => received.includes('slow-started'));
    await jobs.stop(10_000);
    expect(received).toContain('slow-done');
  });
});

describe('wake', () => {
  it('sends a NOTIFY at once, and folds the wake-ups asked for meanwhile into one more', async () => {
    let heard = 0;
    const unlisten = await tdb.db.listen(JOB_CHANNEL, () => {
      heard++;
    });
    try {
      for (let i = 0; i < 20; i++) jobs.wake('test.note');
      await waitFor(() => heard >= 2);
      // Nothing more comes: twenty wake-ups in a burst cost the database two notifications.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(heard).toBe(2);
    } finally {
      await unlisten();
    }
  });
});
