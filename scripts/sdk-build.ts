// Builds the SDK (packages/sdk → packages/sdk/dist) with the workspace's own TypeScript. With
// --if-stale (before `npm run example`, and the SDK tests' global setup) it builds only when dist
// is missing or older than a source: the examples and the SDK's tests import the built package, as
// users do, so neither ever runs a stale build.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SDK_DIR = fileURLToPath(new URL('../packages/sdk', import.meta.url));

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** True when dist/index.js is missing or older than a source or the tsconfig. */
export function sdkStale(): boolean {
  const built = join(SDK_DIR, 'dist/index.js');
  if (!existsSync(built)) return true;
  const sources = Math.max(newest(join(SDK_DIR, 'src')), statSync(join(SDK_DIR, 'tsconfig.json')).mtimeMs);
  return statSync(built).mtimeMs < sources;
}

export function buildSdk(): void {
  const tsc = createRequire(join(SDK_DIR, 'package.json')).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: SDK_DIR, stdio: 'inherit' });
}

/** Builds the SDK when it is stale; true when it did. */
export function ensureSdkBuilt(): boolean {
  if (!sdkStale()) return false;
  buildSdk();
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (!process.argv.includes('--if-stale')) buildSdk();
  else if (ensureSdkBuilt()) process.stdout.write('SDK built: packages/sdk/dist\n');
}
