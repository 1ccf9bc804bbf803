// One run's way through its graph during a turn of the runner (runner.ts), in memory: where it is,
// the steps it entered or left, and how the turn ended for it. The runner executes nodes; a Walk
// keeps the bookkeeping every node shares:
//   - enter: the run limits (decide.ts) are checked, then a step is opened (seq = step count);
//   - leave: the step is closed with its edge; the run goes to the edge's target, or, when the node
//     has no edge of that kind, ends (completed, or failed after a failure);
//   - wait: the step stays open and the run waits until a time (never past its expiry);
//   - yield: the run has walked TURN_STEPS steps this turn and lets the others go first.
// A run that is `running` is about to enter `current_node_id`; one that is `waiting` waits at it,
// its step open.

import { limitBroken } from './decide.ts';
import type { Definition, JourneyNode } from './graph.ts';
import type { RunError, RunRow, RunStatus, StepRow } from './repo.ts';

/** Steps a run takes in one turn before it lets the batch's other runs go first. */
export const TURN_STEPS = 50;

export class Walk {
  readonly run: RunRow;
  readonly definition: Definition;
  readonly #nodes: Map<string, JourneyNode>;
  readonly #now: Date;
  /** The steps entered or changed this turn, by seq. */
  readonly steps = new Map<number, StepRow>();
  /** The step the run waits at (a waiting run's, from the database, or one this turn opened). */
  open: StepRow | null;
  /** A send_message step whose message waits for the round's acceptBatch. */
  sending: StepRow | null = null;
  stopped = false;
  #walked = 0;
  /** The first step this turn may enter (those before it were written by earlier turns). */
  readonly #firstNew: number;

  constructor(run: RunRow, definition: Definition, open: StepRow | null, now: Date) {
    this.run = { ...run, vars: { ...run.vars } };
    this.#firstNew = run.step_count + 1;
    this.definition = definition;
    this.#nodes = new Map(definition.nodes.map((n) => [n.id, n]));
    this.open = open;
    this.#now = now;
  }

  node(id: string): JourneyNode | undefined {
    return this.#nodes.get(id);
  }

  /** The steps this turn entered (to insert). */
  enteredSteps(): StepRow[] {
    return [...this.steps.values()].filter((s) => s.seq >= this.#firstNew);
  }

  /** The step of an earlier turn that this one changed: the one the run waited at (to update). */
  earlierSteps(): StepRow[] {
    return [...this.steps.values()].filter((s) => s.seq < this.#firstNew);
  }

  hasEdge(from: string, when: string): boolean {
    return this.definition.edges.some((e) => e.from === from && e.when === when);
  }

  get ended(): boolean {
    return this.run.status !== 'running' && this.run.status !== 'waiting';
  }

  /** Opens a step at the node the run is about to enter; null when the run stops instead. */
  enter(): { node: JourneyNode; step: StepRow } | null {
    if (this.#walked >= TURN_STEPS) {
      this.run.status = 'running';
      this.run.resume_at = this.#now;
      this.stopped = true;
      return null;
    }
    const id = this.run.current_node_id!;
    const node = this.#nodes.get(id);
    if (!node) {
      this.end('failed', { code: 'NODE_NOT_FOUND', message: `The journey version has no node ${id}.` });
      return null;
    }
    const broken = limitBroken(this.run, id);
    if (broken) {
      this.end('failed', broken);
      return null;
    }
    const run = this.run;
    run.repeat_count = run.last_node_id === id ? run.repeat_count + 1 : 1;
    run.last_node_id = id;
    run.step_count++;
    this.#walked++;
    const step: StepRow = {
      run_id: run.id,
      seq: run.step_count,
      journey_id: run.journey_id,
      node_id: id,
      type: node.type,
      status: 'waiting',
      edge: null,
      output: null,
      error: null,
      started_at: this.#now,
      ended_at: null,
    };
    this.steps.set(step.seq, step);
    return { node, step };
  }

  /** Closes the step by `edge`; the run follows it, or ends if the node has no such edge. */
  leave(step: StepRow, edge: string, how: { output?: unknown; error?: RunError } = {}): void {
    this.#close(step, how.error ? 'failed' : 'completed', edge, how);
    const next = this.definition.edges.find((e) => e.from === step.node_id && e.when === edge);
    if (next) {
      this.run.status = 'running';
      this.run.current_node_id = next.to;
      return;
    }
    if (how.error) this.end('failed', how.error);
    else this.end('completed');
  }

  /** The run waits at the step until `until` (or its expiry, if sooner). */
  wait(step: StepRow, until: Date, output?: unknown): void {
    if (output !== undefined) step.output = output;
    this.steps.set(step.seq, step);
    this.open = step;
    this.run.status = 'waiting';
    this.run.resume_at = until < this.run.expires_at ? until : this.run.expires_at;
    this.stopped = true;
  }

  /** Ends the run; a step still open is canceled. */
  end(status: Exclude<RunStatus, 'running' | 'waiting'>, error?: RunError): void {
    if (this.open && this.open.status === 'waiting') this.#close(this.open, 'canceled', null, {});
    this.run.status = status;
    this.run.error = error ?? null;
    this.run.resume_at = null;
    this.run.resume_edge = null;
    this.run.ended_at = this.#now;
    this.stopped = true;
  }

  #close(
    step: StepRow,
    status: StepRow['status'],
    edge: string | null,
    how: { output?: unknown; error?: RunError },
  ): void {
    step.status = status;
    step.edge = edge;
    step.ended_at = this.#now;
    if (how.output !== undefined) step.output = how.output;
    if (how.error) step.error = how.error;
    this.steps.set(step.seq, step);
    if (this.open === step) this.open = null;
  }
}
