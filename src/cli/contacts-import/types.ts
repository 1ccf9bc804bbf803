// What the parts of the contacts import share: its limits, its errors and a contact as sent.
export const MAX_CHUNK_SIZE = 1000;
export type Mode = 'upsert' | 'create';

/** A problem with how the command was called: exit code 2, nothing imported. */
export { UsageError } from '../usage-error.ts';

/** A problem that stops an import part-way (the API unreachable, a malformed CSV): exit code 1. */
export class StopError extends Error {
  override name = 'StopError';
}

export interface RowError {
  code: string;
  message: string;
  details?: { field: string; issue: string }[];
}

export interface ContactInput {
  phone?: string;
  name?: string;
  email?: string;
  tags?: string[];
  attributes?: Record<string, string>;
  optedIn?: boolean;
  marketingOptOut?: boolean;
}
