// @tidings/sdk: a typed client for the Tidings API, generated types from its OpenAPI document.
export { Tidings } from './client.ts';
export { type ErrorPayload, TidingsConnectionError, TidingsError } from './errors.ts';
export { EventStream, type EventStreamOptions } from './event-stream.ts';
export { EVENT_TYPES } from './generated/event-types.ts';
export { SDK_VERSION, type TidingsOptions } from './http.ts';
export { type Page, PageIterator } from './pagination.ts';
export { parseRetryAfter } from './retry.ts';
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
} from './types.ts';
export { verifyWebhook, type WebhookHeaders, WebhookVerificationError } from './verify.ts';
