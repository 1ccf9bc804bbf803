// Failed sign-ins are counted per client address (10 in 15 minutes) and per email (5 in 15 minutes),
// in the same rate-limiter-flexible store as the API's limits (this process, or Redis for all).
// Past either, sign-in answers 429 with Retry-After until the window ends, right password or not.
// A success clears its email's count (its owner got in) but not its address's: otherwise one valid
// login would let an address reset its own count between guesses at other emails.

import { ApiError } from '../../kernel/errors.ts';
import type { RateLimits } from '../../kernel/limits.ts';

const WINDOW_SECONDS = 15 * 60;
const PER_ADDRESS = 10;
const PER_EMAIL = 5;

export async function checkLoginLimits(limits: RateLimits, address: string, email: string): Promise<void> {
  const wait = Math.max(
    await limits.blockedFor('login-address', address, PER_ADDRESS, WINDOW_SECONDS),
    await limits.blockedFor('login-email', email, PER_EMAIL, WINDOW_SECONDS),
  );
  if (wait === 0) return;
  const seconds = Math.max(1, Math.ceil(wait / 1000));
  throw new ApiError('RATE_LIMITED', `Too many failed sign-ins. Retry after ${seconds} second(s).`, {
    headers: { 'retry-after': String(seconds) },
  });
}

export async function noteLoginFailure(limits: RateLimits, address: string, email: string): Promise<void> {
  await limits.fail('login-address', address, PER_ADDRESS, WINDOW_SECONDS);
  await limits.fail('login-email', email, PER_EMAIL, WINDOW_SECONDS);
}

export async function noteLoginSuccess(limits: RateLimits, email: string): Promise<void> {
  await limits.clear('login-email', email, PER_EMAIL, WINDOW_SECONDS);
}
