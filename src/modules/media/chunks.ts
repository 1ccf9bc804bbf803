// A file cut into the chunks it is stored in (media_chunks, CHUNK_BYTES each but the last) and
// hashed as its bytes arrive, so that it is held in memory once, whatever size its pieces come in.
import { createHash } from 'node:crypto';
import { CHUNK_BYTES } from './kinds.ts';

export class ChunkedFile {
  readonly chunks: Buffer[] = [];
  readonly #hash = createHash('sha256');
  #pending: Buffer[] = [];
  #pendingSize = 0;
  #size = 0;

  get sizeBytes(): number {
    return this.#size;
  }

  add(data: Buffer): void {
    this.#size += data.length;
    this.#hash.update(data);
    let rest = data;
    while (this.#pendingSize + rest.length >= CHUNK_BYTES) {
      const take = CHUNK_BYTES - this.#pendingSize;
      this.#pending.push(rest.subarray(0, take));
      this.chunks.push(Buffer.concat(this.#pending, CHUNK_BYTES));
      this.#pending = [];
      this.#pendingSize = 0;
      rest = rest.subarray(take);
    }
    if (rest.length > 0) {
      // Copied: a stream may reuse the buffer it handed over.
      this.#pending.push(Buffer.from(rest));
      this.#pendingSize += rest.length;
    }
  }

  /** The last chunk closed; answers the hex SHA-256 of all the bytes. */
  finish(): string {
    if (this.#pendingSize > 0) this.chunks.push(Buffer.concat(this.#pending, this.#pendingSize));
    this.#pending = [];
    this.#pendingSize = 0;
    return this.#hash.digest('hex');
  }
}
