// Every operation of the committed document has a named method (besides the typed `request`): each
// method of each resource is called against a recording fetch, and the (method, path) pairs sent are
// matched to the document's operations. A new endpoint without a method fails here, naming it.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tidings } from '@tidings/sdk';
import { describe, expect, it } from 'vitest';

const sdkDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = JSON.parse(readFileSync(join(sdkDir, 'openapi.json'), 'utf8'));
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
// Called by providers (Meta, Twilio) and load balancers, not by API clients.
const NOT_FOR_CLIENTS = /^\/(api\/v1\/callbacks\/|healthz$|readyz$)/;

const operations: string[] = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
  .filter(([path]) => !NOT_FOR_CLIENTS.test(path))
  .flatMap(([path, ops]) => METHODS.filter((m) => m in ops).map((m) => `${m.toUpperCase()} ${path}`));

/** The document operation a request was for (a literal segment wins over a parameter). */
function operationOf(method: string, url: string): string | undefined {
  const path = new URL(url).pathname;
  const candidates = operations
    .filter((op) => op.startsWith(`${method} `))
    .filter((op) => new RegExp(`^${op.slice(method.length + 1).replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
  return candidates.sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))[0];
}

/** A value for a parameter, by its name in the method's signature. */
function argument(name: string): unknown {
  if (name === 'body') return {};
  if (name === 'file') return new Blob(['x'], { type: 'text/plain' });
  if (/Id$|^id$|^tag$|^label$|Token$/.test(name)) return 'x1';
  return undefined;
}

function parameterNames(fn: (...args: unknown[]) => unknown): string[] {
  const source = fn.toString();
  const list = source.slice(source.indexOf('(') + 1, source.indexOf(')'));
  return list
    .split(',')
    .map((p) => p.trim().split(/[\s=]/)[0]!)
    .filter(Boolean);
}

describe('named methods', () => {
  it('cover every client operation of the document', async () => {
    const sent = new Set<string>();
    const tidings = new Tidings({
      apiKey: 'tdg_live_x',
      baseUrl: 'http://sdk.test',
      fetch: async (input, init) => {
        const op = operationOf(init?.method ?? 'GET', String(input));
        sent.add(op ?? `unknown: ${init?.method} ${input}`);
        return Response.json({ data: [], nextCursor: null });
      },
    });
    const visit = async (resource: object, name: string) => {
      const proto = Object.getPrototypeOf(resource);
      for (const key of Object.getOwnPropertyNames(proto)) {
        if (key === 'constructor' || key === 'paginate') continue;
        const fn = proto[key] as (...args: unknown[]) => unknown;
        if (typeof fn !== 'function') continue;
        const answer = fn.apply(resource, parameterNames(fn).map(argument));
        // A list answers a PageIterator: ask for its first page. The event stream opens on its
        // first read (the recording fetch answers JSON, which it refuses: the request was made).
        if (answer && typeof answer === 'object' && Symbol.asyncIterator in answer && !('page' in answer)) {
          const events = (answer as AsyncIterable<unknown>)[Symbol.asyncIterator]();
          await events.next().catch(() => {});
          continue;
        }
        await (answer && typeof answer === 'object' && 'page' in answer
          ? (answer as { page(): unknown }).page()
          : answer);
      }
      for (const [key, value] of Object.entries(resource)) {
        if (value && typeof value === 'object' && 'paginate' in value) await visit(value, `${name}.${key}`);
      }
    };
    for (const [key, value] of Object.entries(tidings)) {
      if (value && typeof value === 'object' && 'paginate' in value) await visit(value, key);
    }
    expect([...sent].filter((op) => op.startsWith('unknown'))).toEqual([]);
    expect(operations.filter((op) => !sent.has(op))).toEqual([]);
    expect(sent.size).toBe(operations.length);
  });
});
