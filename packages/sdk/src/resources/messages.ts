import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const P = '/api/v1/public/messages';

export class Messages extends Resource {
  /** Sends a message (text, template, media, interactive…); answers it as queued (scheduled with `sendAt`). */
  send(body: Body<'post', typeof P>, opts?: CallOptions) {
    return this.t.request('post', P, { body, ...opts });
  }
  /** What a send would cost, without sending. */
  estimate(body: Body<'post', '/api/v1/public/messages/estimate'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/messages/estimate', { body, ...opts });
  }
  get(id: string, opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/messages/{id}', { params: { id }, ...opts });
  }
  list(query?: Query<typeof P>, opts?: CallOptions): PageIterator<ItemOf<typeof P>> {
    return this.paginate(P, query, undefined, opts);
  }
  /** Marks a customer's message read (optionally with the typing indicator). */
  markRead(id: string, body: Body<'post', '/api/v1/public/messages/{id}/read'> = {}, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/messages/{id}/read', { params: { id }, body, ...opts });
  }
  /** Cancels a scheduled message (sent with `sendAt`) before it goes; 409 once it went. */
  cancel(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/messages/{id}/cancel', { params: { id }, ...opts });
  }
  /** The media attached to a message. */
  media(id: string, opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/messages/{id}/media', { params: { id }, ...opts });
  }
}
