import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const RUNS = '/api/v1/public/journeys/{id}/runs';
const RUN = '/api/v1/public/journeys/{id}/runs/{runId}';

const P = '/api/v1/public/journeys';
const ONE = '/api/v1/public/journeys/{id}';

/** Journeys: branching automation graphs. */
export class Journeys extends Resource {
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
  publish(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/journeys/{id}/publish', { params: { id }, ...opts });
  }
  pause(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/journeys/{id}/pause', { params: { id }, ...opts });
  }
  archive(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/journeys/{id}/archive', { params: { id }, ...opts });
  }
  /** Starts a run of the journey for a contact. */
  trigger(id: string, body: Body<'post', '/api/v1/public/journeys/{id}/trigger'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/journeys/{id}/trigger', { params: { id }, body, ...opts });
  }
  runs(id: string, query?: Query<typeof RUNS>, opts?: CallOptions): PageIterator<ItemOf<typeof RUNS>> {
    return this.paginate(RUNS, query, { id }, opts);
  }
  getRun(id: string, runId: string, opts?: CallOptions) {
    return this.t.request('get', RUN, { params: { id, runId }, ...opts });
  }
  cancelRun(id: string, runId: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/journeys/{id}/runs/{runId}/cancel', {
      params: { id, runId },
      ...opts,
    });
  }
  stats(id: string, opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/journeys/{id}/stats', { params: { id }, ...opts });
  }
}
