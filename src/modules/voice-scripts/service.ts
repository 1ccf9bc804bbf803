// Voice scripts: saved checked (every fault at once, with its field), published once their graph
// holds (docs/voice.md § Scripts):
//   draft ──publish──▶ published      (its TwiML built and kept with the version)
// A draft is edited in place (version 1); a published script's edit is checked as a publish is and
// becomes the next version, published at once (calls keep the version they were placed with).
// DELETE removes a draft; a published script is archived instead (calls and campaigns name its
// versions), and an archived script no longer changes.

import type { SecretBox } from '../../kernel/crypto/secrets.ts';
import type { Database, Sql } from '../../kernel/database/db.ts';
import { conflict, type FieldIssue } from '../../kernel/http/errors.ts';
import type { Egress } from '../../kernel/outbound/egress.ts';
import { newId } from '../../kernel/values/ids.ts';
import { normalizePhone } from '../../kernel/values/phones.ts';
import { invalidFields } from '../contacts/index.ts';
import { voiceCallbackBase } from '../voice-channel/index.ts';
import { generateSecret } from '../webhooks/index.ts';
import { actionsOf, type Definition, definitionProblems, graphProblems } from './definition.ts';
import { type ScriptWithTwiml, setSigningSecret, VOICE_SCRIPTS } from './repo.ts';
import { compile } from './twiml.ts';

export { MAX_SCRIPTS_PER_ACCOUNT } from './repo.ts';

export interface ScriptServices {
  db: Database;
  egress: Egress;
  secrets: SecretBox;
  now: () => Date;
  config: { publicBaseUrl: string };
}

export interface ScriptInput {
  name: string;
  type: 'tts' | 'ivr';
  language?: string;
  voice?: string | null;
  tts?: { text: string; loop?: number };
  ivr?: Definition['ivr'];
  onMachine?: Definition['onMachine'];
}

/** The definition as stored: defaults filled in. */
function definitionOf(input: Omit<ScriptInput, 'name'>, before?: Definition): Definition {
  const ivr = input.ivr ?? before?.ivr ?? null;
  const gathered = ivr && {
    start: ivr.start,
    nodes: Object.fromEntries(
      Object.entries(ivr.nodes).map(([id, node]) => [
        id,
        node.gather
          ? {
              ...node,
              gather: {
                ...node.gather,
                numDigits: node.gather.numDigits ?? 1,
                timeoutSeconds: node.gather.timeoutSeconds ?? 5,
                retries: node.gather.retries ?? 1,
              },
            }
          : node,
      ]),
    ),
  };
  const tts = input.tts ?? before?.tts ?? null;
  return {
    type: input.type,
    language: input.language ?? before?.language ?? 'en-US',
    voice: input.voice === undefined ? (before?.voice ?? null) : input.voice,
    tts: tts && { text: tts.text, loop: tts.loop ?? 1 },
    // A part of the other type is kept, so that the checks name it.
    ivr: gathered,
    onMachine: input.onMachine ?? before?.onMachine ?? 'hangup',
  };
}

/** Every fault of the script as saved (and of its graph when it is, or is to be, published). */
async function check(s: ScriptServices, name: string, d: Definition, published: boolean): Promise<void> {
  const issues: FieldIssue[] = [];
  if (!name.trim()) issues.push({ field: 'name', issue: 'must not be blank' });
  issues.push(...definitionProblems(d));
  for (const [field, action] of actionsOf(d)) {
    if (action.type === 'webhook') {
      const problem = await s.egress.check(action.url);
      if (problem) issues.push({ field: `${field}.url`, issue: problem });
    }
    if (action.type === 'transfer' && !normalizePhone(action.to)) {
      issues.push({ field: `${field}.to`, issue: 'is not a phone number (E.164, such as +14155550123)' });
    }
  }
  if (published) issues.push(...graphProblems(d));
  if (issues.length > 0) throw invalidFields(issues);
}

/** The TwiML kept with a published version: texts as written, the account's callback URLs. */
export function previewTwiml(s: ScriptServices, accountId: string, d: Definition): Record<string, string> {
  const base = voiceCallbackBase(s.config.publicBaseUrl, accountId);
  return compile(d, {
    render: (text) => text,
    gatherUrl: (node, attempt) => `${base}/gather?node=${encodeURIComponent(node)}&attempt=${attempt}`,
    nodeUrl: (node) => `${base}/node?node=${encodeURIComponent(node)}`,
  });
}

export async function createScript(
  s: ScriptServices,
  accountId: string,
  input: ScriptInput,
): Promise<ScriptWithTwiml & { signingSecret: string }> {
  const definition = definitionOf(input);
  await check(s, input.name, definition, false);
  // Its webhook actions sign with it; shown in this answer only.
  const signingSecret = generateSecret();
  return s.db.transaction(async (tx) => {
    await VOICE_SCRIPTS.reserve(tx, accountId);
    const row = await VOICE_SCRIPTS.insert(
      tx,
      {
        id: newId('voiceScript'),
        account_id: accountId,
        name: input.name.trim(),
        type: input.type,
        definition,
      },
      s.now(),
    );
    await setSigningSecret(tx, row.id, s.secrets.seal(signingSecret));
    return { ...row, twiml: null, signingSecret };
  });
}

export function getScript(db: Sql, accountId: string, id: string): Promise<ScriptWithTwiml> {
  return VOICE_SCRIPTS.get(db, accountId, id);
}

export async function patchScript(
  s: ScriptServices,
  accountId: string,
  id: string,
  patch: Partial<Omit<ScriptInput, 'type'>>,
): Promise<ScriptWithTwiml> {
  return s.db.transaction(async (tx) => {
    const before = await VOICE_SCRIPTS.locked(tx, accountId, id);
    VOICE_SCRIPTS.refuseArchived(before);
    const name = patch.name ?? before.name;
    const definition = definitionOf({ ...patch, type: before.type }, before.definition);
    const published = before.status === 'published';
    await check(s, name, definition, published);
    const twiml = published ? { twiml: previewTwiml(s, accountId, definition) } : {};
    await VOICE_SCRIPTS.edit(tx, before, { name: name.trim(), definition }, () => s.now(), twiml);
    return (await VOICE_SCRIPTS.find(tx, accountId, id))!;
  });
}

export async function publishScript(
  s: ScriptServices,
  accountId: string,
  id: string,
): Promise<ScriptWithTwiml> {
  return s.db.transaction(async (tx) => {
    const before = await VOICE_SCRIPTS.locked(tx, accountId, id);
    const to = VOICE_SCRIPTS.moveTo(before, 'publish');
    await check(s, before.name, before.definition, true);
    await VOICE_SCRIPTS.update(tx, id, { ...before, status: to }, s.now());
    await VOICE_SCRIPTS.keepVersion(tx, before, s.now(), {
      twiml: previewTwiml(s, accountId, before.definition),
    });
    return (await VOICE_SCRIPTS.find(tx, accountId, id))!;
  });
}

/** Deletes a draft; archives a published script (its versions stay for the calls that played them). */
export async function removeScript(s: ScriptServices, accountId: string, id: string): Promise<void> {
  await s.db.transaction(async (tx) => {
    const before = await VOICE_SCRIPTS.locked(tx, accountId, id);
    if (before.status === 'draft') await VOICE_SCRIPTS.delete(tx, id);
    else if (before.status === 'published')
      await VOICE_SCRIPTS.update(tx, id, { ...before, status: 'archived' }, s.now());
    else throw conflict('The voice script is archived already.');
  });
}
