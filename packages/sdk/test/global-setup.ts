// The SDK's tests import the built package (dist/), as users do: build it first when it is missing
// or older than a source file, so `vitest run` on its own never tests a stale build.
import { ensureSdkBuilt } from '../../../scripts/sdk-build.ts';

export default function setup(): void {
  try {
    ensureSdkBuilt();
  } catch (err) {
    // Only the SDK's tests (and the examples) need the build: the rest of the suite runs, and those
    // fail on their import.
    process.stderr.write(
      `\n*** @tidings/sdk could not be built (npm ci, then npm run sdk:build): ${err}\n\n`,
    );
  }
}
