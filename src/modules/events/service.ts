// Reading an account's events: the list's filters, and where a stream starts.

import type { Database } from '../../kernel/database/db.ts';
import { invalid, notFound } from '../../kernel/http/errors.ts';
import { filterProblem } from '../../kernel/outbox/events.ts';
import { idAt } from '../../kernel/values/ids.ts';
import { type EventRow, findEvent } from './repo.ts';
import type { StreamStart } from './stream.ts';
import type { Visible } from './visibility.ts';

const EVENT_ID = /^evt_[0-9a-z]{26}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

/** Filters are an exact type, `family.*` or `*`; anything else is refused naming the field. */
export function checkFilter(field: string, filter: string): string {
  const problem = filterProblem(filter);
  if (problem) throw invalid(field, `${problem}; use an event type, "family.*" or "*"`);
  return filter;
}

/** The `types` of a stream: a comma-separated list of filters; null (all events) when left out. */
export function streamFilters(types: string | undefined): string[] | null {
  if (types === undefined) return null;
  const filters = types
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (filters.length === 0) throw invalid('types', 'names no filter');
  if (filters.length > 50) throw invalid('types', 'has more than 50 filters');
  for (const f of filters) checkFilter('types', f);
  return filters.includes('*') ? null : filters;
}

/**
 * Where a stream starts: after an event id (Last-Event-ID, or `since`), at a time (`since`), or
 * now. Ids carry the time they were made by the process clock, so "now" is that clock's.
 */
export function streamStart(
  lastEventId: string | undefined,
  since: string | undefined,
  wallClock: number = Date.now(),
): StreamStart {
  const field = lastEventId ? 'Last-Event-ID' : 'since';
  const from = lastEventId || since;
  if (!from) return { floor: idAt('event', new Date(wallClock)), after: null };
  if (EVENT_ID.test(from)) return { floor: from, after: from };
  const time = DATE_TIME.test(from) ? Date.parse(from) : Number.NaN;
  if (Number.isNaN(time)) throw invalid(field, 'is neither an event id (evt_…) nor a date-time');
  return { floor: idAt('event', new Date(time)), after: null };
}

/** One event the caller sees; one it may not see is not found, as another tenant's. */
export async function getEvent(
  db: Database,
  accountId: string,
  id: string,
  visible: Visible,
): Promise<EventRow> {
  const row = await findEvent(db, accountId, id, visible);
  if (!row) throw notFound('event');
  return row;
}
