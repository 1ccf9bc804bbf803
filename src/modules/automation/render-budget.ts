// How much text a rendering may write, counted while it is written. liquidjs builds its output in an
// emitter and counts time and some filters' allocations, not what is written: a loop over a long
// value (`{% for i in (1..200) %}{{ variables.b }}{% endfor %}`) built the whole text, 80 MB of it,
// before anything could look at its length. Here every write is counted first: past the field's
// budget the rendering stops (RenderLimitError), and every write, in any emitter (a capture's
// too), is charged to the rendering's memory limit.
import { toValue } from 'liquidjs';

export type OutputUnit = 'characters' | 'bytes';

/** Characters as JSON Schema's maxLength counts them (code points), counting stopped past `limit`. */
function codePointsUpTo(text: string, limit: number): number {
  let n = 0;
  for (let i = 0; i < text.length && n <= limit; i++) {
    const c = text.charCodeAt(i);
    // A low surrogate ends a pair whose high half was counted.
    if (c < 0xdc00 || c > 0xdfff) n++;
  }
  return n;
}

/**
 * The room one field's rendered text has: `max` characters (code points, as the API's schemas count)
 * or UTF-8 bytes (as Twilio counts text-to-speech). Texts that make one whole (the strings of a
 * webhook body) share one budget.
 */
export class OutputBudget {
  /** The field named when the budget is passed: `message.text`, `body`. */
  readonly field: string;
  readonly max: number;
  readonly unit: OutputUnit;
  /** Whose limit it is, for the error: "WhatsApp's limit for a text body". */
  readonly why: string | undefined;
  used = 0;

  constructor(field: string, max: number, unit: OutputUnit = 'characters', why?: string) {
    this.field = field;
    this.max = max;
    this.unit = unit;
    this.why = why;
  }

  /** What a text with no field of its own may render to: as long as a template may be written. */
  static default(): OutputBudget {
    return new OutputBudget('text', 4096);
  }

  /** Counts `text` in; false (nothing counted) when it does not fit in what is left. */
  spend(text: string): boolean {
    const room = this.max - this.used;
    const size = this.unit === 'bytes' ? Buffer.byteLength(text, 'utf8') : codePointsUpTo(text, room);
    if (size > room) return false;
    this.used += size;
    return true;
  }

  /** The issue, as an error names it: "renders to more than 4096 characters (…)". */
  issue(): string {
    return `renders to more than ${this.max} ${this.unit}${this.why ? ` (${this.why})` : ''}`;
  }
}

/** liquidjs' own rendering of a written value (its emitters' `stringify`). */
function stringify(value: unknown): string {
  const v = toValue(value);
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.map(stringify).join('');
  return String(v);
}

/** An emitter (liquidjs' interface) that counts each write before it keeps it. */
export class OutputEmitter {
  buffer = '';
  /** The budget was passed: the rendering was stopped for that, whatever liquidjs made of it. */
  overBudget = false;
  private readonly memory: { use(count: number): void };
  private readonly budget: OutputBudget | undefined;

  constructor(memory: { use(count: number): void }, budget?: OutputBudget) {
    this.memory = memory;
    this.budget = budget;
  }

  write(html: unknown): void {
    const text = stringify(html);
    if (this.budget && !this.budget.spend(text)) {
      this.overBudget = true;
      throw new Error(`${this.budget.field} ${this.budget.issue()}`);
    }
    this.memory.use(text.length);
    this.buffer += text;
  }
}
