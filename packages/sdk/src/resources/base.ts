// What every resource shares: the transport, and list() turning a list operation into a
// PageIterator that moves the cursor.
import type { Transport } from '../http.ts';
import { type Page, PageIterator } from '../pagination.ts';
import type { BodyOf, CallOptions, HttpMethod, ItemOf, ListQuery, PathsFor } from '../types.ts';

export type { CallOptions };
/** The JSON body of an operation, named by method and path. */
export type Body<M extends HttpMethod, P extends PathsFor<M>> = NonNullable<BodyOf<M, P>>;
export type Query<P extends PathsFor<'get'>> = ListQuery<P>;

export abstract class Resource {
  protected readonly t: Transport;
  constructor(transport: Transport) {
    this.t = transport;
  }

  protected paginate<P extends PathsFor<'get'>>(
    path: P,
    query: ListQuery<P> | undefined,
    params?: Record<string, string>,
    options?: CallOptions,
  ): PageIterator<ItemOf<P>> {
    return new PageIterator<ItemOf<P>>(
      (cursor) =>
        this.t.send('get', path, {
          ...options,
          params,
          query: { ...(query as Record<string, unknown>), cursor },
        }) as Promise<Page<ItemOf<P>>>,
      query?.cursor,
    );
  }
}
