import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const ENROLLMENTS = '/api/v1/public/sequences/{id}/enrollments';
const ENROLLMENT = '/api/v1/public/sequences/{id}/enrollments/{enrollmentId}';

/** The enrollments of a sequence's contacts. */
export class Enrollments extends Resource {
  create(sequenceId: string, body: Body<'post', typeof ENROLLMENTS>, opts?: CallOptions) {
    return this.t.request('post', ENROLLMENTS, { params: { id: sequenceId }, body, ...opts });
  }
  get(sequenceId: string, enrollmentId: string, opts?: CallOptions) {
    return this.t.request('get', ENROLLMENT, { params: { id: sequenceId, enrollmentId }, ...opts });
  }
  list(
    sequenceId: string,
    query?: Query<typeof ENROLLMENTS>,
    opts?: CallOptions,
  ): PageIterator<ItemOf<typeof ENROLLMENTS>> {
    return this.paginate(ENROLLMENTS, query, { id: sequenceId }, opts);
  }
  cancel(sequenceId: string, enrollmentId: string, opts?: CallOptions) {
    return this.t.request('delete', ENROLLMENT, { params: { id: sequenceId, enrollmentId }, ...opts });
  }
}

const P = '/api/v1/public/sequences';
const ONE = '/api/v1/public/sequences/{id}';

/** Drip sequences: timed steps a contact is enrolled in. */
export class Sequences extends Resource {
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
    return this.t.request('post', '/api/v1/public/sequences/{id}/publish', { params: { id }, ...opts });
  }
  pause(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/sequences/{id}/pause', { params: { id }, ...opts });
  }
  resume(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/sequences/{id}/resume', { params: { id }, ...opts });
  }
  archive(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/sequences/{id}/archive', { params: { id }, ...opts });
  }
  readonly enrollments = new Enrollments(this.t);
}
