import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const RUNS = '/api/v1/public/rules/{id}/runs';

const P = '/api/v1/public/rules';
const ONE = '/api/v1/public/rules/{id}';

/** Automation rules: a trigger, conditions and actions. */
export class Rules extends Resource {
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
  /** The rule's runs, newest first. */
  runs(id: string, query?: Query<typeof RUNS>, opts?: CallOptions): PageIterator<ItemOf<typeof RUNS>> {
    return this.paginate(RUNS, query, { id }, opts);
  }
  /** Evaluates the rule against a sample event without acting. */
  test(id: string, body: Body<'post', '/api/v1/public/rules/{id}/test'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/rules/{id}/test', { params: { id }, body, ...opts });
  }
}
