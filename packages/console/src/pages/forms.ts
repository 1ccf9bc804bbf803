// What the sign-in forms share.
import type { FormEvent } from 'react';

export const PASSWORD_RULE = '12 to 128 characters.';

/** The named text fields of a submitted form. */
export function formValues(event: FormEvent<HTMLFormElement>): Record<string, string> {
  event.preventDefault();
  const out: Record<string, string> = {};
  for (const [k, v] of new FormData(event.currentTarget)) if (typeof v === 'string') out[k] = v;
  return out;
}
