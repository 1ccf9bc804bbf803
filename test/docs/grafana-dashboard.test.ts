// The Grafana dashboard shipped in docs/grafana-dashboard.json reads only metrics that /metrics
// serves (a renamed metric would leave a panel silently empty), and is a dashboard Grafana can
// import: every panel has an id, a place, the data source variable and at least one query.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/app.ts';
import { createTestDatabase, type TestDatabase, testConfig } from '../helpers/harness.ts';

// Grafana's own placeholder syntax, not a template string.
const DATASOURCE_VARIABLE = ['$', '{datasource}'].join('');
const dashboard = JSON.parse(
  readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8'),
);

let tdb: TestDatabase;
let app: App;
beforeAll(async () => {
  tdb = await createTestDatabase();
  // With the process metrics, as a server collects them (the suite's apps leave them out).
  app = await buildApp(testConfig(), { db: tdb.db, processMetrics: true });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await tdb?.drop();
});

const queries = (): string[] =>
  [
    ...dashboard.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr)),
    ...dashboard.templating.list
      .filter((v: { type: string }) => v.type === 'query')
      .map((v: { definition: string }) => v.definition),
  ] as string[];

describe('the Grafana dashboard', () => {
  it('reads only metrics that /metrics serves', async () => {
    const served = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const names = new Set(served.split('\n').flatMap((line) => /^# TYPE (\S+) /.exec(line)?.[1] ?? []));
    const read = new Set(queries().flatMap((q) => q.match(/\btidings_[a-z0-9_]+/g) ?? []));
    expect(read.size).toBeGreaterThan(8);
    // A histogram is served under its name; its series add _bucket, _sum and _count.
    const missing = [...read].filter(
      (m) => !names.has(m) && !names.has(m.replace(/_(bucket|sum|count)$/, '')),
    );
    expect(missing).toEqual([]);
  });

  it('is importable: every panel placed, on the data source variable, with a query', () => {
    expect(dashboard.uid).toBe('tidings-overview');
    const ids = dashboard.panels.map((p: { id: number }) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) {
      expect(p.gridPos).toEqual({
        x: expect.any(Number),
        y: expect.any(Number),
        w: expect.any(Number),
        h: expect.any(Number),
      });
      expect(p.datasource).toEqual({ type: 'prometheus', uid: DATASOURCE_VARIABLE });
      expect(p.targets.length).toBeGreaterThan(0);
      for (const t of p.targets) expect(t.expr).toMatch(/tidings_/);
    }
  });
});
