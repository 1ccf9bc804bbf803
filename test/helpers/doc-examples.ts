// The request examples of a docs page, read as docs/README.md § Examples defines them, so that
// test/docs/page-examples.test.ts can run each as written:
//
// - An example is a fenced `sh` block holding `curl` commands (a block with no `curl` is not one:
//   `npm start`, `npx tidings …`). Every command of an example block calls the API through
//   `$BASE`, with the README's variables (`$BASE`, `$API_KEY`, `$SANDBOX_KEY`, `$PARTNER_KEY`,
//   `$ACCOUNT`, the function `field`) or ones the page set itself (`CSRF=$(curl … | field csrfToken)`).
// - An id written as its prefix and an ellipsis (`tpl_…`, `vsc_…`) is the one an earlier answer on
//   the page gave (the latest of that prefix: an answer's own `id` or `…Id` field, or one its
//   error's details name). A JSON string holding an ellipsis (`"token": "…"`,
//   `"accessToken": "EAAG…"`) is the value of that field in an earlier answer, or else yours (a
//   credential, the bootstrap token).
// - The comment lines right after a command (`# → 201 {"id": "cmp_…", "status": "draft", …}`), or a
//   comment at its end (`# → 204`), say what it answers: the status, with the error code for an
//   error (`# → 409 ALREADY_BOOTSTRAPPED`), and the fields the answer has (text values, booleans
//   and nulls as shown; numbers, amounts and values with an ellipsis are illustrations). Without one, any
//   2xx. `again: 409 CONFLICT` says what the same command answers when run a second time, where
//   that differs (a template of the same name exists by then).
// - A `json` block is an answer, an error or a file, never run; nor are request shapes written in
//   the prose (`PATCH {"position": 2}`).
import { readFileSync } from 'node:fs';

/** An answer a command may give: a status (with its error code), or any 2xx. */
export interface Expected {
  status: number | 'any 2xx';
  code: string | null;
}

export interface Command {
  /** The command as written (continuation lines and multi-line quotes included). */
  text: string;
  /** Its first line in the page, from 1. */
  line: number;
  /** What the first run may answer: the documented status, or one its `or` names. */
  expected: Expected[];
  /** What a second run may answer, when the page says it differs. */
  again: Expected[] | null;
  /** The documented answer's JSON after the status (fields to find in the real one), or ''. */
  shape: string;
}

export interface ExampleBlock {
  page: string;
  /** `page#section`, with `-2`, `-3` … for a section's later blocks: the key of AWAITING lists. */
  key: string;
  line: number;
  commands: Command[];
}

/** GitHub's anchor of a heading. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

interface Scan {
  /** Ends inside a quote, or with a line continuation: the command goes on. */
  open: boolean;
  /** The text of its comments (outside quotes). */
  comments: string;
}

/** A shell reading of `text`: where quotes and comments are. */
function scan(text: string): Scan {
  let quote: "'" | '"' | null = null;
  let comments = '';
  let continued = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = null;
    } else if (quote === '"') {
      if (c === '\\') i++;
      else if (c === '"') quote = null;
    } else if (c === '\\') {
      continued = i === text.length - 1;
      i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) {
      const end = text.indexOf('\n', i);
      comments += `${text.slice(i + 1, end === -1 ? undefined : end)}\n`;
      i = end === -1 ? text.length : end;
    }
  }
  return { open: quote !== null || continued, comments };
}

const STATUS = String.raw`(\d{3})(?:\s+([A-Z][A-Z_]{2,}))?`;

/** The statuses a text names: the first, then each `or NNN CODE`. */
function statuses(text: string, first: RegExp): Expected[] {
  const m = first.exec(text);
  if (!m) return [];
  const or = [...text.matchAll(new RegExp(String.raw`\bor\s+${STATUS}`, 'g'))];
  return [m, ...or].map((x) => ({ status: Number(x[1]), code: x[2] ?? null }));
}

