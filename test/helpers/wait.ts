// Waiting in tests: a pause, and probing until something holds.

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Probes until `ok` holds or the time is up; answers the last value (the caller asserts on it). */
export async function eventually<T>(
  probe: () => Promise<T>,
  ok: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > deadline) return value;
    await sleep(50);
  }
}

/** Waits until `done()` holds, or fails with what `describe()` says after `ms`. */
export async function until(
  done: () => boolean | Promise<boolean>,
  ms: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${describe()}`);
    await sleep(20);
  }
}
