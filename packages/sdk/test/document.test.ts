// The SDK's types come from packages/sdk/openapi.json through openapi-typescript, its EVENT_TYPES
// through scripts/event-types.ts. These tests fail when the committed document is not the one the
// server serves (run `npm run sdk:generate`), or when the committed generated files are not what
// the generators make of the committed document.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { createTestApp, createTestDatabase, type TestDatabase } from '../../../test/helpers/harness.ts';
import { EVENT_TYPES_PATH, eventTypesModule } from '../scripts/event-types.ts';

const sdkDir = join(dirname(fileURLToPath(import.meta.url)), '..');
// The base URL scripts/export-openapi.ts writes into the committed document.
const COMMITTED_BASE = 'https://tidings.example.com';

let tdb: TestDatabase;
let app: App;
beforeAll(async () => {
  tdb = await createTestDatabase();
  app = await createTestApp(tdb.db);
});
afterAll(async () => {
  await app?.close();
  await tdb?.drop();
});

describe('the SDK document', () => {
  it('is the document the server serves (else: npm run sdk:generate)', () => {
    const served = JSON.stringify(app.swagger(), null, 2).replaceAll(
      app.ctx.config.publicBaseUrl,
      COMMITTED_BASE,
    );
    const committed = readFileSync(join(sdkDir, 'openapi.json'), 'utf8');
    // Parsed first, so the failure shows which operation differs; then the bytes.
    expect(JSON.parse(committed)).toEqual(JSON.parse(served));
    expect(committed).toBe(`${served}\n`);
  });

  it('gives the committed generated types when generated again', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tidings-sdk-gen-'));
    try {
      // The package's bin (its exports map rewrites .js subpaths, so it is found by its package.json).
      const pkg = createRequire(join(sdkDir, 'package.json')).resolve('openapi-typescript/package.json');
      const cli = join(dirname(pkg), 'bin/cli.js');
      const out = join(dir, 'schema.ts');
      execFileSync(process.execPath, [cli, 'openapi.json', '-o', out], { cwd: sdkDir, stdio: 'pipe' });
      expect(readFileSync(out, 'utf8')).toBe(readFileSync(join(sdkDir, 'src/generated/schema.ts'), 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives the committed event types when generated again: the webhook event’s, in its order', () => {
    const document = JSON.parse(readFileSync(join(sdkDir, 'openapi.json'), 'utf8'));
    expect(eventTypesModule(document)).toBe(readFileSync(EVENT_TYPES_PATH, 'utf8'));
    const { enum: types } =
      document.webhooks.event.post.requestBody.content['application/json'].schema.properties.type;
    expect(readFileSync(EVENT_TYPES_PATH, 'utf8')).toContain(types.map((t: string) => `"${t}"`).join(', '));
  });
});

describe('the built package', () => {
  it('uses nothing but web APIs at runtime (no node: modules, process or Buffer), so it runs outside Node', () => {
    const dist = join(sdkDir, 'dist');
    const files = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'));
    expect(files).toContain('index.js');
    for (const file of files) {
      const code = readFileSync(join(dist, file), 'utf8');
      expect(code, file).not.toMatch(/from ['"]node:|require\(|\bprocess\.|\bBuffer\b/);
    }
    const imports = new Set(
      files.flatMap((f) =>
        [...readFileSync(join(dist, f), 'utf8').matchAll(/from '([^.][^']*)'/g)].map((m) => m[1]),
      ),
    );
    // The one dependency: standardwebhooks (pure JavaScript, bundlers and Deno take it).
    expect([...imports]).toEqual(['standardwebhooks']);
  });
});
