// The SDK's tests import the built package (dist/), as users do: build it first when it is missing
// or older than a source file, so `vitest run` on its own never tests a stale build.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdkDir = join(dirname(fileURLToPath(import.meta.url)), '..');

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

export default function setup(): void {
  const built = join(sdkDir, 'dist/index.js');
  const sources = Math.max(newest(join(sdkDir, 'src')), statSync(join(sdkDir, 'tsconfig.json')).mtimeMs);
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return;
  try {
    // The workspace's own TypeScript (the one its `build` script uses).
    const tsc = createRequire(join(sdkDir, 'package.json')).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: sdkDir, stdio: 'inherit' });
  } catch (err) {
    // Only the SDK's tests need the build: the rest of the suite runs, and those fail on their import.
    process.stderr.write(
      `\n*** @tidings/sdk could not be built (npm ci, then npm run sdk:build): ${err}\n\n`,
    );
  }
}
