#!/usr/bin/env node
// The `tidings` command. The code is TypeScript run by Node 24's type stripping; when an older Node
// started this file (a system Node 20), it hands over to the Node 24 of the `node` package.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const major = Number(process.versions.node.split('.')[0]);

if (major >= 24) {
  await import(cli);
} else {
  const require = createRequire(import.meta.url);
  const node = require.resolve('node/bin/node');
  const result = spawnSync(node, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
