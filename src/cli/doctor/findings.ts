// What `tidings doctor` reports: one finding per line, its level first, so a reader (or grep) sees
// at once what is wrong and what to do about it.

export type Level = 'ok' | 'warn' | 'fail';

export interface Finding {
  level: Level;
  /** What was checked: config, database, migrations, secrets, redis, public-url, egress… */
  check: string;
  /** What was found, and for warn/fail what to do. */
  says: string;
}

export const ok = (check: string, says: string): Finding => ({ level: 'ok', check, says });
export const warn = (check: string, says: string): Finding => ({ level: 'warn', check, says });
export const fail = (check: string, says: string): Finding => ({ level: 'fail', check, says });

const LABEL: Record<Level, string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

export function formatFinding(f: Finding): string {
  return `${LABEL[f.level]}  ${f.check.padEnd(11)} ${f.says}`;
}

/** The exit code: 1 when anything failed; warnings alone still exit 0. */
export const exitCodeOf = (findings: Finding[]): number => (findings.some((f) => f.level === 'fail') ? 1 : 0);

/** The message of an error, on one line (driver errors carry newlines and codes). */
export function reason(err: unknown): string {
  const e = err as { message?: string; code?: string };
  const text = (e?.message || e?.code || String(err)).split('\n')[0]!;
  return e?.code && !text.includes(e.code) ? `${text} (${e.code})` : text;
}

/** Runs `work`, failing it after `ms`: a check must never hang the doctor. */
export async function within<T>(ms: number, what: string, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
