// Ids are TypeIDs: typeid-js must read every id we make, to the same UUIDv7, and ids made one after
// another must sort in the order they were made (pagination and idAt rely on it).
import { TypeID } from 'typeid-js';
import { describe, expect, it } from 'vitest';
import { ID_PREFIXES, idAt, newId, timeOfId } from '../../src/kernel/values/ids.ts';

describe('newId', () => {
  it('makes TypeIDs that typeid-js decodes, with a version-7 UUID of the current time', () => {
    for (const kind of Object.keys(ID_PREFIXES) as (keyof typeof ID_PREFIXES)[]) {
      const before = Date.now();
      const id = newId(kind);
      const parsed = TypeID.fromString(id, ID_PREFIXES[kind]);
      expect(parsed.toString()).toBe(id);
      const uuid = parsed.toUUID();
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const ms = Number.parseInt(uuid.replace(/-/g, '').slice(0, 12), 16);
      expect(ms).toBeGreaterThanOrEqual(before);
      expect(ms).toBeLessThanOrEqual(Date.now());
    }
  });

  it('sorts ids in the order they were made, and after idAt of an earlier time', () => {
    const start = idAt('contact', new Date(Date.now() - 1));
    const ids = Array.from({ length: 20_000 }, () => newId('contact'));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]! > start).toBe(true);
    expect(idAt('contact', new Date(Date.now() + 1)) > ids.at(-1)!).toBe(true);
  });

  it('reads back the millisecond an id was made, and idAt of it sorts at or below the id', () => {
    for (const ms of [0, 1, 1_700_000_000_123, Date.now(), 2 ** 48 - 1]) {
      expect(timeOfId(idAt('message', new Date(ms))).getTime()).toBe(ms);
    }
    const before = Date.now();
    const id = newId('message');
    const made = timeOfId(id).getTime();
    expect(made).toBeGreaterThanOrEqual(before);
    expect(made).toBeLessThanOrEqual(Date.now());
    expect(idAt('message', new Date(made)) <= id).toBe(true);
    expect(idAt('message', new Date(made + 1)) > id).toBe(true);
  });
});