/** The first JSON object or array of a text, its brackets balanced (strings taken as strings). */
function firstJson(text: string): string {
  const start = text.search(/[{[]/);
  if (start === -1) return '';
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return text.slice(start);
}

function expectation(text: string): Pick<Command, 'expected' | 'again' | 'shape'> {
  const [now = '', later] = text.split(/\bagain:/);
  const arrow = new RegExp(String.raw`→\s*${STATUS}`);
  const expected = statuses(now, arrow);
  const documented = expected[0];
  const isError = typeof documented?.status === 'number' && documented.status >= 400;
  const after = arrow.exec(now) ? now.slice(now.search(arrow)) : (/→([\s\S]*)/.exec(now)?.[1] ?? '');
  // Right after the status (or the arrow), before any prose: the documented answer.
  const rest = after.replace(arrow, '');
  return {
    expected: expected.length ? expected : [{ status: 'any 2xx', code: null }],
    again: later === undefined ? null : statuses(later, new RegExp(STATUS)),
    shape: isError || !/^\s*[{[]/.test(rest) ? '' : firstJson(rest),
  };
}

/** The commands of one `sh` block, each with the answer the comments after it document. */
export function commandsOf(block: string, firstLine: number): Command[] {
  const commands: Omit<Command, 'expected' | 'again' | 'shape'>[] = [];
  const answers: string[] = [];
  let current: { text: string; line: number } | null = null;
  let answering = false;
  block.split('\n').forEach((line, i) => {
    if (current) {
      current.text += `\n${line}`;
    } else if (line.trim() === '') {
      answering = false;
      return;
    } else if (line.trimStart().startsWith('#')) {
      if (answering) answers[answers.length - 1] += `${line.trimStart().slice(1)}\n`;
      return;
    } else current = { text: line, line: firstLine + i };
    if (!scan(current.text).open) {
      commands.push(current);
      answers.push(scan(current.text).comments);
      current = null;
      answering = true;
    }
  });
  if (current) throw new Error(`line ${(current as { line: number }).line}: a quote or a \\ is never closed`);
  return commands.map((c, i) => ({ ...c, ...expectation(answers[i]!) }));
}

/** Every example block of a page (docs/README.md § Examples). */
export function examplesOf(page: string, markdown = readFileSync(page, 'utf8')): ExampleBlock[] {
  const blocks: ExampleBlock[] = [];
  const seen = new Map<string, number>();
  let section = '';
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const heading = /^#{1,6}\s+(.*)$/.exec(lines[i]!);
    if (heading) section = slug(heading[1]!);
    const fence = /^(\s*)```(\w*)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const indent = fence[1]!.length;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++;
    const body = lines
      .slice(start, end)
      .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
      .join('\n');
    i = end;
    if (!/\bcurl\b/.test(body)) continue;
    if (fence[2] !== 'sh') throw new Error(`${page}:${start}: a block with curl commands must be \`\`\`sh`);
    const n = (seen.get(section) ?? 0) + 1;
    seen.set(section, n);
    blocks.push({
      page,
      key: `${page}#${section}${n > 1 ? `-${n}` : ''}`,
      line: start,
      commands: commandsOf(body, start + 1),
    });
  }
  return blocks;
}

/** The command without its comments (what bash runs). */
export function withoutComments(text: string): string {
  let out = text;
  for (const comment of scan(text).comments.split('\n').filter(Boolean)) out = out.replace(`#${comment}`, '');
  return out;
}

/** Field names, and the text, boolean and null values, a documented answer shows. */
export function shapeOf(documented: string): { keys: string[]; values: [string, unknown][] } {
  const keys = [...documented.matchAll(/"(\w+)"\s*:/g)].map((m) => m[1]!);
  const values: [string, unknown][] = [];
  for (const m of documented.matchAll(/"(\w+)"\s*:\s*("(?:[^"\\]|\\.)*"|true|false|null)/g)) {
    const value = JSON.parse(m[2]!);
    // Illustrations: values with an ellipsis, and amounts ("124.5000"), as numbers are.
    if (typeof value === 'string' && (value.includes('…') || /^-?\d+(\.\d+)?$/.test(value))) continue;
    values.push([m[1]!, value]);
  }
  return { keys, values };
}

/** Every [key, value] pair of a JSON value, depth first; the top level's last (it wins). */
export function pairsOf(value: unknown): [string, unknown][] {
  const out: [string, unknown][] = [];
  const walk = (v: unknown, top: boolean) => {
    if (Array.isArray(v)) for (const item of v) walk(item, false);
    else if (v && typeof v === 'object') {
      const entries = Object.entries(v);
      for (const [, child] of entries) walk(child, false);
      for (const entry of entries) if (!top) out.push(entry);
      if (top) out.push(...entries);
    }
  };
  walk(value, true);
  return out;
}

/** What in a documented answer the real answer lacks: missing fields, other values. */
export function shapeMisses(documented: string, answer: unknown): string[] {
  const pairs = pairsOf(answer);
  const has = new Set(pairs.map(([k]) => k));
  const { keys, values } = shapeOf(documented);
  const misses = keys.filter((k) => !has.has(k)).map((k) => `no "${k}"`);
  for (const [k, v] of values) {
    if (has.has(k) && !pairs.some(([pk, pv]) => pk === k && pv === v))
      misses.push(`"${k}" is not ${JSON.stringify(v)}`);
  }
  return [...new Set(misses)];
}
