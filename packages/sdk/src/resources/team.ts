import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const P = '/api/v1/public/team/members';
const ONE = '/api/v1/public/team/members/{id}';

/** The account's team members (who conversations are assigned to). */
export class Team extends Resource {
  create(body: Body<'post', typeof P>, opts?: CallOptions) {
    return this.t.request('post', P, { body, ...opts });
  }
  get(id: string, opts?: CallOptions) {
    return this.t.request('get', ONE, { params: { id }, ...opts });
  }
  list(query?: Query<typeof P>, opts?: CallOptions): PageIterator<ItemOf<typeof P>> {
    return this.paginate(P, query, undefined, opts);
  }
  /** Gives the member a console login: a one-time invitation link, shown once. */
  invite(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/team/members/{id}/invitation', { params: { id }, ...opts });
  }
  /** Sets a member's availability (`online`, `away`, `offline`); an agent's session, its own only. */
  update(id: string, body: Body<'patch', typeof ONE>, opts?: CallOptions) {
    return this.t.request('patch', ONE, { params: { id }, body, ...opts });
  }
  delete(id: string, opts?: CallOptions) {
    return this.t.request('delete', ONE, { params: { id }, ...opts });
  }
}
