// The document's `info.description`: what the docs UI (/docs) opens on. A quickstart first, short
// and true to the README's walkthrough, then where errors, retries and limits are described.
export function introduction(publicBaseUrl: string): string {
  return `Self-hostable business messaging: send WhatsApp-style messages, keep contacts, templates and conversations, receive signed webhooks, pay per message from a wallet, and provision client sub-accounts as a partner.

## Quickstart

1. **Get a key.** \`npm start\` prints a one-time bootstrap token: \`POST /partner/bootstrap\` with it as a Bearer token answers your partner key (\`tdg_partner_…\`). Create an account with \`POST /partner/accounts\`, then its key with \`POST /partner/accounts/{id}/keys\` (\`scope\`: \`live\` or \`sandbox\`). Keys are shown once.
2. **Authenticate** every call with the \`X-Api-Key\` header (set it under Authentication here to try calls). A partner key acts on one of its accounts by naming it in \`X-Account-Id\`.
3. **Send.** Every account starts on the sandbox channel: nothing leaves the machine and nothing is charged, yet every status and event happens. Create a template (\`POST /templates\`), submit it (\`POST /templates/{id}/submit\`), and once it is \`APPROVED\` send it: \`POST /messages\` with \`to\`, \`templateName\`, \`templateLanguage\` and \`parameters\`. Follow it with \`GET /messages/{id}\`.
4. **Receive events.** \`POST /webhooks\` with your URL and the events you want (\`message.*\`); the answer shows the signing secret once. Deliveries are signed (Standard Webhooks) and described under **webhooks**.

## Good to know

- **Errors** all have one body, \`{"error": {"code", "message", "docs", "details"?, "requestId"}}\`; each operation lists its codes by status, explained at ${publicBaseUrl}/docs/errors. Unknown fields and query parameters are refused, not ignored.
- **Retries:** a POST with an \`Idempotency-Key\` header can be retried safely for 24 hours (the replay carries \`Idempotent-Replayed: true\`). On 429 and 503, wait \`Retry-After\` seconds.
- **Limits:** \`X-RateLimit-*\` headers show the per-second rate, \`X-Quota-*\` the month's API calls on a plan with a quota.
- **Lists** are cursor pages, \`{"data": [...], "nextCursor"}\`: pass \`nextCursor\` as \`cursor\`.`;
}
