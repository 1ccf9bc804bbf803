// The face of webhooks: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { WebhookDispatcher } from './dispatcher.ts';
export { webhookFanOut } from './outbox.ts';
export { ACCOUNT_WEBHOOKS, PARTNER_WEBHOOKS, webhookRoutes } from './routes.ts';
export { retryDelayMs } from './schedule.ts';
export { generateSecret, secretProblem, signatureHeaders } from './signing.ts';
