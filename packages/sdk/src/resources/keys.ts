import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const P = '/api/v1/public/keys';

/** The account's own API keys (a live key or an account admin; not a sandbox key, not an agent). */
export class Keys extends Resource {
  /** Creates a key; its text is in the answer this once. */
  create(body: Body<'post', typeof P>, opts?: CallOptions) {
    return this.t.request('post', P, { body, ...opts });
  }
  list(query?: Query<typeof P>, opts?: CallOptions): PageIterator<ItemOf<typeof P>> {
    return this.paginate(P, query, undefined, opts);
  }
  revoke(id: string, opts?: CallOptions) {
    return this.t.request('delete', '/api/v1/public/keys/{id}', { params: { id }, ...opts });
  }
}
