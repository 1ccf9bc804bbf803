// Cursor pages: list operations answer `{ data, nextCursor }` and take `cursor` (the previous
// page's nextCursor) and `limit` (1–100). A PageIterator is an async iterable over every item of
// every page, fetched one page at a time as the loop asks for more.

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export class PageIterator<T> implements AsyncIterable<T> {
  readonly #fetchPage: (cursor: string | undefined) => Promise<Page<T>>;
  readonly #start: string | undefined;

  constructor(fetchPage: (cursor: string | undefined) => Promise<Page<T>>, startCursor?: string) {
    this.#fetchPage = fetchPage;
    this.#start = startCursor;
  }

  /** The first page (or the page at the cursor the list was called with). */
  page(): Promise<Page<T>> {
    return this.#fetchPage(this.#start);
  }

  /** Every page, in order. */
  async *pages(): AsyncGenerator<Page<T>> {
    let cursor = this.#start;
    for (;;) {
      const page = await this.#fetchPage(cursor);
      yield page;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item in one array (up to `max`, default 10 000, to bound memory). */
  async toArray(max = 10_000): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) {
      if (out.length >= max) break;
      out.push(item);
    }
    return out;
  }
}
