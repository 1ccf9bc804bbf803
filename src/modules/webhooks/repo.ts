// Webhook endpoints and their deliveries in the database. An endpoint belongs to one owner, an
// account or a partner; every function takes the owner, so another tenant's endpoint is not found.
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';

export interface Owner {
  kind: 'account' | 'partner';
  id: string;
}

export interface EndpointRow {
  id: string;
  account_id: string | null;
  partner_id: string | null;
  url: string;
  description: string | null;
  event_filters: string[];
  enabled: boolean;
  disabled_reason: string | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: number;
  attempts_allowed: number;
  next_attempt_at: Date | null;
  locked_until: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  /** Made by a replay (a repeat of an event the endpoint may already have had). */
  replay: boolean;
  payload: string;
}

export interface AttemptRow {
  delivery_id: string;
  attempted_at: Date;
  status_code: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

const ownerColumn = (owner: Owner) => (owner.kind === 'account' ? 'account_id' : 'partner_id');

export async function insertEndpoint(
  sql: Sql,
  owner: Owner,
  row: Pick<
    EndpointRow,
    'id' | 'url' | 'description' | 'event_filters' | 'enabled' | 'disabled_reason' | 'secret_sealed'
  >,
  now: Date,
): Promise<EndpointRow> {
  const { rows } = await sql.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (id, ${ownerColumn(owner)}, url, description, event_filters, enabled,
       disabled_reason, secret_sealed, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING *`,
    [
      row.id,
      owner.id,
      row.url,
      row.description,
      row.event_filters,
      row.enabled,
      row.disabled_reason,
      row.secret_sealed,
      now,
    ],
  );
  return rows[0]!;
}

export async function findEndpoint(
  sql: Sql,
  owner: Owner,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<EndpointRow | null> {
  const { rows } = await sql.query<EndpointRow>(
    `SELECT * FROM webhook_endpoints WHERE id = $1 AND ${ownerColumn(owner)} = $2
     ${options.forUpdate ? 'FOR UPDATE' : ''}`,
    [id, owner.id],
  );
  return rows[0] ?? null;
}

export async function countEndpoints(sql: Sql, owner: Owner): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_endpoints WHERE ${ownerColumn(owner)} = $1`,
    [owner.id],
  );
  return rows[0]!.n;
}

export async function listEndpoints(
  sql: Sql,
  owner: Owner,
  page: Page,
  filters: { enabled?: boolean },
): Promise<EndpointRow[]> {
  const params: unknown[] = [owner.id, page.limit + 1];
  let where = `${ownerColumn(owner)} = $1`;
  if (page.before) where += ` AND id < $${params.push(page.before)}`;
  if (filters.enabled !== undefined) where += ` AND enabled = $${params.push(filters.enabled)}`;
  const { rows } = await sql.query<EndpointRow>(
    `SELECT * FROM webhook_endpoints WHERE ${where} ORDER BY id DESC LIMIT $2`,
    params,
  );
  return rows;
}

export type EndpointChanges = Partial<
  Pick<
    EndpointRow,
    | 'url'
    | 'description'
    | 'event_filters'
    | 'enabled'
    | 'disabled_reason'
    | 'secret_sealed'
    | 'previous_secret_sealed'
    | 'previous_secret_expires_at'
    | 'failing_since'
  >
>;

export async function updateEndpoint(
  sql: Sql,
  id: string,
  changes: EndpointChanges,
  now: Date,
): Promise<EndpointRow> {
  const params: unknown[] = [id, now];
  const sets = ['updated_at = $2'];
  for (const [column, value] of Object.entries(changes)) {
    if (value !== undefined) sets.push(`${column} = $${params.push(value)}`);
  }
  const { rows } = await sql.query<EndpointRow>(
    `UPDATE webhook_endpoints SET ${sets.join(', ')} WHERE id = $1 RETURNING *`,
    params,
  );
  return rows[0]!;
}

export async function deleteEndpoint(sql: Sql, owner: Owner, id: string): Promise<boolean> {
  const { rowCount } = await sql.query(
    `DELETE FROM webhook_endpoints WHERE id = $1 AND ${ownerColumn(owner)} = $2`,
    [id, owner.id],
  );
  return rowCount > 0;
}

/** Ends every pending delivery of disabled endpoints as failed (they are not attempted any more). */
export async function failPendingDeliveries(
  sql: Sql,
  endpointIds: string[],
  reason: string,
  now: Date,
): Promise<void> {
  await sql.query(
    `UPDATE webhook_deliveries
        SET status = 'failed', next_attempt_at = NULL, locked_until = NULL, last_error = $2, updated_at = $3
      WHERE endpoint_id = ANY($1::text[]) AND status = 'pending'`,
    [endpointIds, reason, now],
  );
}

const DELIVERY_COLUMNS = 'd.*, ev.payload';

export async function listDeliveries(
  sql: Sql,
  endpointId: string,
  page: Page,
  filters: { status?: DeliveryStatus; eventType?: string },
): Promise<DeliveryRow[]> {
  const params: unknown[] = [endpointId, page.limit + 1];
  let where = 'd.endpoint_id = $1';
  if (page.before) where += ` AND d.id < $${params.push(page.before)}`;
  if (filters.status) where += ` AND d.status = $${params.push(filters.status)}`;
  if (filters.eventType) where += ` AND d.event_type = $${params.push(filters.eventType)}`;
  const { rows } = await sql.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
      WHERE ${where} ORDER BY d.id DESC LIMIT $2`,
    params,
  );
  return rows;
}

export async function findDelivery(
  sql: Sql,
  endpointId: string,
  deliveryId: string,
  options: { forUpdate?: boolean } = {},
): Promise<DeliveryRow | null> {
  const { rows } = await sql.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
      WHERE d.id = $1 AND d.endpoint_id = $2 ${options.forUpdate ? 'FOR UPDATE OF d' : ''}`,
    [deliveryId, endpointId],
  );
  return rows[0] ?? null;
}

/** The attempts of the given deliveries, oldest first. */
export async function attemptsOf(sql: Sql, deliveryIds: string[]): Promise<Map<string, AttemptRow[]>> {
  const byDelivery = new Map<string, AttemptRow[]>(deliveryIds.map((id) => [id, []]));
  if (deliveryIds.length === 0) return byDelivery;
  const { rows } = await sql.query<AttemptRow>(
    `SELECT delivery_id, attempted_at, status_code, latency_ms, response_excerpt, error
       FROM webhook_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY id`,
    [deliveryIds],
  );
  for (const row of rows) byDelivery.get(row.delivery_id)?.push(row);
  return byDelivery;
}

/** Makes a delivery due now; a finished one gets exactly one more attempt. */
export async function requeueDelivery(sql: Sql, delivery: DeliveryRow, now: Date): Promise<void> {
  await sql.query(
    `UPDATE webhook_deliveries
        SET status = 'pending', next_attempt_at = $2, updated_at = $2,
            attempts_allowed = CASE WHEN status = 'pending' THEN attempts_allowed ELSE attempt_count + 1 END
      WHERE id = $1`,
    [delivery.id, now],
  );
}
