// The approved templates each send looks up, cached per process for at most a second (and read
// again ahead of time while in use): a send then costs no template query. Only APPROVED templates
// are kept, so a template approved a moment ago is read from the database (and sendable) at once;
// what can go stale is an approval that has just ended (paused, disabled, deleted), for at most a
// second in another process (this process forgets it at once). A message sent in that second is
// refused by the provider (132015/132016) and refunded, as one sent just before the change would be.

import { TtlCache } from '../../kernel/async/ttl-cache.ts';
import type { Sql } from '../../kernel/database/db.ts';
import { findTemplateByName, type TemplateRow } from './repo.ts';

export const APPROVED_CACHE_MS = 1000;

const keyOf = (accountId: string, name: string, language: string) =>
  `${accountId}\u0000${name}\u0000${language}`;

export class ApprovedTemplates {
  readonly #cache = new TtlCache<TemplateRow | null>(APPROVED_CACHE_MS, {
    keep: (row) => row?.status === 'APPROVED',
  });

  async find(sql: Sql, accountId: string, name: string, language: string): Promise<TemplateRow | null> {
    return this.#cache.get(keyOf(accountId, name, language), () =>
      findTemplateByName(sql, accountId, name, language),
    );
  }

  /** Called by every change of a template in this process. */
  forget(row: Pick<TemplateRow, 'account_id' | 'name' | 'language'>): void {
    this.#cache.delete(keyOf(row.account_id, row.name, row.language));
  }
}
