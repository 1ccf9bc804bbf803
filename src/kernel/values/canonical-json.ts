// JSON with object keys sorted: the same value whatever the order its keys were written in. A
// request body's fingerprint is taken over it, and a value read back from a jsonb column (which
// PostgreSQL stores with its keys reordered) is compared with a new one through it.

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
