// What a process knows of the wallets it charges and the contacts it sends to, as of its own last
// read or write of them: enough to decide a batch of sends without reading first, so that a busy
// account's batch costs one round trip to the database instead of two.
//
// Never trusted on its own. A batch decided from it is written by the strict write statement,
// which writes nothing unless every wallet still has the balance and threshold it was decided
// from and every contact still has its address and last inbound message (accept-batch.ts); the
// batch is then decided again from a fresh read. And a decision that refuses a send (402, 422) is
// never taken from it, since a refusal writes nothing that could check it: a wallet topped up
// meanwhile would otherwise answer 402 from a stale balance.
import type { ContactRow } from '../contacts/index.ts';

export interface Wallet {
  id: string;
  balance: number;
  currency: string;
  threshold: number | null;
}

/** What deciding a send needs of its recipient's contact. */
export type KnownContact = Pick<
  ContactRow,
  'id' | 'account_id' | 'phone' | 'whatsapp_user_id' | 'last_inbound_at' | 'marketing_opt_out'
>;

/** A send's account and its recipient's address: a number, or a WhatsApp user id (isPhoneAddress). */
export type Pair = { accountId: string; address: string };

export const pairKey = (accountId: string, address: string) => `${accountId}/${address}`;

/** The wallets and contacts a batch is decided from. */
export interface State {
  wallets: Map<string, Wallet>;
  contacts: Map<string, KnownContact>;
}

/** The most wallets and contacts kept; the ones used longest ago go first. */
const WALLET_LIMIT = 10_000;
const CONTACT_LIMIT = 100_000;

/** Sets key to value as the most recent entry, dropping the oldest beyond limit. */
function keep<V>(map: Map<string, V>, key: string, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > limit) map.delete(map.keys().next().value!);
}

export class AcceptCache {
  readonly #wallets = new Map<string, Wallet>();
  readonly #contacts = new Map<string, KnownContact>();

  /** The state of these wallets and recipients' contacts, or null unless every one is known. */
  state(charged: string[], pairs: Pair[]): State | null {
    const wallets = new Map<string, Wallet>();
    for (const id of charged) {
      const wallet = this.#wallets.get(id);
      if (!wallet) return null;
      wallets.set(id, wallet);
    }
    const contacts = new Map<string, KnownContact>();
    for (const { accountId, address } of pairs) {
      const key = pairKey(accountId, address);
      const contact = this.#contacts.get(key);
      if (!contact) return null;
      contacts.set(key, contact);
    }
    return { wallets, contacts };
  }

  /** What a read found (a recipient without a contact is not remembered: the write makes it). */
  remember(state: State): void {
    for (const [id, wallet] of state.wallets) keep(this.#wallets, id, wallet, WALLET_LIMIT);
    for (const c of state.contacts.values()) this.contact(c);
  }

  /** A contact, under each address it is sent to by: its number and its user id. */
  contact(c: KnownContact): void {
    const { id, account_id, phone, whatsapp_user_id, last_inbound_at, marketing_opt_out } = c;
    const known = { id, account_id, phone, whatsapp_user_id, last_inbound_at, marketing_opt_out };
    for (const address of [phone, whatsapp_user_id])
      if (address) keep(this.#contacts, pairKey(account_id, address), known, CONTACT_LIMIT);
  }

  /** A write moved these wallets to these balances. */
  moved(wallets: Map<string, Wallet>, balances: Map<string, number>): void {
    for (const [id, wallet] of wallets)
      keep(this.#wallets, id, { ...wallet, balance: balances.get(id) ?? wallet.balance }, WALLET_LIMIT);
  }

  /** Something of these changed since it was known: read them again next time. */
  forget(charged: string[], pairs: Pair[]): void {
    for (const id of charged) this.#wallets.delete(id);
    for (const { accountId, address } of pairs) this.#contacts.delete(pairKey(accountId, address));
  }
}
