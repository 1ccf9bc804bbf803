import type { PageIterator } from '../pagination.ts';
import type { ItemOf, QueryOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const P = '/api/v1/public/contacts';
const ONE = '/api/v1/public/contacts/{id}';

export class Contacts extends Resource {
  create(body: Body<'post', typeof P>, opts?: CallOptions) {
    return this.t.request('post', P, { body, ...opts });
  }
  get(id: string, opts?: CallOptions) {
    return this.t.request('get', ONE, { params: { id }, ...opts });
  }
  list(query?: Query<typeof P>, opts?: CallOptions): PageIterator<ItemOf<typeof P>> {
    return this.paginate(P, query, undefined, opts);
  }
  /** Changes the fields given. */
  update(id: string, body: Body<'patch', typeof ONE>, opts?: CallOptions) {
    return this.t.request('patch', ONE, { params: { id }, body, ...opts });
  }
  /** Replaces the contact with the body. */
  replace(id: string, body: Body<'put', typeof ONE>, opts?: CallOptions) {
    return this.t.request('put', ONE, { params: { id }, body, ...opts });
  }
  /** Deletes the contact; `{ erase: true }` also erases its personal data from its history, irreversibly. */
  delete(id: string, query?: QueryOf<'delete', typeof ONE>, opts?: CallOptions) {
    return this.t.request('delete', ONE, { params: { id }, query, ...opts });
  }
  tag(id: string, body: Body<'post', '/api/v1/public/contacts/{id}/tags'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/contacts/{id}/tags', { params: { id }, body, ...opts });
  }
  untag(id: string, tag: string, opts?: CallOptions) {
    return this.t.request('delete', '/api/v1/public/contacts/{id}/tags/{tag}', {
      params: { id, tag },
      ...opts,
    });
  }
}
