// Micro-benchmark: what the in-process per-second limiter costs a call, the sliding log
// (RateLimits, src/kernel/access/sliding-log.ts) beside the fixed window it replaced (rate-limiter-flexible's
// RateLimiterMemory, called as RateLimits called it), in the same run. Not part of `npm run bench`.
//   node bench/rate-limiter-cost.ts
// Admitted: 5,000 accounts in turn, 200 calls each (all admitted); refused: one account at 10 a
// second, nearly every call refused. ns per consume, as the request path awaits it.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimits } from '../src/kernel/access/rate-limits.ts';

const CALLS = 1_000_000;

// The fixed window as RateLimits used it before: one limiter per budget size, a refusal thrown.
const windows = new Map<number, RateLimiterMemory>();
async function fixedWindow(key: string, perSecond: number): Promise<boolean> {
  let limiter = windows.get(perSecond);
  if (!limiter) {
    limiter = new RateLimiterMemory({ points: perSecond, duration: 1, keyPrefix: `rl:${perSecond}` });
    windows.set(perSecond, limiter);
  }
  try {
    await limiter.consume(key, 1);
    return true;
  } catch (err) {
    if (err instanceof RateLimiterRes) return false;
    throw err;
  }
}

const sliding = new RateLimits(null);
async function slidingLog(key: string, perSecond: number): Promise<boolean> {
  const pending = sliding.consume(key, perSecond);
  const decision = pending instanceof Promise ? await pending : pending;
  return decision.allowed;
}

const accounts = Array.from({ length: 5000 }, (_, i) => `account:${i}`);

async function measure(name: string, consume: typeof slidingLog, key: (i: number) => string, limit: number) {
  let admitted = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) if (await consume(key(i), limit)) admitted++;
  const ns = Number(process.hrtime.bigint() - started) / CALLS;
  console.log(
    `  ${name.padEnd(28)} ${ns.toFixed(0).padStart(5)} ns a call  (${admitted} of ${CALLS} admitted)`,
  );
  return ns;
}

for (const round of [1, 2]) {
  console.log(`round ${round}${round === 1 ? ' (warm-up)' : ''}`);
  const a = await measure('admitted, fixed window', fixedWindow, (i) => accounts[i % 5000]!, 500);
  const b = await measure('admitted, sliding log', slidingLog, (i) => accounts[i % 5000]!, 500);
  const c = await measure('refused, fixed window', fixedWindow, () => 'account:busy', 10);
  const d = await measure('refused, sliding log', slidingLog, () => 'account:busy', 10);
  console.log(`  sliding ÷ fixed: admitted ${(b / a).toFixed(2)}×, refused ${(d / c).toFixed(2)}×`);
  // Next round on fresh accounts: the previous round's were admitted 200 times each.
  for (let i = 0; i < accounts.length; i++) accounts[i] = `account:${round}:${i}`;
}
