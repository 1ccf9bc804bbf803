import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const P = '/api/v1/public/conversations';
const ONE = '/api/v1/public/conversations/{id}';
const MESSAGES = '/api/v1/public/conversations/{id}/messages';
const NOTES = '/api/v1/public/conversations/{id}/notes';
const LABELS = '/api/v1/public/conversations/{id}/labels';
const SNOOZE = '/api/v1/public/conversations/{id}/snooze';

export class Conversations extends Resource {
  get(id: string, opts?: CallOptions) {
    return this.t.request('get', ONE, { params: { id }, ...opts });
  }
  list(query?: Query<typeof P>, opts?: CallOptions): PageIterator<ItemOf<typeof P>> {
    return this.paginate(P, query, undefined, opts);
  }
  delete(id: string, opts?: CallOptions) {
    return this.t.request('delete', ONE, { params: { id }, ...opts });
  }
  /** The conversation's messages, newest first. */
  messages(
    id: string,
    query?: Query<typeof MESSAGES>,
    opts?: CallOptions,
  ): PageIterator<ItemOf<typeof MESSAGES>> {
    return this.paginate(MESSAGES, query, { id }, opts);
  }
  reply(id: string, body: Body<'post', typeof MESSAGES>, opts?: CallOptions) {
    return this.t.request('post', MESSAGES, { params: { id }, body, ...opts });
  }
  assign(id: string, body: Body<'post', '/api/v1/public/conversations/{id}/assign'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/conversations/{id}/assign', {
      params: { id },
      body,
      ...opts,
    });
  }
  close(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/conversations/{id}/close', { params: { id }, ...opts });
  }
  reopen(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/conversations/{id}/reopen', { params: { id }, ...opts });
  }
  /** Leaves a private note (never sent to the customer); `mentions` tells those members. */
  addNote(id: string, body: Body<'post', typeof NOTES>, opts?: CallOptions) {
    return this.t.request('post', NOTES, { params: { id }, body, ...opts });
  }
  /** The conversation's notes, newest first. */
  notes(id: string, query?: Query<typeof NOTES>, opts?: CallOptions): PageIterator<ItemOf<typeof NOTES>> {
    return this.paginate(NOTES, query, { id }, opts);
  }
  addLabels(id: string, body: Body<'post', typeof LABELS>, opts?: CallOptions) {
    return this.t.request('post', LABELS, { params: { id }, body, ...opts });
  }
  removeLabel(id: string, label: string, opts?: CallOptions) {
    return this.t.request('delete', '/api/v1/public/conversations/{id}/labels/{label}', {
      params: { id, label },
      ...opts,
    });
  }
  /** Hides it from the open list until `until` (or the customer's next message); `until: null` wakes it. */
  snooze(id: string, body: Body<'post', typeof SNOOZE>, opts?: CallOptions) {
    return this.t.request('post', SNOOZE, { params: { id }, body, ...opts });
  }
}
