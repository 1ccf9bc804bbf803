// The rejects file: the rows that did not go in, with their line and error.
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Row } from './chunks.ts';
import type { RowError } from './types.ts';

/** One CSV line; fields with a comma, quote or line break are quoted. */
export function csvLine(values: string[]): string {
  return `${values.map((v) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v)).join(',')}\n`;
}

/** `CODE: message`, plus the field issues the message does not already say. */
export function describeError(error: RowError): string {
  const issues = (error.details ?? []).filter((d) => !error.message.includes(`${d.field} ${d.issue}`));
  const extra = issues.map((d) => `${d.field} ${d.issue}`).join('; ');
  return `${error.code}: ${error.message}${extra ? ` (${extra})` : ''}`;
}

/** The rejected rows as the original columns plus `line` and `error`; created at the first reject. */
export class RejectsFile {
  readonly path: string;
  readonly #header: string[];
  #stream: WriteStream | null = null;
  count = 0;

  constructor(path: string, header: string[]) {
    this.path = path;
    this.#header = header;
  }

  async #write(text: string): Promise<void> {
    if (!this.#stream) {
      this.#stream = createWriteStream(this.path);
      // Errors reach the awaits below (once, finished); this keeps them from crashing the process.
      this.#stream.on('error', () => {});
      await once(this.#stream, 'open');
      this.#stream.write(csvLine([...this.#header, 'line', 'error']));
    }
    if (!this.#stream.write(text)) await once(this.#stream, 'drain');
  }

  async add(row: Row, error: RowError): Promise<void> {
    const cells = this.#header.map((_, i) => row.record[i] ?? '');
    this.count++;
    await this.#write(csvLine([...cells, String(row.line), describeError(error)]));
  }

  async close(): Promise<void> {
    if (!this.#stream) return;
    this.#stream.end();
    await finished(this.#stream);
  }
}
