import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

// An account's webhooks (account events).
const P = '/api/v1/public/webhooks';
const ONE = '/api/v1/public/webhooks/{id}';
const DELIVERIES = '/api/v1/public/webhooks/{id}/deliveries';

export class Webhooks extends Resource {
  /** Subscribes a URL to events; the answer shows the signing secret once. */
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
  /** A new signing secret (yours, or generated); the old one keeps signing for a while. */
  rotateSecret(
    id: string,
    body: Body<'post', '/api/v1/public/webhooks/{id}/rotate-secret'> = {},
    opts?: CallOptions,
  ) {
    return this.t.request('post', '/api/v1/public/webhooks/{id}/rotate-secret', {
      params: { id },
      body,
      ...opts,
    });
  }
  /** Sends a test event to the URL. */
  test(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/webhooks/{id}/test', { params: { id }, ...opts });
  }
  /** The delivery attempts of this webhook, newest first. */
  deliveries(
    id: string,
    query?: Query<typeof DELIVERIES>,
    opts?: CallOptions,
  ): PageIterator<ItemOf<typeof DELIVERIES>> {
    return this.paginate(DELIVERIES, query, { id }, opts);
  }
  /**
   * Sends again the past events (created in [since, until), of the given types) this webhook should
   * have had, as new deliveries with the original `webhook-id`: after an outage of the receiver.
   */
  replay(id: string, body: Body<'post', '/api/v1/public/webhooks/{id}/replay'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/webhooks/{id}/replay', { params: { id }, body, ...opts });
  }
  /** Delivers a failed delivery's event again. */
  retryDelivery(id: string, deliveryId: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/webhooks/{id}/deliveries/{deliveryId}/retry', {
      params: { id, deliveryId },
      ...opts,
    });
  }
}

// A partner's webhooks (events of all its accounts).
const PARTNER_P = '/api/v1/public/partner/webhooks';
const PARTNER_ONE = '/api/v1/public/partner/webhooks/{id}';
const PARTNER_DELIVERIES = '/api/v1/public/partner/webhooks/{id}/deliveries';

export class PartnerWebhooks extends Resource {
  /** Subscribes a URL to events; the answer shows the signing secret once. */
  create(body: Body<'post', typeof PARTNER_P>, opts?: CallOptions) {
    return this.t.request('post', PARTNER_P, { body, ...opts });
  }
  get(id: string, opts?: CallOptions) {
    return this.t.request('get', PARTNER_ONE, { params: { id }, ...opts });
  }
  list(query?: Query<typeof PARTNER_P>, opts?: CallOptions): PageIterator<ItemOf<typeof PARTNER_P>> {
    return this.paginate(PARTNER_P, query, undefined, opts);
  }
  update(id: string, body: Body<'patch', typeof PARTNER_ONE>, opts?: CallOptions) {
    return this.t.request('patch', PARTNER_ONE, { params: { id }, body, ...opts });
  }
  delete(id: string, opts?: CallOptions) {
    return this.t.request('delete', PARTNER_ONE, { params: { id }, ...opts });
  }
  /** A new signing secret (yours, or generated); the old one keeps signing for a while. */
  rotateSecret(
    id: string,
    body: Body<'post', '/api/v1/public/partner/webhooks/{id}/rotate-secret'> = {},
    opts?: CallOptions,
  ) {
    return this.t.request('post', '/api/v1/public/partner/webhooks/{id}/rotate-secret', {
      params: { id },
      body,
      ...opts,
    });
  }
  /** Sends a test event to the URL. */
  test(id: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/partner/webhooks/{id}/test', { params: { id }, ...opts });
  }
  /** The delivery attempts of this webhook, newest first. */
  deliveries(
    id: string,
    query?: Query<typeof PARTNER_DELIVERIES>,
    opts?: CallOptions,
  ): PageIterator<ItemOf<typeof PARTNER_DELIVERIES>> {
    return this.paginate(PARTNER_DELIVERIES, query, { id }, opts);
  }
  /**
   * Sends again the past events (created in [since, until), of the given types) this webhook should
   * have had, as new deliveries with the original `webhook-id`: after an outage of the receiver.
   */
  replay(id: string, body: Body<'post', '/api/v1/public/partner/webhooks/{id}/replay'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/partner/webhooks/{id}/replay', {
      params: { id },
      body,
      ...opts,
    });
  }
  /** Delivers a failed delivery's event again. */
  retryDelivery(id: string, deliveryId: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/partner/webhooks/{id}/deliveries/{deliveryId}/retry', {
      params: { id, deliveryId },
      ...opts,
    });
  }
}
