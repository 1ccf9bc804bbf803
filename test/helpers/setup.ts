// The usual start of a test file: its own database, an app on it, and (optionally) the bootstrapped
// partner, made before the file's tests and dropped after them.
import { afterAll, beforeAll, expect } from 'vitest';
import type { App } from '../../src/app.ts';
import { bootstrapPartner, type Partner, type Reply } from './client.ts';
import { createTestApp, createTestDatabase, type TestAppOptions, type TestDatabase } from './harness.ts';

export interface TestEnv {
  tdb: TestDatabase;
  app: App;
  partner: Partner;
}

export function useTestApp(options: TestAppOptions & { bootstrap?: boolean } = {}): TestEnv {
  const env = {} as TestEnv;
  beforeAll(async () => {
    env.tdb = await createTestDatabase();
    env.app = await createTestApp(env.tdb.db, options);
    if (options.bootstrap !== false) env.partner = await bootstrapPartner(env.app);
  });
  afterAll(async () => {
    await env.app?.close();
    await env.tdb?.drop();
  });
  return env;
}

/** Asserts a documented error answer: status, code, and the full error body shape. */
export function expectError(res: Reply, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({
    error: {
      code,
      message: expect.any(String),
      docs: `http://tidings.test/docs/errors#${code}`,
      requestId: res.headers['x-request-id'],
      ...(res.body.error?.details ? { details: res.body.error.details } : {}),
      ...(res.body.error?.detailsOmitted ? { detailsOmitted: res.body.error.detailsOmitted } : {}),
    },
  });
}
