// A journey config compiled into the journey it owns (docs/history/issue-21.md, "Journey
// configs"), pure: the same config always makes the same graph. The graphs:
//   appointment_reminder (entry api, reentry after_exit): per reminder `d`, the largest first,
//     wait_k (until appointmentAt, offset -d; late → the next reminder's wait, after the last: done)
//     → remind_k (the template). With `confirm`, remind_k → answer_k (wait_for_reply on the two
//     buttons, timeout: the gap to the next reminder, after the last: its own lead time, at most P7D;
//     timeout → the next reminder's wait, after the last: done; reply → which_k, a switch on the
//     button: case confirm → confirmed (update_contact) → confirm_reply (a text), likewise cancel).
//     A reply ends the reminders: the customer has answered. Without `confirm`, remind_k → wait_k+1.
//   welcome_message (entry contact.created, or message.received for first_inbound; reentry never):
//     an optional pause (wait), then welcome (the message).
//   re_engagement (entry contact.inactive after inactiveFor, a timed entry; reentry after_exit):
//     send_1 … send_n (n = maxAttempts), `spacing` apart: with exitOnReply each send is followed by
//     reply_k (wait_for_reply, timeout spacing; reply → replied, the end), else by pause_k (wait).
// Nodes the config leaves out are not made; an edge with nothing to lead to is left out (the run
// ends there). Every node records the config field it comes from, so a fault the journey checks
// find is reported at that field (configIssue).
import type { FieldIssue } from '../../kernel/http/errors.ts';
import { durationMs } from '../automation/index.ts';
import type { JourneyInput } from '../journeys/index.ts';
import { MAX_REPLY_TIMEOUT } from '../journeys/index.ts';
import type { AppointmentReminder, ReEngagement, TypedConfig, WelcomeMessage } from './schemas.ts';

const MAX_REPLY_MS = MAX_REPLY_TIMEOUT.toMillis();

/**
 * Where a node comes from: the config field `at`; `from` is the part of the node's config it became;
 * `fields` names the config field of one part of the node's config (a wait's buttons).
 */
interface Source {
  at: string;
  from?: string;
  fields?: Record<string, string>;
}

export interface Compiled {
  journey: JourneyInput;
  /** By node id, and `entry`. */
  sources: Record<string, Source>;
}

type Node = JourneyInput['nodes'][number];
type Edge = JourneyInput['edges'][number];

/** An ISO-8601 duration of whole seconds, in days, hours, minutes and seconds (P1DT2H). */
export function isoDuration(ms: number): string {
  let s = Math.max(1, Math.round(ms / 1000));
  const part = (unit: number, letter: string) => {
    const n = Math.floor(s / unit);
    s -= n * unit;
    return n ? `${n}${letter}` : '';
  };
  const days = part(86_400, 'D');
  const time = part(3600, 'H') + part(60, 'M') + part(1, 'S');
  return `P${days}${time ? `T${time}` : ''}`;
}

class Graph {
  readonly nodes: Node[] = [];
  readonly edges: Edge[] = [];
  readonly sources: Record<string, Source> = {};

  node(id: string, type: string, config: Record<string, unknown>, source: Source): string {
    this.nodes.push({ id, type, config });
    this.sources[id] = source;
    return id;
  }

  edge(from: string, to: string | null, when = 'next'): void {
    if (to) this.edges.push({ from, to, when });
  }
}

type Outcome = NonNullable<AppointmentReminder['confirm']>['onConfirm'];

/** The node a tap leads to: its update_contact, else its reply, else none (the run ends). */
function tapTarget(key: 'confirm' | 'cancel', o: Outcome): string | null {
  const { reply, ...update } = o;
  if (Object.keys(update).length > 0) return key === 'confirm' ? 'confirmed' : 'canceled';
  return reply ? `${key}_reply` : null;
}

/** The nodes of a tap's outcome: update_contact, then the reply. */
function tapNodes(g: Graph, key: 'confirm' | 'cancel', o: Outcome): void {
  const at = `config.confirm.${key === 'confirm' ? 'onConfirm' : 'onCancel'}`;
  const { reply, ...update } = o;
  const replyNode = reply ? `${key}_reply` : null;
  if (Object.keys(update).length > 0) {
    const updated = g.node(key === 'confirm' ? 'confirmed' : 'canceled', 'update_contact', update, {
      at,
      from: '.config',
    });
    g.edge(updated, replyNode);
  }
  if (replyNode) {
    g.node(
      replyNode,
      'send_message',
      { message: { type: 'text', text: reply } },
      { at: `${at}.reply`, from: '.config.message.text' },
    );
  }
}

