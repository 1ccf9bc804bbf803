import type { PageIterator } from '../pagination.ts';
import type { ItemOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';

const TRANSACTIONS = '/api/v1/public/account/wallet/transactions';

/** The account the key belongs to (or the forAccount one): plan, wallet, usage, channels. */
export class Account extends Resource {
  get(opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/account', { ...opts });
  }
  /** The month's usage. */
  usage(opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/account/usage', { ...opts });
  }
  wallet(opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/account/wallet', { ...opts });
  }
  /** Wallet settings (the low-balance threshold). */
  updateWallet(body: Body<'patch', '/api/v1/public/account/wallet'>, opts?: CallOptions) {
    return this.t.request('patch', '/api/v1/public/account/wallet', { body, ...opts });
  }
  transactions(
    query?: Query<typeof TRANSACTIONS>,
    opts?: CallOptions,
  ): PageIterator<ItemOf<typeof TRANSACTIONS>> {
    return this.paginate(TRANSACTIONS, query, undefined, opts);
  }
  /** What settling charges against Meta's billing moved over a period, per price-book rule. */
  pricingAdjustments(query?: { from?: string; to?: string }, opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/account/pricing/adjustments', { query, ...opts });
  }
  /** Business hours, the away message and the greeting (`enabled: false` when never set). */
  getBusinessHours(opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/account/business-hours', { ...opts });
  }
  setBusinessHours(body: Body<'put', '/api/v1/public/account/business-hours'>, opts?: CallOptions) {
    return this.t.request('put', '/api/v1/public/account/business-hours', { body, ...opts });
  }
  /** The satisfaction survey sent when a conversation closes (`enabled: false` when never set). */
  getCsat(opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/account/csat', { ...opts });
  }
  setCsat(body: Body<'put', '/api/v1/public/account/csat'>, opts?: CallOptions) {
    return this.t.request('put', '/api/v1/public/account/csat', { body, ...opts });
  }
  /** The messaging channel (sandbox or WhatsApp Cloud). */
  getChannel(opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/account/channel', { ...opts });
  }
  setChannel(body: Body<'put', '/api/v1/public/account/channel'>, opts?: CallOptions) {
    return this.t.request('put', '/api/v1/public/account/channel', { body, ...opts });
  }
  /** The business profile customers see (read from Meta; the sandbox's own on the sandbox). */
  getChannelProfile(opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/account/channel/profile', { ...opts });
  }
  /** Changes the business profile: about, address, description, email, websites, vertical, photo. */
  updateChannelProfile(body: Body<'patch', '/api/v1/public/account/channel/profile'>, opts?: CallOptions) {
    return this.t.request('patch', '/api/v1/public/account/channel/profile', { body, ...opts });
  }
  /** Disconnects the WhatsApp number (released at Meta where Tidings registered it); history stays. */
  disconnectChannel(opts?: CallOptions) {
    return this.t.request('delete', '/api/v1/public/account/channel', { ...opts });
  }
  /** What launching Meta's Embedded Signup needs (the partner's app), and the last onboarding's progress. */
  getEmbeddedSignup(opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/account/channel/embedded-signup', { ...opts });
  }
  /** Connects the number a client chose in Embedded Signup: the popup's code, WABA id and number id. */
  completeEmbeddedSignup(
    body: Body<'post', '/api/v1/public/account/channel/embedded-signup'>,
    opts?: CallOptions,
  ) {
    return this.t.request('post', '/api/v1/public/account/channel/embedded-signup', { body, ...opts });
  }
  getVoiceChannel(opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/account/voice-channel', { ...opts });
  }
  setVoiceChannel(body: Body<'put', '/api/v1/public/account/voice-channel'>, opts?: CallOptions) {
    return this.t.request('put', '/api/v1/public/account/voice-channel', { body, ...opts });
  }
}
