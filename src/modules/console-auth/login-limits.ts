// Sign-in attempts are counted per client address (10 in 15 minutes) and per email (5 in 15 minutes),
// in the same rate-limiter-flexible store as the API's limits (this process, or Redis for all).
// Each attempt is taken from both windows BEFORE its password is checked: checking the count first
// and adding the failure after the slow hash let every attempt of a burst see the same count (60 at
// once were all checked). Past either window, sign-in answers 429 with Retry-After until it ends,
// right password or not. What counts in the end is failures:
// - a success gives its address attempt back and clears its email's window (its owner got in), but
//   only its own attempt of the address: otherwise one valid login would let an address reset its
//   count between guesses at other emails;
// - an attempt the email's window refuses gives its address attempt back (no password was checked:
//   guesses at a locked email must not lock out everyone behind the same address).

import type { RateLimits } from '../../kernel/access/rate-limits.ts';
import { ApiError } from '../../kernel/http/errors.ts';

const WINDOW_SECONDS = 15 * 60;
const PER_ADDRESS = 10;
const PER_EMAIL = 5;

function refuse(waitMs: number): never {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  throw new ApiError('RATE_LIMITED', `Too many failed sign-ins. Retry after ${seconds} second(s).`, {
    headers: { 'retry-after': String(seconds) },
  });
}

/** Takes one attempt for the address and the email, or answers 429 when either window is full. */
export async function takeLoginAttempt(limits: RateLimits, address: string, email: string): Promise<void> {
  const addressWait = await limits.take('login-address', address, PER_ADDRESS, WINDOW_SECONDS);
  if (addressWait > 0) refuse(addressWait);
  const emailWait = await limits.take('login-email', email, PER_EMAIL, WINDOW_SECONDS);
  if (emailWait === 0) return;
  await limits.giveBack('login-address', address, PER_ADDRESS, WINDOW_SECONDS);
  refuse(emailWait);
}

/** The attempt succeeded: it was no failure of the address, and the email's window starts over. */
export async function noteLoginSuccess(limits: RateLimits, address: string, email: string): Promise<void> {
  await limits.giveBack('login-address', address, PER_ADDRESS, WINDOW_SECONDS);
  await limits.clear('login-email', email, PER_EMAIL, WINDOW_SECONDS);
}