function appointmentReminder(c: AppointmentReminder): Pick<Compiled, 'sources'> & Omit<JourneyInput, 'name'> {
  const g = new Graph();
  // Largest lead first; each keeps its place in the config for its faults.
  const reminders = c.remindBefore
    .map((d, i) => ({ d, ms: durationMs(d), at: `config.remindBefore[${i}]` }))
    .sort((a, b) => b.ms - a.ms);
  const n = reminders.length;
  const waitOf = (k: number) => (k < n ? `wait_${k + 1}` : 'done');
  const confirm = c.confirm;
  reminders.forEach((r, k) => {
    const wait = g.node(waitOf(k), 'wait', { until: c.appointmentAt, offset: `-${r.d}` }, { at: r.at });
    const remind = g.node(
      `remind_${k + 1}`,
      'send_message',
      { message: c.message },
      { at: 'config.message', from: '.config.message' },
    );
    g.edge(wait, remind);
    g.edge(wait, waitOf(k + 1), 'late');
    if (!confirm) {
      g.edge(remind, k + 1 < n ? waitOf(k + 1) : null);
      return;
    }
    // Until the next reminder is due; after the last, its own lead time (the time left before the
    // appointment is known only when the run gets there).
    const gap = k + 1 < n ? r.ms - reminders[k + 1]!.ms : r.ms;
    const answer = g.node(
      `answer_${k + 1}`,
      'wait_for_reply',
      {
        timeout: isoDuration(Math.min(gap, MAX_REPLY_MS)),
        match: { buttons: [confirm.buttons.confirm, confirm.buttons.cancel] },
      },
      {
        at: 'config.confirm.buttons',
        fields: {
          '.config.match.buttons[0]': 'config.confirm.buttons.confirm',
          '.config.match.buttons[1]': 'config.confirm.buttons.cancel',
        },
      },
    );
    const which = g.node(
      `which_${k + 1}`,
      'switch',
      {
        field: `run.vars.${answer}.buttonId`,
        cases: [
          { key: 'confirm', value: confirm.buttons.confirm },
          { key: 'cancel', value: confirm.buttons.cancel },
        ],
      },
      { at: 'config.confirm.buttons' },
    );
    g.edge(remind, answer);
    g.edge(answer, which, 'reply');
    g.edge(answer, waitOf(k + 1), 'timeout');
    g.edge(which, tapTarget('confirm', confirm.onConfirm), 'case:confirm');
    g.edge(which, tapTarget('cancel', confirm.onCancel), 'case:cancel');
  });
  if (confirm) {
    tapNodes(g, 'confirm', confirm.onConfirm);
    tapNodes(g, 'cancel', confirm.onCancel);
  }
  g.node('done', 'end', {}, { at: 'config' });
  return {
    entry: { trigger: 'api', reentry: 'after_exit', start: 'wait_1' },
    nodes: g.nodes,
    edges: g.edges,
    sources: { ...g.sources, entry: { at: 'config' } },
  };
}

function welcomeMessage(c: WelcomeMessage): Pick<Compiled, 'sources'> & Omit<JourneyInput, 'name'> {
  const g = new Graph();
  const pause = c.delay ? g.node('pause', 'wait', { duration: c.delay }, { at: 'config.delay' }) : null;
  const welcome = g.node(
    'welcome',
    'send_message',
    { message: c.message },
    { at: 'config.message', from: '.config.message' },
  );
  if (pause) g.edge(pause, welcome);
  return {
    entry: {
      trigger: 'event',
      event: c.on === 'first_inbound' ? 'message.received' : 'contact.created',
      reentry: 'never',
      start: pause ?? welcome,
    },
    nodes: g.nodes,
    edges: g.edges,
    sources: { ...g.sources, entry: { at: 'config.on' } },
  };
}

function reEngagement(c: ReEngagement): Pick<Compiled, 'sources'> & Omit<JourneyInput, 'name'> {
  const g = new Graph();
  const sendOf = (k: number) => (k < c.maxAttempts ? `send_${k + 1}` : null);
  if (c.exitOnReply) g.node('replied', 'end', {}, { at: 'config.exitOnReply' });
  for (let k = 0; k < c.maxAttempts; k++) {
    const send = g.node(
      sendOf(k)!,
      'send_message',
      { message: c.message },
      { at: 'config.message', from: '.config.message' },
    );
    if (c.exitOnReply) {
      const reply = g.node(
        `reply_${k + 1}`,
        'wait_for_reply',
        { timeout: c.spacing },
        { at: 'config.spacing' },
      );
      g.edge(send, reply);
      g.edge(reply, 'replied', 'reply');
      g.edge(reply, sendOf(k + 1) ?? 'done', 'timeout');
    } else if (sendOf(k + 1)) {
      const pause = g.node(`pause_${k + 1}`, 'wait', { duration: c.spacing }, { at: 'config.spacing' });
      g.edge(send, pause);
      g.edge(pause, sendOf(k + 1));
    }
  }
  if (c.exitOnReply) g.node('done', 'end', {}, { at: 'config' });
  return {
    entry: {
      trigger: 'event',
      event: 'contact.inactive',
      after: c.inactiveFor,
      reentry: 'after_exit',
      start: 'send_1',
    },
    nodes: g.nodes,
    edges: g.edges,
    sources: { ...g.sources, entry: { at: 'config.inactiveFor' } },
  };
}

/** The journey a config owns, and where each of its nodes comes from. */
export function compile(input: { name: string; configId: string } & TypedConfig): Compiled {
  const { sources, ...definition } =
    input.type === 'appointment_reminder'
      ? appointmentReminder(input.config)
      : input.type === 'welcome_message'
        ? welcomeMessage(input.config)
        : reEngagement(input.config);
  return {
    journey: {
      name: input.name,
      description: `Built from journey config ${input.configId} (${input.type}): change it there.`,
      ...definition,
      settings: { sendWindow: null, maxRunDuration: 'P30D' },
    },
    sources,
  };
}

/** A fault the journey checks found, at the config field its node (or the entry) came from. */
export function configIssue(issue: FieldIssue, compiled: Compiled): FieldIssue {
  const node = /^nodes\[(\d+)\](.*)$/.exec(issue.field);
  if (node) {
    const source = compiled.sources[compiled.journey.nodes[Number(node[1])]?.id ?? ''];
    if (!source) return { field: 'config', issue: issue.issue };
    const rest = node[2]!;
    const field =
      source.fields?.[rest] ??
      (source.from !== undefined && rest.startsWith(source.from)
        ? `${source.at}${rest.slice(source.from.length)}`
        : source.at);
    return { field, issue: issue.issue };
  }
  if (issue.field === 'name') return issue;
  if (issue.field.startsWith('entry')) return { field: compiled.sources.entry!.at, issue: issue.issue };
  return { field: 'config', issue: issue.issue };
}
