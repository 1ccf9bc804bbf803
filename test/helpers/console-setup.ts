// The console's tests (serving, the browser) need packages/console/dist: build it first when it is
// missing or older than its sources (the same check as `npm start`'s prestart step).
import { ensureConsoleBuilt } from '../../scripts/console-build.ts';

export default function setup(): void {
  try {
    ensureConsoleBuilt();
  } catch (err) {
    // Only the console's tests need the build: the rest of the suite runs, and those fail.
    process.stderr.write(`\n*** the console could not be built (npm run console:build): ${err}\n\n`);
  }
}
