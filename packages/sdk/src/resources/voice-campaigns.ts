import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const CALLS = '/api/v1/public/voice/campaigns/{id}/calls';

const P = '/api/v1/public/voice/campaigns';
const ONE = '/api/v1/public/voice/campaigns/{id}';

/** Voice campaigns: a script called to many contacts. */
export class VoiceCampaigns extends Resource {
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
  start(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/voice/campaigns/{id}/start', { params: { id }, ...opts });
  }
  pause(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/voice/campaigns/{id}/pause', { params: { id }, ...opts });
  }
  resume(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/voice/campaigns/{id}/resume', { params: { id }, ...opts });
  }
  cancel(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/voice/campaigns/{id}/cancel', { params: { id }, ...opts });
  }
  calls(id: string, query?: Query<typeof CALLS>, opts?: CallOptions): PageIterator<ItemOf<typeof CALLS>> {
    return this.paginate(CALLS, query, { id }, opts);
  }
}
