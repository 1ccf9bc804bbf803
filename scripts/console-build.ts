// Builds the console (packages/console → packages/console/dist) with Vite. With --if-stale (the
// `prestart` step, and the browser tests' global setup) it builds only when dist is missing or
// older than a source of the console or of the SDK it bundles: a stat of a few dozen files when up
// to date.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CONSOLE_DIR = join(ROOT, 'packages/console');
export const CONSOLE_DIST = join(CONSOLE_DIR, 'dist');
const SOURCES = [
  join(CONSOLE_DIR, 'src'),
  join(CONSOLE_DIR, 'public'),
  join(CONSOLE_DIR, 'index.html'),
  join(CONSOLE_DIR, 'vite.config.ts'),
  join(CONSOLE_DIR, 'package.json'),
  join(ROOT, 'packages/sdk/src'),
];

function newest(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

/** True when dist/index.html is missing or older than a source. */
export function consoleStale(): boolean {
  const built = join(CONSOLE_DIST, 'index.html');
  if (!existsSync(built)) return true;
  const builtAt = statSync(built).mtimeMs;
  return SOURCES.some((source) => newest(source) > builtAt);
}

export function buildConsole(): void {
  // The workspace's own Vite, run by this Node.
  const manifest = createRequire(join(CONSOLE_DIR, 'package.json')).resolve('vite/package.json');
  const vite = join(dirname(manifest), 'bin/vite.js');
  execFileSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
    cwd: CONSOLE_DIR,
    stdio: 'inherit',
  });
}

export function ensureConsoleBuilt(): boolean {
  if (!consoleStale()) return false;
  buildConsole();
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (!process.argv.includes('--if-stale')) buildConsole();
  else {
    // Before `npm start`: a console that cannot be built (an install without dev dependencies, so
    // no Vite) must not stop the API from starting; /console then answers 503 saying so.
    try {
      if (ensureConsoleBuilt()) process.stdout.write('console built: packages/console/dist\n');
    } catch (err) {
      process.stderr.write(
        `\n*** the console could not be built (${err instanceof Error ? err.message : err}); the API starts ` +
          'without it: /console answers 503 until `npm run console:build` succeeds\n\n',
      );
    }
  }
}
