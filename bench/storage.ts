// What rows made through the API cost on disk, for docs/operations.md's sizing and the road to
// 100×: per table, the rows a benchmark left, compacted first (VACUUM FULL, so free space left by
// updates and deletes is not counted), then the table with its TOAST and its indexes divided by
// its rows, and the average row's own data (pg_column_size).
import pg from 'pg';

export interface TableSize {
  table: string;
  rows: number;
  /** Table, TOAST and indexes, per row. */
  bytesPerRow: number;
  /** The row's data alone, on average. */
  dataBytes: number;
  /** The indexes alone, per row. */
  indexBytes: number;
}

/** Measures each table that holds rows (empty ones are left out). */
export async function tableSizes(url: string, tables: string[]): Promise<TableSize[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const sizes: TableSize[] = [];
    for (const table of tables) {
      await client.query(`VACUUM (FULL, ANALYZE) ${table}`);
      const { rows } = await client.query<{ n: string; total: string; indexes: string; data: string | null }>(
        `SELECT count(*) AS n, pg_total_relation_size('${table}') AS total, pg_indexes_size('${table}') AS indexes,
                avg(pg_column_size(t.*)) AS data
           FROM ${table} t`,
      );
      const r = rows[0]!;
      const n = Number(r.n);
      if (n === 0) continue;
      sizes.push({
        table,
        rows: n,
        bytesPerRow: Number(r.total) / n,
        dataBytes: Number(r.data),
        indexBytes: Number(r.indexes) / n,
      });
    }
    return sizes;
  } finally {
    await client.end();
  }
}
