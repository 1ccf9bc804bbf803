// `tidings send --to +1… --text "…"` or `--template NAME --language CODE [--param v]…`:
// POST /messages with an Idempotency-Key; prints the message's id and status.
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { ApiCallError, apiJson } from '../api-client.ts';
import type { ConnectionFlags } from '../profiles.ts';
import { UsageError } from '../usage-error.ts';
import { apiCommand, collect, runWithConnection } from './command.ts';

interface SendOptions extends ConnectionFlags {
  to: string;
  text?: string;
  template?: string;
  language?: string;
  param?: string[];
  var?: string[];
  idempotencyKey?: string;
  json?: boolean;
}

/** The body POST /messages takes, from the options (one of text or template). */
export function sendBody(o: SendOptions): Record<string, unknown> {
  if ((o.text === undefined) === (o.template === undefined)) {
    throw new UsageError('give either --text or --template (with --language)');
  }
  if (o.text !== undefined) {
    if (o.language || o.param || o.var) {
      throw new UsageError('--language, --param and --var go with --template, not --text');
    }
    return { to: o.to, type: 'text', text: o.text };
  }
  if (!o.language) throw new UsageError('--template needs --language (e.g. en_US)');
  if (o.param && o.var)
    throw new UsageError('give --param (a positional template) or --var (a named one), not both');
  const body: Record<string, unknown> = { to: o.to, templateName: o.template, templateLanguage: o.language };
  if (o.param) body.parameters = o.param;
  if (o.var) {
    const named: Record<string, string> = {};
    for (const pair of o.var) {
      const at = pair.indexOf('=');
      if (at < 1) throw new UsageError(`--var takes name=value (got ${JSON.stringify(pair)})`);
      named[pair.slice(0, at)] = pair.slice(at + 1);
    }
    body.parameters = named;
  }
  return body;
}

export function sendCommand(): Command {
  return apiCommand('send', 'send a message: a free-form text, or an approved template')
    .requiredOption('--to <phone>', 'the recipient, in international format (+14155552000)')
    .option('--text <text>', 'a free-form text (inside the customer service window)')
    .option('--template <name>', 'an approved template of the account')
    .option('--language <code>', "the template's language, e.g. en_US")
    .option('--param <value>', 'a positional template parameter, in order (repeat it)', collect)
    .option('--var <name=value>', "a named template's parameter (repeat it)", collect)
    .option(
      '--idempotency-key <key>',
      'the Idempotency-Key to send (default: a new one); reuse it to retry safely',
    )
    .option('--json', 'print the API’s answer as JSON')
    .action((opts: SendOptions) =>
      runWithConnection('tidings send', opts, async (connection) => {
        const body = sendBody(opts);
        const idempotencyKey = opts.idempotencyKey ?? randomUUID();
        try {
          const message = await apiJson<{ id: string; status: string }>(connection, 'POST', '/messages', {
            body,
            idempotencyKey,
          });
          process.stdout.write(
            opts.json ? `${JSON.stringify(message)}\n` : `${message.id}\t${message.status}\n`,
          );
        } catch (err) {
          // Whether a message was made is unknown: the same key, sent again, cannot make a second one.
          if (err instanceof ApiCallError && (err.status === null || err.status >= 500)) {
            process.stderr.write(`tidings send: retry safely with --idempotency-key ${idempotencyKey}\n`);
          }
          throw err;
        }
      }),
    );
}
