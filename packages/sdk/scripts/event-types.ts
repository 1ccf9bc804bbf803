// Writes src/generated/event-types.ts from openapi.json: the event types the document's webhook
// event names (the enum of its `type`), as a value for the SDK to export: the generated schema
// holds them as a type only, and a page listing them (the console's webhook form) needs the list.
// `npm run generate` runs it after openapi-typescript; test/document.test.ts fails when the
// committed file is not what it makes of the committed document.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SDK_DIR = fileURLToPath(new URL('..', import.meta.url));
export const EVENT_TYPES_PATH = `${SDK_DIR}src/generated/event-types.ts`;

interface Schema {
  properties?: Record<string, { enum?: unknown[] }>;
}

/** The module's text for an OpenAPI document. */
export function eventTypesModule(document: {
  webhooks?: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: Schema }> } } }>;
}): string {
  const schema = document.webhooks?.event?.post?.requestBody?.content?.['application/json']?.schema;
  const types = schema?.properties?.type?.enum;
  if (!types?.length || !types.every((t) => typeof t === 'string')) {
    throw new Error('openapi.json: the webhook event has no `type` enum');
  }
  return [
    '// Generated from openapi.json by scripts/event-types.ts (npm run sdk:generate): do not edit.',
    "import type { EventType } from '../types.ts';",
    '',
    "/** The event types a webhook may subscribe to, in the document's order. */",
    `export const EVENT_TYPES = [${types.map((t) => JSON.stringify(t)).join(', ')}] as const satisfies readonly EventType[];`,
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const document = JSON.parse(readFileSync(`${SDK_DIR}openapi.json`, 'utf8'));
  writeFileSync(EVENT_TYPES_PATH, eventTypesModule(document));
}
