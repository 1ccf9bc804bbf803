// Writes the OpenAPI document the service serves to a file (for linting and publishing), from an
// app built on a throwaway in-memory database.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { buildApp } from '../src/app.ts';
import { makeConfig } from '../src/config.ts';
import { openPglite } from '../src/kernel/database/db.ts';

const out = process.argv[2] ?? 'build/openapi.json';
const db = await openPglite(null);
const app = await buildApp(makeConfig({ logLevel: 'silent', publicBaseUrl: 'https://tidings.example.com' }), {
  db,
  processMetrics: false,
});
await app.ready();
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
await db.close();
process.stdout.write(`wrote ${out}\n`);
