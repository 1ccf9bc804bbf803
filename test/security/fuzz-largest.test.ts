// The fuzzer's "largest body" pass: for every operation that takes a JSON body, the largest bodies
// its schema admits and those just past it (helpers/fuzz-largest.ts: the fullest body, every array
// one over its maxItems, each array filled to the size limit with its items and with wrong values,
// each object filled with properties, each open value nested to the depth limit). Work on the request
// path must grow no faster than the body: each answer comes within a small multiple of the same
// operation's usual answer (measured here, in the same run), as documented (never a 5xx), and the
// event loop is never held for long meanwhile, which is what every other tenant would feel. A body
// of 10,000 non-objects in template components (20 KB) once held it for most of a minute.
//
// Bodies grow in steps (8 KiB, 64 KiB, then a sample at the body limit) and the pass stops at the
// first step that fails: a fault of this kind is already plain on small bodies, and one at the limit
// could hold the process for hours. FUZZ_LARGEST_ONLY (a part of an operation's name) runs the pass
// on those operations only.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { type ErrorBodyCheck, errorBodyCheck, problemsOf } from '../helpers/fuzz-checks.ts';
import { fuzzContext, signInAgain } from '../helpers/fuzz-context.ts';
import { largestBodies } from '../helpers/fuzz-largest.ts';
import {
  type FuzzContext,
  type FuzzRequest,
  type Segment,
  urlOf,
  usualAuth,
} from '../helpers/fuzz-requests.ts';
import { plausible, toJsonText } from '../helpers/fuzz-values.ts';
import { type OpenApiDocument, type Operation, operationsOf } from '../helpers/openapi-operations.ts';
import { useTestApp } from '../helpers/setup.ts';
import { sleep } from '../helpers/wait.ts';

// Webhook URLs are checked by resolving their host; a fixed public address keeps DNS out of it.
const env = useTestApp({ resolver: async () => ['93.184.216.34'] });

// An answer may take 20 times the operation's usual one (a quadratic formatter took 10,000 times as
// long on 20 KB), or 20 times what parsing its body takes here, beside each request: the yardstick
// of what reading a body costs on this machine at this moment (the server parses it, walks it in the
// input guard, validates it to its first fault, may store it), so that a loaded CI machine
// stretches both sides alike; with a floor for the smallest bodies.
const SLOWER_AT_MOST = 20;
const FLOOR_MS = 250;
// The event loop, watched while the server handles each request, may be held as long as the floor
// and 20 times the yardstick: an embedded database stores a megabyte on the event loop's thread.
const LOOP_FLOOR_MS = 300;

let doc: OpenApiDocument;
let ctx: FuzzContext;
let checkErrorBody: ErrorBodyCheck;

beforeAll(async () => {
  const res = await call(env.app, 'GET', '/api/v1/public/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
  checkErrorBody = errorBodyCheck(doc.components.schemas.ErrorBody!);
  ctx = await fuzzContext(env);
});

async function send(req: FuzzRequest) {
  const started = performance.now();
  const res = await env.app.inject({
    method: req.method as 'POST',
    url: req.url,
    headers: req.headers,
    ...(req.payload === undefined ? {} : { payload: req.payload }),
  });
  return { res, ms: performance.now() - started };
}

/**
 * Path parameters naming a real resource the operation acts on, where one of the fuzzer's fits:
 * the first id that the GET of the path up to that parameter answers 200 for (so that the handler
 * runs on the body, not only validation).
 */
async function realParams(op: Operation, operations: Operation[]): Promise<Record<string, Segment>> {
  const params: Record<string, Segment> = {};
  for (const { name } of op.pathParams) {
    const prefix = op.path.slice(0, op.path.indexOf(`{${name}}`) + name.length + 2);
    const get = operations.find((o) => o.method === 'GET' && o.path === prefix);
    let chosen = ctx.realIds[0]!;
    for (const id of get ? ctx.realIds : []) {
      const url = urlOf(get!, { ...params, [name]: { text: id } });
      const res = await env.app.inject({ method: 'GET', url, headers: usualAuth(get!, ctx) });
      if (res.statusCode === 200) {
        chosen = id;
        break;
      }
    }
    params[name] = { text: chosen };
  }
  return params;
}

interface Target {
  op: Operation;
  url: string;
  usualMs: number;
}

function requestOf(target: Target, kind: string, payload: string): FuzzRequest {
  return {
    kind,
    mustRefuse: false,
    method: target.op.method,
    url: target.url,
    headers: { 'content-type': 'application/json', ...usualAuth(target.op, ctx) },
    payload,
  };
}

/**
 * The operation's usual answer: the median of three sends of a plausible body, after a body of the
 * wrong type (the first refusal compiles the validator that lists every fault: kernel/http/validator.ts).
 */
async function usualMs(op: Operation, url: string): Promise<number> {
  const target = { op, url, usualMs: 0 };
  await send(requestOf(target, 'refused', '[]'));
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const { res, ms } = await send(requestOf(target, 'usual', toJsonText(plausible(op.body!))));
    if (op.access === 'session' && res.statusCode < 300) await signInAgain(env, ctx);
    times.push(ms);
  }
  return times.sort((a, b) => a - b)[1]!;
}

