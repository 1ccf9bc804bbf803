// A script's TwiML, built with the official `twilio` package (twiml.VoiceResponse escapes every
// text, so a contact's name cannot break the document). One document per step of a call: the whole
// of a tts script; for an ivr script, each node's (a call fetches the next node's when a gather
// answers, or when a node's action goes on). Texts are rendered by the caller (Liquid, per call);
// publishing builds the documents with the texts as written, as a preview kept with the version.
import twilio from 'twilio';
import type { Action, Definition, IvrNode } from './definition.ts';

export interface TwimlContext {
  /** Renders a text (Liquid with the call's variables); the identity when publishing. */
  render: (text: string) => string;
  /** Where Twilio posts a gather's digits (or their absence), for `node` at its `attempt`-th try. */
  gatherUrl: (node: string, attempt: number) => string;
  /** Where Twilio fetches the TwiML of `node` (an action that goes on). */
  nodeUrl: (node: string) => string;
}

type Response = InstanceType<typeof twilio.twiml.VoiceResponse>;

function say(d: Definition, target: { say: Response['say'] } | Response, text: string, loop = 1) {
  (target as Response).say(
    {
      language: d.language as never,
      ...(d.voice ? { voice: d.voice as never } : {}),
      ...(loop !== 1 ? { loop } : {}),
    },
    text,
  );
}

/** How a node ends when it gathers nothing more: its action's TwiML, or a hang-up. */
function ending(response: Response, action: Action | undefined, ctx: TwimlContext): void {
  if (!action || action.type === 'hangup') {
    response.hangup();
    return;
  }
  if (action.type === 'transfer') {
    response.dial({}, action.to);
    return;
  }
  // tag and webhook are done by the server when the node is entered; then on, or the end.
  if (action.next) response.redirect({ method: 'POST' }, ctx.nodeUrl(action.next));
  else response.hangup();
}

/** The TwiML of a tts script. */
export function ttsTwiml(d: Definition, ctx: TwimlContext): string {
  const response = new twilio.twiml.VoiceResponse();
  say(d, response, ctx.render(d.tts!.text), d.tts!.loop);
  response.hangup();
  return response.toString();
}

/** The TwiML of one ivr node, at the `attempt`-th time its prompt is said (from 1). */
export function nodeTwiml(d: Definition, id: string, ctx: TwimlContext, attempt = 1): string {
  const node: IvrNode = d.ivr!.nodes[id]!;
  const response = new twilio.twiml.VoiceResponse();
  if (node.gather) {
    const gather = response.gather({
      input: ['dtmf'],
      numDigits: node.gather.numDigits,
      timeout: node.gather.timeoutSeconds,
      action: ctx.gatherUrl(id, attempt),
      method: 'POST',
      actionOnEmptyResult: true,
    });
    if (node.say !== undefined) say(d, gather as never, ctx.render(node.say));
    if (node.play !== undefined) gather.play({}, node.play);
    return response.toString();
  }
  if (node.say !== undefined) say(d, response, ctx.render(node.say));
  if (node.play !== undefined) response.play({}, node.play);
  ending(response, node.action, ctx);
  return response.toString();
}

/** Every document of a script as published: the tts one, or each ivr node's (first attempt). */
export function compile(d: Definition, ctx: TwimlContext): Record<string, string> {
  if (d.type === 'tts') return { tts: ttsTwiml(d, ctx) };
  return Object.fromEntries(Object.keys(d.ivr!.nodes).map((id) => [id, nodeTwiml(d, id, ctx)]));
}
