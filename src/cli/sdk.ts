// The SDK (packages/sdk) as the CLI uses it: from its source, not as the built package. The CLI runs
// from its .ts files by Node's type stripping, and so does the SDK's source (it imports its modules
// by their .ts names), while `@tidings/sdk` resolves to dist/, which only a build makes: importing
// the source keeps every command working on a fresh clone after `npm ci`. The modules the CLI needs,
// not the index: a command starts without loading the client's resources.
export {
  errorPayload,
  TidingsConnectionError,
  TidingsError,
} from '../../packages/sdk/src/errors.ts';
export { Transport } from '../../packages/sdk/src/http.ts';
export { parseRetryAfter } from '../../packages/sdk/src/retry.ts';
export { readEventStream, type SseMessage } from '../../packages/sdk/src/sse.ts';
export type { HttpMethod } from '../../packages/sdk/src/types.ts';
