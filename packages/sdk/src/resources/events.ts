import { EventStream, type EventStreamOptions } from '../event-stream.ts';
import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type CallOptions, type Query, Resource } from './base.ts';

// The account's events: the past ones (as long as the server keeps them) and the live stream.
const P = '/api/v1/public/events';

export class Events extends Resource {
  /** Past events, newest first; filter by `type` (`message.*`), `since` and `until`. */
  list(query?: Query<typeof P>, opts?: CallOptions): PageIterator<ItemOf<typeof P>> {
    return this.paginate(P, query, undefined, opts);
  }
  get(id: string, opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/events/{id}', { params: { id }, ...opts });
  }
  /**
   * Events as they happen: `for await (const event of tidings.events.stream({types: 'message.*'}))`.
   * Reconnects with Last-Event-ID after a dropped connection, so none is missed or repeated.
   */
  stream(options?: EventStreamOptions): EventStream {
    return new EventStream(this.t, options);
  }
}
