// Journey configs: ready-made journeys (docs/automation.md § Journey configs). A config owns one
// journey (journeys.config_id), compiled from it (compile.ts) and read-only through /journeys; it
// changes only through here, in one transaction with its config:
//   create   the config is checked (checks.ts), compiled, and its journey created and published;
//   PATCH    a new name or config is checked and compiled again, and the journey's edit is its next
//            version (runs keep the version they started on); status paused pauses the journey (it
//            starts no run, its runs hold), active publishes it again;
//   DELETE   the journey is archived (its running and waiting runs are canceled) and deleted, with
//            the config.
// A fault the journey checks find in the compiled journey (a message's content, a Liquid template, a
// tag) is answered as a 400 at the config field it comes from.
import type { Sql, Tx } from '../../kernel/database/db.ts';
import { ApiError, type FieldIssue, notFound } from '../../kernel/http/errors.ts';
import { newId } from '../../kernel/values/ids.ts';
import { invalidFields } from '../contacts/index.ts';
import {
  createJourney,
  type JourneyServices,
  moveJourney,
  patchJourney,
  removeJourney,
} from '../journeys/index.ts';
import { configProblems, shapeProblems } from './checks.ts';
import { type Compiled, compile, configIssue } from './compile.ts';
import {
  type ConfigRow,
  type ConfigStatus,
  deleteConfig,
  findConfig,
  insertConfig,
  updateConfig,
} from './repo.ts';
import type { TypedConfig } from './schemas.ts';

export type ConfigInput = { name: string } & TypedConfig;

export interface ConfigPatch {
  name?: string;
  /** The whole config, of the config's type (checked here: the body does not say the type). */
  config?: unknown;
  status?: ConfigStatus;
}

function refuse(issues: FieldIssue[]): void {
  if (issues.length > 0) throw invalidFields(issues);
}

/** Runs a journey write; its 400 is answered at the config's fields. */
async function onJourney<T>(compiled: Compiled, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'INVALID_REQUEST' || !Array.isArray(err.details))
      throw err;
    const seen = new Set<string>();
    const issues = (err.details as FieldIssue[])
      .map((d) => configIssue(d, compiled))
      .filter((d) => !seen.has(`${d.field}|${d.issue}`) && seen.add(`${d.field}|${d.issue}`));
    throw invalidFields(issues);
  }
}

export async function getJourneyConfig(sql: Sql, accountId: string, id: string): Promise<ConfigRow> {
  const row = await findConfig(sql, accountId, id);
  if (!row) throw notFound('journey config');
  return row;
}

export async function createJourneyConfig(
  s: JourneyServices,
  accountId: string,
  input: ConfigInput,
): Promise<ConfigRow> {
  refuse(configProblems(input));
  const id = newId('journeyConfig');
  const compiled = compile({ ...input, configId: id });
  return s.db.transaction(async (tx) => {
    const { row: journey } = await onJourney(compiled, () =>
      createJourney(s, accountId, compiled.journey, { configId: id, tx }),
    );
    await onJourney(compiled, () =>
      moveJourney(s, accountId, journey.id, 'publish', { owner: 'config', tx }),
    );
    return insertConfig(
      tx,
      {
        id,
        account_id: accountId,
        name: input.name.trim(),
        type: input.type,
        config: input.config,
        journey_id: journey.id,
      },
      s.now(),
    );
  });
}

async function locked(tx: Tx, accountId: string, id: string): Promise<ConfigRow> {
  const row = await findConfig(tx, accountId, id, { forUpdate: true });
  if (!row) throw notFound('journey config');
  return row;
}

export async function patchJourneyConfig(
  s: JourneyServices,
  accountId: string,
  id: string,
  patch: ConfigPatch,
): Promise<ConfigRow> {
  return s.db.transaction(async (tx) => {
    const before = await locked(tx, accountId, id);
    if (patch.config !== undefined) refuse(shapeProblems(before.type, patch.config));
    const typed = { type: before.type, config: patch.config ?? before.config } as TypedConfig;
    if (patch.config !== undefined) refuse(configProblems(typed));
    const name = patch.name?.trim() ?? before.name;
    const compiled = compile({ ...typed, name, configId: id });
    if (patch.name !== undefined || patch.config !== undefined) {
      await onJourney(compiled, () =>
        patchJourney(s, accountId, before.journey_id, compiled.journey, { owner: 'config', tx }),
      );
    }
    const status = patch.status ?? before.status;
    if (status !== before.status) {
      const move = status === 'paused' ? 'pause' : 'publish';
      // Publishing again checks the journey again (its template may have changed meanwhile).
      await onJourney(compiled, () =>
        moveJourney(s, accountId, before.journey_id, move, { owner: 'config', tx }),
      );
    }
    return updateConfig(tx, id, { name, config: typed.config, status }, s.now());
  });
}

export async function removeJourneyConfig(s: JourneyServices, accountId: string, id: string): Promise<void> {
  await s.db.transaction(async (tx) => {
    const before = await locked(tx, accountId, id);
    await moveJourney(s, accountId, before.journey_id, 'archive', { owner: 'config', tx });
    // The config refers to its journey: it goes first.
    await deleteConfig(tx, id);
    await removeJourney(s, accountId, before.journey_id, { owner: 'config', tx });
  });
}
