// Versioned definitions in the database: a row per definition of an account (journeys, sequences,
// voice scripts), edited in place while a draft; once published, each edit makes the next version,
// and every published version is kept in the kind's versions table (runs, enrollments and calls
// keep the version they started on). One `Versioned` per kind, made by the module that owns its
// tables, says its tables, columns and nouns; the statements and the refusals every kind shares are
// here once. It knows nothing of a kind's definition: what a column derived from it holds is the
// kind's, and so is what a definition must hold.
import { conflict, notFound } from '../http/errors.ts';
import type { Page } from '../http/pagination.ts';
import type { Sql, Tx } from './db.ts';

/** The columns every kind's row has. */
export interface VersionedRow {
  id: string;
  account_id: string;
  name: string;
  status: string;
  version: number;
  definition: unknown;
  created_at: Date;
  updated_at: Date;
}

/** A move of a definition's life: the statuses it leaves, the one it reaches, and its past tense. */
export interface VersionedMove<S extends string> {
  from: readonly S[];
  to: S;
  done: string;
}

export interface VersionedKind<R extends VersionedRow, M extends string> {
  /** The definitions' table; also the key of the lock its account's writers take. */
  table: string;
  /** What a definition is called in answers: `journey`; and more of them: `journeys`. */
  noun: string;
  nouns: string;
  /** Definitions one account may have. */
  limit: number;
  /** Columns written at creation besides id, account_id, status, version, definition and times. */
  created: readonly (keyof R & string)[];
  /** Those an edit rewrites (with status, version and definition). */
  edited: readonly (keyof R & string)[];
  /** Columns kept beside the definition for lookups, computed from it on every write. */
  derived?: Readonly<Record<string, (definition: R['definition']) => unknown>>;
  /** The versions table, its column naming the definition, and the JSON columns kept with each. */
  versions: { table: string; key: string; extras?: readonly string[] };
  /**
   * A read joining more than the table (alias `alias` for the table): a row lock is then taken by
   * a statement of its own (FOR UPDATE does not apply to the nullable side of an outer join).
   */
  read?: { select: string; alias: string };
  /** Rows of other tables a definition's deletion removes first: `column` names the definition. */
  alsoDeletes?: readonly { table: string; column: string }[];
  /** The statuses a deletion accepts (without them, `remove` is not used by the kind). */
  deletable?: readonly R['status'][];
  moves: Readonly<Record<M, VersionedMove<R['status']>>>;
}

/** Stores one kind of versioned definition: `R` its row, `Read` a row as reads return it. */
export class Versioned<R extends VersionedRow, M extends string = string, Read extends R = R> {
  readonly kind: VersionedKind<R, M>;
  private readonly select: string;
  private readonly prefix: string;

  constructor(kind: VersionedKind<R, M>) {
    this.kind = kind;
    this.select = kind.read?.select ?? `SELECT * FROM ${kind.table}`;
    this.prefix = kind.read ? `${kind.read.alias}.` : '';
  }

