// @tidings/sdk: a typed client for the Tidings API, generated types from its OpenAPI document.
export { Tidings } from './client.js';
export { type ErrorPayload, TidingsConnectionError, TidingsError } from './errors.js';
export { EventStream, type EventStreamOptions } from './event-stream.js';
export { SDK_VERSION, type TidingsOptions } from './http.js';
export { type Page, PageIterator } from './pagination.js';
export { parseRetryAfter } from './retry.js';
export type {
  AnswerOf,
  BodyOf,
  CallOptions,
  EventType,
  HttpMethod,
  ItemOf,
  ListQuery,
  PathParams,
  PathsFor,
  paths,
  QueryOf,
  RequestInit,
  WebhookEvent,
  webhooks,
} from './types.js';
export { verifyWebhook, type WebhookHeaders, WebhookVerificationError } from './verify.js';
