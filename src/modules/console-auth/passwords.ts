// Console passwords: argon2id through @node-rs/argon2 with its defaults (m=19 MiB, t=2, p=1, OWASP's
// minimum), 12 to 128 characters. Only the hash (PHC string, salt included) is stored.
import { hash, verify } from '@node-rs/argon2';
import { invalid } from '../../kernel/http/errors.ts';

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 128;

export function checkPassword(password: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX)
    throw invalid('password', `must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters long`);
}

/** The argon2id hash of an acceptable password (400 for one too short or too long). */
export async function hashPassword(password: string): Promise<string> {
  checkPassword(password);
  return hash(password);
}

// A hash no password matches in practice, verified against when the email has no login, so that an
// unknown email costs the same time as a wrong password and the answer's timing tells nothing.
let dummy: Promise<string> | null = null;

/** Makes the dummy hash ahead of the first sign-in (the server calls it at start), so even that one is timed alike. */
export function prepareDummyHash(): void {
  dummy ??= hash('not a password: only for equal timing of unknown emails');
}

/** Whether `password` is the one of `stored`; with no stored hash, spends the same time and says no. */
export async function passwordMatches(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    prepareDummyHash();
    await verify(await dummy!, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
