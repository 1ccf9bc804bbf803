// Reading what Meta sent: JSON of unknown shape, checked value by value.

export type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The objects of a list (anything else in it, or a non-list, is passed over). */
export function records(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** Meta sends timestamps as strings of Unix seconds. */
export function unixSeconds(value: unknown): Date | null {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^\d{1,12}$/.test(text)) return null;
  return new Date(Number(text) * 1000);
}
