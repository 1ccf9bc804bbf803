// `tidings messages get msg_…`: GET /messages/{id}, shown field by field (or `--json`).
import type { Command } from 'commander';
import { apiJson } from '../api-client.ts';
import type { ConnectionFlags } from '../profiles.ts';
import { apiCommand, runWithConnection } from './command.ts';

interface Message {
  id: string;
  direction: string;
  type: string;
  to: string | null;
  from: string | null;
  status: string;
  template: { name: string; language: string; body: string } | null;
  text: string | null;
  error: { code: string; message: string } | null;
  createdAt: string;
  [field: string]: unknown;
}

/** The fields a person looks at first, one a line; the rest are in --json. */
export function formatMessage(m: Message): string {
  const rows: [string, unknown][] = [
    ['id', m.id],
    ['status', m.status],
    ['direction', m.direction],
    ['type', m.type],
    [m.direction === 'inbound' ? 'from' : 'to', m.direction === 'inbound' ? m.from : m.to],
    ['template', m.template ? `${m.template.name} (${m.template.language})` : null],
    ['text', m.template?.body ?? m.text],
    ['error', m.error ? `${m.error.code}: ${m.error.message}` : null],
    ['created', m.createdAt],
  ];
  return rows
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([name, value]) => `${name.padEnd(10)} ${value}\n`)
    .join('');
}

export function messagesGetCommand(): Command {
  return apiCommand('get', 'show a message: its status, content and error')
    .argument('<id>', 'the message id (msg_…)')
    .option('--json', 'print the API’s answer as JSON')
    .action((id: string, opts: ConnectionFlags & { json?: boolean }) =>
      runWithConnection('tidings messages get', opts, async (connection) => {
        const message = await apiJson<Message>(connection, 'GET', `/messages/${encodeURIComponent(id)}`);
        process.stdout.write(opts.json ? `${JSON.stringify(message)}\n` : formatMessage(message));
      }),
    );
}
