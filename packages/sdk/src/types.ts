// Type helpers over the generated `paths` (src/generated/schema.ts): every request and answer type
// of the SDK is derived from the served OpenAPI document by operation path + method, never from
// component names, so a document that renames or hoists schemas regenerates without code changes.
import type { paths, webhooks } from './generated/schema.ts';

export type { paths, webhooks };

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The document's paths that have an operation for `M`. */
export type PathsFor<M extends HttpMethod> = {
  [P in keyof paths]-?: undefined extends paths[P][M] ? never : P;
}[keyof paths];

/** The operation object of `M` on `P`. */
export type Operation<M extends HttpMethod, P extends PathsFor<M>> = NonNullable<paths[P][M]>;

type ParamsOf<O> = O extends { parameters: infer X } ? X : never;

/** Path parameters, e.g. `{ id: string }` (undefined when the path has none). */
export type PathParams<M extends HttpMethod, P extends PathsFor<M>> =
  ParamsOf<Operation<M, P>> extends {
    path?: infer T;
  }
    ? T
    : undefined;

/** Query parameters (undefined when the operation takes none). */
export type QueryOf<M extends HttpMethod, P extends PathsFor<M>> =
  ParamsOf<Operation<M, P>> extends {
    query?: infer T;
  }
    ? T
    : undefined;

type ContentBody<C> = C extends { 'application/json': infer J }
  ? J
  : C extends { 'multipart/form-data': unknown }
    ? FormData
    : unknown;

/** The request body: the JSON shape, FormData for multipart uploads, undefined when none is taken. */
export type BodyOf<M extends HttpMethod, P extends PathsFor<M>> =
  Operation<M, P> extends {
    requestBody?: infer B;
  }
    ? B extends { content: infer C }
      ? ContentBody<C>
      : undefined
    : undefined;

type SuccessStatus = 200 | 201 | 202 | 204;

type AnswerOfResponse<R> = R extends { content: { 'application/json': infer J } }
  ? J
  : R extends { content: Record<string, unknown> }
    ? Blob
    : undefined;

/** The success answer: the JSON body, a Blob for files, undefined for 204. */
export type AnswerOf<M extends HttpMethod, P extends PathsFor<M>> =
  Operation<M, P> extends {
    responses: infer R;
  }
    ? { [S in keyof R & SuccessStatus]: AnswerOfResponse<R[S]> }[keyof R & SuccessStatus]
    : never;

/** Makes `K` required when `T` is required, optional when `T` may be undefined, absent when never. */
type Slot<K extends string, T> = [T] extends [never]
  ? { [k in K]?: undefined }
  : [T] extends [undefined]
    ? { [k in K]?: undefined }
    : undefined extends T
      ? { [k in K]?: T }
      : // biome-ignore lint/complexity/noBannedTypes: an object with no required key
        {} extends T
        ? { [k in K]?: T }
        : { [k in K]: T };

/** Per-call options every method accepts. */
export interface CallOptions {
  /** Extra headers for this call. */
  headers?: Record<string, string>;
  /** The Idempotency-Key of a POST (one is generated otherwise, and reused on its retries). */
  idempotencyKey?: string;
  /** Cancels the call (and its retries). */
  signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout. */
  timeoutMs?: number;
  /** Overrides the client's maxRetries. */
  maxRetries?: number;
}

/** The second argument of `request(method, path, init)`. */
export type RequestInit<M extends HttpMethod, P extends PathsFor<M>> = Slot<'params', PathParams<M, P>> &
  Slot<'query', QueryOf<M, P>> &
  Slot<'body', BodyOf<M, P>> &
  CallOptions;

/** A list operation's item type (the answer's `data` entries). */
export type ItemOf<P extends PathsFor<'get'>> = AnswerOf<'get', P> extends { data: (infer T)[] } ? T : never;

/** A list operation's query without the cursor (the iterator moves it). */
export type ListQuery<P extends PathsFor<'get'>> = Omit<NonNullable<QueryOf<'get', P>>, 'cursor'> & {
  cursor?: string;
};

/** An event as delivered to a webhook URL (the document's `webhooks.event` body). */
export type WebhookEvent = NonNullable<
  webhooks['event']['post']
>['requestBody']['content']['application/json'];

/** The event types a webhook may subscribe to. */
export type EventType = WebhookEvent['type'];
