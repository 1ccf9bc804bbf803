import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const RECIPIENTS = '/api/v1/public/campaigns/{id}/recipients';

const P = '/api/v1/public/campaigns';
const ONE = '/api/v1/public/campaigns/{id}';

/** Broadcast campaigns: one template to an audience, paced. */
export class Campaigns extends Resource {
  create(body: Body<'post', typeof P>, opts?: CallOptions) {
    return this.t.request('post', P, { body, ...opts });
  }
  get(id: string, opts?: CallOptions) {
    return this.t.request('get', ONE, { params: { id }, ...opts });
  }
  list(query?: Query<typeof P>, opts?: CallOptions): PageIterator<ItemOf<typeof P>> {
    return this.paginate(P, query, undefined, opts);
  }
  update(id: string, body: Body<'patch', typeof ONE>, opts?: CallOptions) {
    return this.t.request('patch', ONE, { params: { id }, body, ...opts });
  }
  replace(id: string, body: Body<'put', typeof ONE>, opts?: CallOptions) {
    return this.t.request('put', ONE, { params: { id }, body, ...opts });
  }
  delete(id: string, opts?: CallOptions) {
    return this.t.request('delete', ONE, { params: { id }, ...opts });
  }
  estimate(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/campaigns/{id}/estimate', { params: { id }, ...opts });
  }
  start(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/campaigns/{id}/start', { params: { id }, ...opts });
  }
  pause(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/campaigns/{id}/pause', { params: { id }, ...opts });
  }
  resume(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/campaigns/{id}/resume', { params: { id }, ...opts });
  }
  cancel(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/campaigns/{id}/cancel', { params: { id }, ...opts });
  }
  recipients(
    id: string,
    query?: Query<typeof RECIPIENTS>,
    opts?: CallOptions,
  ): PageIterator<ItemOf<typeof RECIPIENTS>> {
    return this.paginate(RECIPIENTS, query, { id }, opts);
  }
}
