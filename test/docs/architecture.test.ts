// The module stack (docs/architecture.md § The stack) held over every import of src/, type-only
// ones included: no import points up the stack, no two units import each other through any path,
// and a module is entered from outside only through its index.ts. The drawing in the doc is the one
// place the order is written; this test reads it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cyclesOf, readImports, sourceFiles } from '../helpers/imports.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The unit a file belongs to: config, kernel, channels, a module folder, or app (composition). */
function unitOf(file: string): string {
  const parts = file.split('/');
  if (file === 'src/config.ts') return 'config';
  if (parts[1] === 'kernel') return 'kernel';
  if (parts[1] === 'channels') return 'channels';
  if (parts[1] === 'modules') return parts[2];
  return 'app';
}

/** The levels drawn in docs/architecture.md: `NN  unit unit …` lines of the section's first block. */
function drawnLevels(): Map<string, number> {
  const doc = readFileSync(`${ROOT}docs/architecture.md`, 'utf8');
  const section = doc.split(/\n## The stack\n/)[1]?.split(/\n## /)[0] ?? '';
  const block = section.split('```')[1] ?? '';
  const levels = new Map<string, number>();
  for (const line of block.split('\n')) {
    const row = /^\s*(\d+)\s+(.+?)\s*$/.exec(line);
    if (!row) continue;
    for (const unit of row[2].split(/\s+/)) {
      expect(levels.has(unit), `${unit} is drawn twice`).toBe(false);
      levels.set(unit, Number(row[1]));
    }
  }
  return levels;
}

const files = sourceFiles(ROOT, 'src');
const { edges, unresolved } = readImports(ROOT, files);
const levels = drawnLevels();

describe('the module stack', () => {
  it('reads every import of src/ to a file', () => {
    expect(files.length).toBeGreaterThan(300);
    expect(edges.length).toBeGreaterThan(1500);
    expect(edges.some((e) => e.typeOnly)).toBe(true);
    expect(unresolved).toEqual([]);
  });

  it('draws every unit of src/ once, and only those', () => {
    const units = new Set(files.map(unitOf));
    expect([...levels.keys()].sort()).toEqual([...units].sort());
  });

  it('has no import up the stack, no cycle between units, and enters modules by their index.ts', () => {
    const violations: string[] = [];
    const graph = new Map<string, Set<string>>();
    for (const edge of edges) {
      const from = unitOf(edge.from);
      if (!edge.to.startsWith('src/')) {
        // The CLI runs the SDK's source (packages/sdk/src); nothing else of src/ reaches outside it.
        if (from !== 'app') violations.push(`outside src/: ${edge.from} → ${edge.to}`);
        continue;
      }
      const to = unitOf(edge.to);
      if (from === to) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)?.add(to);
      if ((levels.get(to) ?? 0) > (levels.get(from) ?? 0))
        violations.push(
          `up: ${edge.from} → ${edge.to} (${from} ${levels.get(from)} → ${to} ${levels.get(to)})`,
        );
      if (edge.to.startsWith('src/modules/') && edge.to !== `src/modules/${to}/index.ts`)
        violations.push(`inside: ${edge.from} → ${edge.to}`);
    }
    for (const cycle of cyclesOf(graph)) violations.push(`cycle: ${cycle.join(' ')}`);
    expect(violations).toEqual([]);
  });

  it('has faces that export names, not SQL: no column list, no fragment, no whole file', () => {
    const faces = files.filter((f) => /^src\/modules\/[^/]+\/index\.ts$/.test(f));
    expect(faces.length).toBeGreaterThan(30);
    const problems: string[] = [];
    for (const face of faces) {
      const text = readFileSync(`${ROOT}${face}`, 'utf8');
      if (/export\s*\*/.test(text)) problems.push(`${face}: export *`);
      for (const list of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g))
        for (const name of list[1].split(',').map(
          (n) =>
            n
              .trim()
              .split(/\s+as\s+/)
              .pop() ?? '',
        ))
          if (/(COLUMNS|_SQL|[a-z]Sql|_FROM|_WHERE|[a-z]Condition)$/.test(name))
            problems.push(`${face}: ${name}`);
    }
    expect(problems).toEqual([]);
  });
});