  /**
   * Serialises the writers of one account's definitions (their count) until the transaction ends,
   * and refuses (409) a new one past the limit.
   */
  async reserve(tx: Tx, accountId: string): Promise<void> {
    const { table, limit, nouns } = this.kind;
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('${table}:' || $1, 0))`, [accountId]);
    const { rows } = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`,
      [accountId],
    );
    if (rows[0]!.n >= limit) throw conflict(`At most ${limit} ${nouns} are allowed; delete one first.`);
  }

  /** A new draft at version 1. */
  async insert(
    sql: Sql,
    row: Pick<R, 'id' | 'account_id' | 'definition'> & Partial<R>,
    now: Date,
  ): Promise<R> {
    const { table, created } = this.kind;
    const derived = Object.entries(this.kind.derived ?? {});
    const params: unknown[] = [];
    const at = (value: unknown) => `$${params.push(value)}`;
    const columns = [
      'id',
      'account_id',
      ...created,
      'status',
      'version',
      'definition',
      ...derived.map(([c]) => c),
    ];
    const values = [
      at(row.id),
      at(row.account_id),
      ...created.map((c) => at(row[c])),
      `'draft'`,
      '1',
      at(JSON.stringify(row.definition)),
      ...derived.map(([, of]) => at(of(row.definition))),
    ];
    const time = at(now);
    const { rows } = await sql.query<R>(
      `INSERT INTO ${table} (${columns.join(', ')}, created_at, updated_at)
       VALUES (${values.join(', ')}, ${time}, ${time}) RETURNING *`,
      params,
    );
    return rows[0]!;
  }

  /** The account's definition; with `forUpdate`, locked until the transaction ends. */
  async find(
    sql: Sql,
    accountId: string,
    id: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<Read | null> {
    const p = this.prefix;
    if (options.forUpdate && this.kind.read) {
      await sql.query(`SELECT 1 FROM ${this.kind.table} WHERE id = $1 AND account_id = $2 FOR UPDATE`, [
        id,
        accountId,
      ]);
    }
    const lock = options.forUpdate && !this.kind.read ? ' FOR UPDATE' : '';
    const { rows } = await sql.query<Read>(
      `${this.select} WHERE ${p}id = $1 AND ${p}account_id = $2${lock}`,
      [id, accountId],
    );
    return rows[0] ?? null;
  }

  /** The account's definition, or a 404 naming the kind. */
  async get(sql: Sql, accountId: string, id: string): Promise<Read> {
    const row = await this.find(sql, accountId, id);
    if (!row) throw notFound(this.kind.noun);
    return row;
  }

  /** The account's definition locked until the transaction ends, or a 404. */
  async locked(tx: Tx, accountId: string, id: string): Promise<Read> {
    const row = await this.find(tx, accountId, id, { forUpdate: true });
    if (!row) throw notFound(this.kind.noun);
    return row;
  }

  /** Writes the edited columns, status, version and definition (and what derives from it). */
  async update(
    sql: Sql,
    id: string,
    values: Pick<R, 'status' | 'version' | 'definition'> & Partial<R>,
    now: Date,
  ): Promise<R> {
    const params: unknown[] = [id];
    const set = (column: string, value: unknown) => `${column} = $${params.push(value)}`;
    const sets = [
      ...this.kind.edited.map((c) => set(c, values[c])),
      set('status', values.status),
      set('version', values.version),
      set('definition', JSON.stringify(values.definition)),
      ...Object.entries(this.kind.derived ?? {}).map(([c, of]) => set(c, of(values.definition))),
      set('updated_at', now),
    ];
    const { rows } = await sql.query<R>(
      `UPDATE ${this.kind.table} SET ${sets.join(', ')} WHERE id = $1 RETURNING *`,
      params,
    );
    return rows[0]!;
  }

  /**
   * An edit: a draft's in place, a published definition's as the next version, kept (with its
   * `extras`, the versions table's JSON columns) as the versions a run may start on. `now` is
   * asked once for the row and once for the version.
   */
  async edit(
    tx: Tx,
    before: R,
    values: Partial<R> & Pick<R, 'definition'>,
    now: () => Date,
    extras: Record<string, unknown> = {},
  ): Promise<R> {
    const published = before.status !== 'draft';
    const row = await this.update(
      tx,
      before.id,
      { ...values, status: before.status, version: published ? before.version + 1 : before.version },
      now(),
    );
    if (published) await this.keepVersion(tx, row, now(), extras);
    return row;
  }

  /** Keeps a definition's current version (again, if it was kept: the latest wins). */
  async keepVersion(
    sql: Sql,
    row: Pick<VersionedRow, 'id' | 'version' | 'definition'>,
    now: Date,
    extras: Record<string, unknown> = {},
  ): Promise<void> {
    const { table, key, extras: columns = [] } = this.kind.versions;
    const all = ['definition', ...columns];
    const values = [row.definition, ...columns.map((c) => extras[c])].map((v) => JSON.stringify(v));
    const places = [...all, 'created_at'].map((_, i) => `$${i + 3}`);
    await sql.query(
      `INSERT INTO ${table} (${key}, version, ${all.join(', ')}, created_at) VALUES ($1, $2, ${places.join(', ')})
       ON CONFLICT (${key}, version) DO UPDATE SET ${all.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`,
      [row.id, row.version, ...values, now],
    );
  }

  /** The status `move` takes the definition to, or a 409 when its status does not allow it. */
  moveTo(before: Pick<R, 'status'>, move: M): R['status'] {
    const { from, to, done } = this.kind.moves[move];
    if (!from.includes(before.status))
      throw conflict(`A ${before.status} ${this.kind.noun} cannot be ${done}.`);
    return to;
  }

  /** A 409 for an archived definition: it no longer changes. */
  refuseArchived(before: Pick<R, 'status'>): void {
    if (before.status === 'archived') throw conflict(`An archived ${this.kind.noun} cannot be changed.`);
  }

  /** Deletes the definition when its status allows (`deletable`), else a 409. */
  async remove(tx: Tx, before: Pick<R, 'id' | 'status'>): Promise<void> {
    if (!this.kind.deletable?.includes(before.status)) {
      throw conflict(`A ${before.status} ${this.kind.noun} cannot be deleted: archive it first.`);
    }
    await this.delete(tx, before.id);
  }

  /** Deletes the definition (its versions go with it), and first what `alsoDeletes` names. */
  async delete(sql: Sql, id: string): Promise<void> {
    for (const { table, column } of this.kind.alsoDeletes ?? []) {
      await sql.query(`DELETE FROM ${table} WHERE ${column} = $1`, [id]);
    }
    await sql.query(`DELETE FROM ${this.kind.table} WHERE id = $1`, [id]);
  }

  /** A page of the account's definitions, newest first, of one status if asked. */
  async list(sql: Sql, accountId: string, page: Page, filters: { status?: string }): Promise<Read[]> {
    const p = this.prefix;
    const { rows } = await sql.query<Read>(
      `${this.select}
        WHERE ${p}account_id = $1 AND ($2::text IS NULL OR ${p}id < $2) AND ($3::text IS NULL OR ${p}status = $3)
        ORDER BY ${p}id DESC LIMIT $4`,
      [accountId, page.before, filters.status ?? null, page.limit + 1],
    );
    return rows;
  }
}
