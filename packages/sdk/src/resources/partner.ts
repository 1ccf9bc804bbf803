// Partner keys (tdg_partner_…): provisioning accounts, their keys and wallets, partner webhooks. To
// act inside one of the partner's accounts, use tidings.forAccount(accountId).
import type { PageIterator } from '../pagination.ts';
import type { ItemOf, QueryOf } from '../types.ts';
import { type Body, type CallOptions, type Query, Resource } from './base.ts';
import { PartnerWebhooks } from './webhooks.ts';

const ACCOUNTS = '/api/v1/public/partner/accounts';
const ACCOUNT = '/api/v1/public/partner/accounts/{accountId}';
const ACCOUNT_KEYS = '/api/v1/public/partner/accounts/{accountId}/keys';
const KEYS = '/api/v1/public/partner/keys';

export class PartnerAccounts extends Resource {
  /** Provisions an account (idempotent on externalRef too). */
  create(body: Body<'post', typeof ACCOUNTS>, opts?: CallOptions) {
    return this.t.request('post', ACCOUNTS, { body, ...opts });
  }
  list(query?: Query<typeof ACCOUNTS>, opts?: CallOptions): PageIterator<ItemOf<typeof ACCOUNTS>> {
    return this.paginate(ACCOUNTS, query, undefined, opts);
  }
  get(accountId: string, opts?: CallOptions) {
    return this.t.request('get', ACCOUNT, { params: { accountId }, ...opts });
  }
  update(accountId: string, body: Body<'patch', typeof ACCOUNT>, opts?: CallOptions) {
    return this.t.request('patch', ACCOUNT, { params: { accountId }, body, ...opts });
  }
  /** Closes the account (for good). */
  /** Closes the sub-account for good; `{ erase: true }` also erases its personal data, irreversibly. */
  close(accountId: string, query?: QueryOf<'delete', typeof ACCOUNT>, opts?: CallOptions) {
    return this.t.request('delete', ACCOUNT, { params: { accountId }, query, ...opts });
  }
  suspend(accountId: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/partner/accounts/{accountId}/suspend', {
      params: { accountId },
      ...opts,
    });
  }
  reactivate(accountId: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/partner/accounts/{accountId}/reactivate', {
      params: { accountId },
      ...opts,
    });
  }
  usage(accountId: string, opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/partner/accounts/{accountId}/usage', {
      params: { accountId },
      ...opts,
    });
  }
  /** A key of the account (the answer shows it once). */
  createKey(accountId: string, body: Body<'post', typeof ACCOUNT_KEYS>, opts?: CallOptions) {
    return this.t.request('post', ACCOUNT_KEYS, { params: { accountId }, body, ...opts });
  }
  listKeys(
    accountId: string,
    query?: Query<typeof ACCOUNT_KEYS>,
    opts?: CallOptions,
  ): PageIterator<ItemOf<typeof ACCOUNT_KEYS>> {
    return this.paginate(ACCOUNT_KEYS, query, { accountId }, opts);
  }
  revokeKey(accountId: string, keyId: string, opts?: CallOptions) {
    return this.t.request('delete', '/api/v1/public/partner/accounts/{accountId}/keys/{keyId}', {
      params: { accountId, keyId },
      ...opts,
    });
  }
  /** Moves the account's WhatsApp number to another of the partner's accounts (which has none). */
  moveChannel(
    accountId: string,
    body: Body<'post', '/api/v1/public/partner/accounts/{accountId}/channel/move'>,
    opts?: CallOptions,
  ) {
    return this.t.request('post', '/api/v1/public/partner/accounts/{accountId}/channel/move', {
      params: { accountId },
      body,
      ...opts,
    });
  }
  /** Credits the account's wallet. */
  credit(
    accountId: string,
    body: Body<'post', '/api/v1/public/partner/accounts/{accountId}/wallet/credits'>,
    opts?: CallOptions,
  ) {
    return this.t.request('post', '/api/v1/public/partner/accounts/{accountId}/wallet/credits', {
      params: { accountId },
      body,
      ...opts,
    });
  }
}

export class PartnerKeys extends Resource {
  create(body: Body<'post', typeof KEYS>, opts?: CallOptions) {
    return this.t.request('post', KEYS, { body, ...opts });
  }
  list(query?: Query<typeof KEYS>, opts?: CallOptions): PageIterator<ItemOf<typeof KEYS>> {
    return this.paginate(KEYS, query, undefined, opts);
  }
  revoke(keyId: string, opts?: CallOptions) {
    return this.t.request('delete', '/api/v1/public/partner/keys/{keyId}', { params: { keyId }, ...opts });
  }
}

export class Partner extends Resource {
  readonly accounts = new PartnerAccounts(this.t);
  readonly keys = new PartnerKeys(this.t);
  readonly webhooks = new PartnerWebhooks(this.t);

  /**
   * Bootstraps a fresh installation with its one-time token: answers the partner and its first
   * key (no API key needed).
   */
  bootstrap(bootstrapToken: string, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/partner/bootstrap', {
      ...opts,
      headers: { ...opts?.headers, authorization: `Bearer ${bootstrapToken}` },
    });
  }
  /** Invites a partner admin to the console: a one-time link, shown once. */
  inviteAdmin(body: Body<'post', '/api/v1/public/partner/console-invitations'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/partner/console-invitations', { body, ...opts });
  }
  /** The partner's own Meta app (for the app-level WhatsApp callback URL). */
  getWhatsAppApp(opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/partner/whatsapp-app', { ...opts });
  }
  setWhatsAppApp(body: Body<'put', '/api/v1/public/partner/whatsapp-app'>, opts?: CallOptions) {
    return this.t.request('put', '/api/v1/public/partner/whatsapp-app', { body, ...opts });
  }
}
