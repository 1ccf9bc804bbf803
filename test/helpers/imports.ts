// Every import of src/, read from the text: `import … from`, `import type … from`, `export … from`,
// bare `import '…'` and `import('…')`, each resolved to the file it names. The reader is a scanner,
// not a parser: architecture.test.ts checks that every specifier it finds resolves to a file, so a
// form it misread fails the test rather than hiding an edge.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export interface ImportEdge {
  /** Repository-relative path of the importing file (`src/modules/messages/status.ts`). */
  from: string;
  /** Repository-relative path of the imported file. */
  to: string;
  /** The specifier as written. */
  spec: string;
  typeOnly: boolean;
}

const FORMS = [
  /(?:^|[\n;}])\s*(import|export)(\s+type\b)?[^;'"`]*?\bfrom\s*['"]([^'"]+)['"]/g,
  /(?:^|[\n;}])\s*(import)()\s*['"]([^'"]+)['"]/g,
  /\b(import)()\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** Line and block comments blanked (strings kept), so a commented-out import is not read. */
function withoutComments(text: string): string {
  return text.replace(
    /("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g,
    (all, str) => (str ? all : all.replace(/[^\n]/g, ' ')),
  );
}

export function sourceFiles(root: string, folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name)) out.push(relative(root, path).split(sep).join('/'));
    }
  };
  walk(join(root, folder));
  return out.sort();
}

/** The file a relative specifier names, or null when none exists. */
function resolveSpec(root: string, from: string, spec: string): string | null {
  const base = resolve(root, dirname(from), spec);
  for (const candidate of [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && !candidate.endsWith(sep)) {
      try {
        readFileSync(candidate);
        return relative(root, candidate).split(sep).join('/');
      } catch {
        // a directory: try the next form
      }
    }
  }
  return null;
}

export interface ImportReading {
  edges: ImportEdge[];
  /** Relative specifiers that name no file: the reader or the code is wrong. */
  unresolved: { from: string; spec: string }[];
}

export function readImports(root: string, files: string[]): ImportReading {
  const edges: ImportEdge[] = [];
  const unresolved: { from: string; spec: string }[] = [];
  for (const from of files) {
    const text = withoutComments(readFileSync(join(root, from), 'utf8'));
    for (const form of FORMS) {
      for (const match of text.matchAll(form)) {
        const spec = match[3];
        if (!spec.startsWith('.')) continue;
        const to = resolveSpec(root, from, spec);
        if (to) edges.push({ from, to, spec, typeOnly: Boolean(match[2]) });
        else unresolved.push({ from, spec });
      }
    }
  }
  return { edges, unresolved };
}

/** The strongly connected components with more than one member (Tarjan). */
export function cyclesOf(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}
