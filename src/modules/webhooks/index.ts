export { WebhookDispatcher } from './dispatcher.ts';
export { webhookFanOut } from './outbox.ts';
export { ACCOUNT_WEBHOOKS, PARTNER_WEBHOOKS, webhookRoutes } from './routes.ts';
export { retryDelayMs } from './schedule.ts';
export { generateSecret, secretProblem, signatureHeaders } from './signing.ts';
