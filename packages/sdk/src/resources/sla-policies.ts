import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, Resource } from './base.ts';

const P = '/api/v1/public/sla-policies';
const ONE = '/api/v1/public/sla-policies/{id}';

/** SLA policies: first response and resolution targets for conversations, by label or team. */
export class SlaPolicies extends Resource {
  create(body: Body<'post', typeof P>, opts?: CallOptions) {
    return this.t.request('post', P, { body, ...opts });
  }
  get(id: string, opts?: CallOptions) {
    return this.t.request('get', ONE, { params: { id }, ...opts });
  }
  /** All of them, in the order they are tried (one page). */
  list(opts?: CallOptions): PageIterator<ItemOf<typeof P>> {
    return this.paginate(P, undefined, undefined, opts);
  }
  update(id: string, body: Body<'patch', typeof ONE>, opts?: CallOptions) {
    return this.t.request('patch', ONE, { params: { id }, body, ...opts });
  }
  delete(id: string, opts?: CallOptions) {
    return this.t.request('delete', ONE, { params: { id }, ...opts });
  }
}