const kib = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;

/** How long parsing the text takes here: the unit of what reading a body costs on this machine. */
function parseMs(text: string): number {
  const started = performance.now();
  JSON.parse(text);
  return performance.now() - started;
}

// Enabled for the pass; reset before each request (the first sample after a reset only starts
// the count, hence the wait after it).
const loop = monitorEventLoopDelay({ resolution: 1 });

interface Attempt {
  res: Awaited<ReturnType<typeof send>>['res'];
  ms: number;
  /** The longest the event loop was held while the server handled the request. */
  heldMs: number;
  /** The time bound and the event loop's, from the yardstick measured just before. */
  bound: number;
  heldBound: number;
}

async function attempt(target: Target, req: FuzzRequest): Promise<Attempt> {
  const reading = parseMs(req.payload!);
  loop.reset();
  await sleep(2);
  const { res, ms } = await send(req);
  // A turn of the event loop, so that a delay the request caused is sampled.
  await sleep(1);
  if (target.op.access === 'session' && res.statusCode < 300) await signInAgain(env, ctx);
  return {
    res,
    ms,
    heldMs: loop.max / 1e6,
    bound: Math.max(SLOWER_AT_MOST * target.usualMs, FLOOR_MS + SLOWER_AT_MOST * reading),
    heldBound: LOOP_FLOOR_MS + SLOWER_AT_MOST * reading,
  };
}

/** How far over its bounds an attempt went: 1 at a bound. */
const overBy = (a: Attempt) => Math.max(a.ms / a.bound, a.heldMs / a.heldBound);

// Every body at the first two sizes; at the body limit, a sample of each operation's (a megabyte
// each: all of them would take minutes).
const steps = (limit: number) => [
  { size: 8 * 1024, all: true },
  { size: 64 * 1024, all: true },
  { size: limit - 1024, all: false },
];

// An answer over its bounds is tried twice more and judged by its best attempt: work that grows
// too fast is slow every time, a collection or another process's burst once.
const ATTEMPTS = 3;

describe('OpenAPI fuzzer: the largest bodies', () => {
  it('answers the largest bodies each schema admits about as fast as a usual one, never holding the event loop', async () => {
    const operations = operationsOf(doc);
    const only = process.env.FUZZ_LARGEST_ONLY;
    const targets: Target[] = [];
    const started = performance.now();
    for (const op of operations.filter((o) => o.body !== null && (!only || o.name.includes(only)))) {
      const url = urlOf(op, await realParams(op, operations));
      targets.push({ op, url, usualMs: await usualMs(op, url) });
    }
    console.info(
      `largest bodies: usual answers of ${targets.length} operations in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const failures: string[] = [];
    loop.enable();
    for (const step of steps(ctx.bodyLimit)) {
      const started = performance.now();
      let sent = 0;
      let closest = { ratio: 0, what: '' };
      for (const target of targets) {
        for (const body of largestBodies(target.op.body!, step.size)) {
          if (!step.all && !body.sample) continue;
          const req = requestOf(target, body.kind, body.payload);
          const what = `${target.op.name} [${body.kind}, ${kib(body.payload.length)}]`;
          let best = await attempt(target, req);
          const problems = problemsOf(target.op, req, best.res, checkErrorBody);
          for (let i = 1; i < ATTEMPTS && overBy(best) > 1; i++) {
            const again = await attempt(target, req);
            if (overBy(again) < overBy(best)) best = again;
          }
          sent++;
          if (best.ms > best.bound) {
            problems.push(
              `took ${best.ms.toFixed(0)} ms, over ${best.bound.toFixed(0)} (usual ${target.usualMs.toFixed(1)} ms)`,
            );
          }
          if (best.heldMs > best.heldBound) {
            problems.push(
              `held the event loop ${best.heldMs.toFixed(0)} ms, over ${best.heldBound.toFixed(0)}`,
            );
          }
          if (problems.length > 0) failures.push(`${what}: ${problems.join('; ')}`);
          if (overBy(best) > closest.ratio) {
            closest = {
              ratio: overBy(best),
              what: `${what} ${best.ms.toFixed(0)} ms, held ${best.heldMs.toFixed(0)} ms`,
            };
          }
        }
      }
      console.info(
        `largest bodies up to ${kib(step.size)}: ${targets.length} operations, ${sent} bodies in ${((performance.now() - started) / 1000).toFixed(1)} s; closest to its bounds ${(100 * closest.ratio).toFixed(0)} %: ${closest.what}`,
      );
      if (failures.length > 0) break;
    }
    loop.disable();
    expect(failures, failures.join('\n')).toEqual([]);
  }, 600_000);
});
