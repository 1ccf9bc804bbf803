// Runs seen and handled from the API: the contact a trigger names, cancel, the sandbox's wake, and
// the per-node statistics (counted from the steps: what entered a node, how it left, what waits there).
import type { Database, Sql, Tx } from '../../kernel/database/db.ts';
import { conflict, notFound } from '../../kernel/http/errors.ts';
import type { JourneyRow, RunRow } from './repo.ts';

/** Cancels a running or waiting run (its open step too); 409 once it has ended. */
export async function cancelRun(
  s: { db: Database; now: () => Date },
  accountId: string,
  journeyId: string,
  runId: string,
): Promise<RunRow> {
  return s.db.transaction(async (tx) => {
    const { rows } = await tx.query<RunRow>(
      'SELECT * FROM journey_runs WHERE id = $1 AND account_id = $2 AND journey_id = $3 FOR UPDATE',
      [runId, accountId, journeyId],
    );
    const run = rows[0];
    if (!run) throw notFound('journey run');
    if (run.status !== 'running' && run.status !== 'waiting') {
      throw conflict(`The run has ended (${run.status}): only a running or waiting run can be canceled.`);
    }
    const now = s.now();
    await tx.query(
      `UPDATE journey_run_steps SET status = 'canceled', ended_at = $2 WHERE run_id = $1 AND status = 'waiting'`,
      [runId, now],
    );
    const { rows: canceled } = await tx.query<RunRow>(
      `UPDATE journey_runs SET status = 'canceled', resume_at = NULL, resume_edge = NULL, updated_at = $2, ended_at = $2
        WHERE id = $1 RETURNING *`,
      [runId, now],
    );
    return canceled[0]!;
  });
}

/**
 * POST /sandbox/wake {runId}: the run's current wait ends now (a wait leaves by next, a
 * wait_for_reply by timeout; a send window still applies, and a webhook node still waits for its
 * call). Only a sandbox run wakes: a live one would send real messages early.
 */
export async function wakeRun(
  s: { db: Database; now: () => Date },
  accountId: string,
  runId: string,
): Promise<RunRow> {
  return s.db.transaction(async (tx) => {
    const { rows } = await tx.query<RunRow>(
      'SELECT * FROM journey_runs WHERE id = $1 AND account_id = $2 FOR UPDATE',
      [runId, accountId],
    );
    const run = rows[0];
    if (!run) throw notFound('journey run');
    if (run.status !== 'running' && run.status !== 'waiting')
      throw conflict(`The run has ended (${run.status}).`);
    if (!run.sandbox) throw conflict('Only a run started in the sandbox can be woken.');
    const now = s.now();
    const { rows: woken } = await tx.query<RunRow>(
      'UPDATE journey_runs SET resume_at = $2, updated_at = $2 WHERE id = $1 RETURNING *',
      [runId, now],
    );
    return woken[0]!;
  });
}

const RUN_STATUSES = ['running', 'waiting', 'completed', 'failed', 'canceled', 'expired'] as const;

/** Per node: entered, completed, failed, waiting now, and the edges taken; and the runs by status. */
export async function journeyStats(sql: Sql, journey: JourneyRow, version: number | null) {
  const { rows: nodes } = await sql.query<{
    node_id: string;
    type: string;
    entered: number;
    completed: number;
    failed: number;
    waiting: number;
  }>(
    `SELECT s.node_id, min(s.type) AS type, count(*)::int AS entered,
            (count(*) FILTER (WHERE s.status = 'completed'))::int AS completed,
            (count(*) FILTER (WHERE s.status = 'failed'))::int AS failed,
            (count(*) FILTER (WHERE s.status = 'waiting'))::int AS waiting
       FROM journey_run_steps s JOIN journey_runs r ON r.id = s.run_id
      WHERE s.journey_id = $1 AND ($2::int IS NULL OR r.version = $2)
      GROUP BY s.node_id`,
    [journey.id, version],
  );
  const { rows: edges } = await sql.query<{ node_id: string; edge: string; n: number }>(
    `SELECT s.node_id, s.edge, count(*)::int AS n
       FROM journey_run_steps s JOIN journey_runs r ON r.id = s.run_id
      WHERE s.journey_id = $1 AND s.edge IS NOT NULL AND ($2::int IS NULL OR r.version = $2)
      GROUP BY s.node_id, s.edge`,
    [journey.id, version],
  );
  const { rows: runs } = await sql.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM journey_runs
      WHERE journey_id = $1 AND ($2::int IS NULL OR version = $2) GROUP BY status`,
    [journey.id, version],
  );
  const counted = new Map(nodes.map((n) => [n.node_id, n]));
  // The current version's nodes in order (those no run reached with zeros), then nodes of older versions.
  const ids = [
    ...journey.definition.nodes.map((n) => n.id),
    ...nodes.map((n) => n.node_id).filter((id) => !journey.definition.nodes.some((n) => n.id === id)),
  ];
  const byStatus = Object.fromEntries(
    RUN_STATUSES.map((st) => [st, runs.find((r) => r.status === st)?.n ?? 0]),
  );
  return {
    journeyId: journey.id,
    version,
    runs: { total: runs.reduce((sum, r) => sum + r.n, 0), ...byStatus } as Record<
      'total' | (typeof RUN_STATUSES)[number],
      number
    >,
    nodes: ids.map((id) => {
      const n = counted.get(id);
      return {
        nodeId: id,
        type: n?.type ?? journey.definition.nodes.find((x) => x.id === id)!.type,
        entered: n?.entered ?? 0,
        completed: n?.completed ?? 0,
        failed: n?.failed ?? 0,
        waiting: n?.waiting ?? 0,
        edges: Object.fromEntries(edges.filter((e) => e.node_id === id).map((e) => [e.edge, e.n])),
      };
    }),
  };
}

/**
 * A place_call node's call ended: its run, if it still waits at the node, goes on by `edge`
 * (answered, no_answer, failed), the call kept in `run.vars.<node>`.
 */
export async function resumeAfterCall(
  tx: Tx,
  runId: string,
  nodeId: string,
  edge: 'answered' | 'no_answer' | 'failed',
  call: object,
  now: Date,
): Promise<void> {
  await tx.query(
    `UPDATE journey_runs
        SET vars = vars || jsonb_build_object($2::text, $3::jsonb), resume_edge = $4, resume_at = $5, updated_at = $5
      WHERE id = $1 AND status = 'waiting' AND current_node_id = $2`,
    [runId, nodeId, JSON.stringify(call), edge, now],
  );
}
