// The approved templates each send looks up, cached per process for at most a second: a send then
// costs no template query. Only APPROVED templates are kept, so a template approved a moment ago is
// read from the database (and sendable) at once; what can go stale is an approval that has just
// ended (paused, disabled, deleted), for at most a second in another process (this process forgets
// it at once). A message sent in that second is refused by the provider (132015/132016) and
// refunded, as one sent just before the change would be.
import type { Sql } from '../../kernel/db.ts';
import { findTemplateByName, type TemplateRow } from './repo.ts';

export const APPROVED_CACHE_MS = 1000;

const keyOf = (accountId: string, name: string, language: string) =>
  `${accountId}\u0000${name}\u0000${language}`;

export class ApprovedTemplates {
  readonly #entries = new Map<string, { row: TemplateRow; until: number }>();

  async find(sql: Sql, accountId: string, name: string, language: string): Promise<TemplateRow | null> {
    const key = keyOf(accountId, name, language);
    const hit = this.#entries.get(key);
    if (hit && hit.until > Date.now()) return hit.row;
    // The entry's age counts from before the read, as the account cache's does.
    const readAt = Date.now();
    const row = await findTemplateByName(sql, accountId, name, language);
    if (row?.status === 'APPROVED') {
      if (this.#entries.size >= 50_000) this.#entries.clear();
      this.#entries.set(key, { row, until: readAt + APPROVED_CACHE_MS });
    } else this.#entries.delete(key);
    return row;
  }

  /** Called by every change of a template in this process. */
  forget(row: Pick<TemplateRow, 'account_id' | 'name' | 'language'>): void {
    this.#entries.delete(keyOf(row.account_id, row.name, row.language));
  }
}
