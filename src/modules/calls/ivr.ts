// What a call says and does once answered (docs/voice.md § IVR): the provider asks for TwiML when
// the call is answered (`answer`), when a gather ends (`gather`, with the digits pressed or none),
// and when a node's action goes on to another node (`node`). Each answer is built from the version
// of the script the call was placed with, its texts as rendered when the call was made.
//   - A machine that answers (machine detection asked) gets the script's onMachine: hang up, leave
//     the message (the tts text, or the start node's prompt, then hang up), or the script as a person.
//   - Digits are recorded once per gather (a repeated request is answered the same, and changes
//     nothing). No input or an invalid one says the prompt again, `retries` times, then takes
//     `noInput` / `invalid` (or hangs up when the script names none).
//   - Entering a node does its tag or webhook action, once per node and call.
import twilio from 'twilio';
import type { Database, Tx } from '../../kernel/database/db.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { joinTransaction, queueCall } from '../automation/index.ts';
import { addTags } from '../contacts/index.ts';
import { callUrls } from '../voice-channel/index.ts';
import type { Action, Definition, Route } from '../voice-scripts/index.ts';
import { nodeTwiml, type TwimlContext, ttsTwiml } from '../voice-scripts/index.ts';
import { appendDigit, type CallRow, firstHeard } from './repo.ts';
import { ENDED } from './transition.ts';

export interface IvrServices {
  db: Database;
  events: EventOutbox;
  now: () => Date;
  config: { publicBaseUrl: string };
}

const twiml = twilio.twiml;

function hangupTwiml(): string {
  const response = new twiml.VoiceResponse();
  response.hangup();
  return response.toString();
}

async function definitionOf(tx: Tx, call: CallRow): Promise<Definition> {
  const { rows } = await tx.query<{ definition: Definition }>(
    'SELECT definition FROM voice_script_versions WHERE script_id = $1 AND version = $2',
    [call.script_id, call.script_version],
  );
  return rows[0]!.definition;
}

function contextOf(s: IvrServices, call: CallRow): TwimlContext {
  const urls = callUrls(s.config.publicBaseUrl, call.account_id, call.id);
  return { render: (text) => call.rendered[text] ?? text, gatherUrl: urls.gather, nodeUrl: urls.node };
}

class Ivr {
  readonly tx: Tx;
  readonly s: IvrServices;
  readonly call: CallRow;
  readonly d: Definition;
  readonly ctx: TwimlContext;

  constructor(tx: Tx, s: IvrServices, call: CallRow, d: Definition) {
    this.tx = tx;
    this.s = s;
    this.call = call;
    this.d = d;
    this.ctx = contextOf(s, call);
  }

  /** The start of the call, as answered by a person or a machine. */
  async answer(): Promise<string> {
    const d = this.d;
    if (this.call.answered_by === 'machine' && d.onMachine !== 'continue') {
      if (d.onMachine === 'hangup') return hangupTwiml();
      if (d.type === 'tts') return ttsTwiml(d, this.ctx);
      const start = d.ivr!.nodes[d.ivr!.start]!;
      const response = new twiml.VoiceResponse();
      if (start.say !== undefined) {
        response.say(
          { language: d.language as never, ...(d.voice ? { voice: d.voice as never } : {}) },
          this.ctx.render(start.say),
        );
      }
      response.hangup();
      return response.toString();
    }
    if (d.type === 'tts') return ttsTwiml(d, this.ctx);
    return this.enter(d.ivr!.start);
  }

  /** A node's TwiML, its own action done (once) on the way in. */
  async enter(nodeId: string, attempt = 1): Promise<string> {
    const node = this.d.ivr?.nodes[nodeId];
    if (!node) return hangupTwiml();
    if (
      attempt === 1 &&
      node.action &&
      (await firstHeard(this.tx, this.call, 'enter', nodeId, {}, this.s.now()))
    ) {
      await this.act(nodeId, node.action);
    }
    return nodeTwiml(this.d, nodeId, this.ctx, attempt);
  }

  /** A gather's result at `nodeId`, its `attempt`-th time: the digits recorded, the way on. */
  async gathered(nodeId: string, attempt: number, digits: string, params: object): Promise<string> {
    const gather = this.d.ivr?.nodes[nodeId]?.gather;
    if (!gather) return hangupTwiml();
    const first = await firstHeard(
      this.tx,
      this.call,
      'gather',
      `${nodeId}:${attempt}`,
      params,
      this.s.now(),
    );
    if (first)
      await appendDigit(
        this.tx,
        this.call.id,
        { nodeId, input: digits, at: this.s.now().toISOString() },
        this.s.now(),
      );
    const chosen = digits ? gather.options[digits] : undefined;
    if (chosen) return this.follow(nodeId, chosen, first);
    if (attempt <= gather.retries) return nodeTwiml(this.d, nodeId, this.ctx, attempt + 1);
    const fallback = digits ? gather.invalid : gather.noInput;
    return fallback ? this.follow(nodeId, fallback, first) : hangupTwiml();
  }

  async follow(fromNode: string, route: Route, act: boolean): Promise<string> {
    if ('next' in route) return this.enter(route.next);
    const action = route.action;
    if (action.type === 'hangup') return hangupTwiml();
    if (action.type === 'transfer') {
      const response = new twiml.VoiceResponse();
      response.dial({}, action.to);
      return response.toString();
    }
    if (act) await this.act(fromNode, action);
    return action.next ? this.enter(action.next) : hangupTwiml();
  }

  /** A tag or webhook action (hang-up and transfer are TwiML). */
  async act(nodeId: string, action: Action): Promise<void> {
    const { tx, s, call } = this;
    if (action.type === 'tag' && call.contact_id) {
      await addTags({ ...s, db: joinTransaction(tx, s.db) }, call.account_id, call.contact_id, [action.tag]);
    }
    if (action.type === 'webhook') {
      // The digits as recorded by now (this request's included).
      const { rows } = await tx.query<{ digits: CallRow['digits'] }>(
        'SELECT digits FROM calls WHERE id = $1',
        [call.id],
      );
      const digits = rows[0]?.digits ?? [];
      await queueCall(
        tx,
        {
          accountId: call.account_id,
          runId: call.id,
          voiceScriptId: call.script_id,
          url: action.url,
          payload: {
            type: 'call.ivr_action',
            callId: call.id,
            scriptId: call.script_id,
            scriptVersion: call.script_version,
            nodeId,
            to: call.to_number,
            contactId: call.contact_id,
            digits,
            at: s.now().toISOString(),
          },
        },
        s.now(),
      );
    }
  }
}

export type TwimlRequest =
  | { kind: 'answer' }
  | { kind: 'node'; node: string }
  | { kind: 'gather'; node: string; attempt: number; digits: string; params: object };

/** The TwiML that answers a provider's request about a call (a hang-up once the call has ended). */
export async function twimlFor(
  tx: Tx,
  s: IvrServices,
  call: CallRow,
  request: TwimlRequest,
): Promise<string> {
  if (ENDED.includes(call.status)) return hangupTwiml();
  const ivr = new Ivr(tx, s, call, await definitionOf(tx, call));
  if (request.kind === 'answer') return ivr.answer();
  if (request.kind === 'node') return ivr.enter(request.node);
  return ivr.gathered(request.node, request.attempt, request.digits, request.params);
}
