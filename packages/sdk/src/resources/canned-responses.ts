import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const P = '/api/v1/public/canned-responses';
const ONE = '/api/v1/public/canned-responses/{id}';
const RENDER = '/api/v1/public/canned-responses/{id}/render';

/** Saved replies the inbox offers on `/shortcut`, rendered for the customer before they are sent. */
export class CannedResponses extends Resource {
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
  delete(id: string, opts?: CallOptions) {
    return this.t.request('delete', ONE, { params: { id }, ...opts });
  }
  /** The body to send in this conversation (nothing is sent), with what did not render. */
  render(id: string, body: Body<'post', typeof RENDER>, opts?: CallOptions) {
    return this.t.request('post', RENDER, { params: { id }, body, ...opts });
  }
}
