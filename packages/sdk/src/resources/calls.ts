import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const P = '/api/v1/public/voice/calls';
const ONE = '/api/v1/public/voice/calls/{id}';

/** Outbound voice calls. */
export class Calls extends Resource {
  create(body: Body<'post', typeof P>, opts?: CallOptions) {
    return this.t.request('post', P, { body, ...opts });
  }
  get(id: string, opts?: CallOptions) {
    return this.t.request('get', ONE, { params: { id }, ...opts });
  }
  list(query?: Query<typeof P>, opts?: CallOptions): PageIterator<ItemOf<typeof P>> {
    return this.paginate(P, query, undefined, opts);
  }
  cancel(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/voice/calls/{id}/cancel', { params: { id }, ...opts });
  }
  /** The month's voice usage. */
  usage(opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/voice/usage', { ...opts });
  }
}
