// `tidings contacts list [--tag t]… [--limit n] [--all] [--json]`: GET /contacts, a page (or every
// page, following nextCursor) printed as a table as it arrives, or as JSON lines.
import { type Command, InvalidArgumentError } from 'commander';
import { apiJson } from '../api-client.ts';
import type { ConnectionFlags } from '../profiles.ts';
import { apiCommand, collect, runWithConnection } from './command.ts';

interface Contact {
  id: string;
  phone: string;
  name: string | null;
  tags: string[];
}

interface ListOptions extends ConnectionFlags {
  tag?: string[];
  limit?: number;
  all?: boolean;
  json?: boolean;
}

function pageSize(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 100)
    throw new InvalidArgumentError('must be a whole number from 1 to 100.');
  return n;
}

const NAME_WIDTH = 24;

/** Fixed widths (ids and phones have bounded lengths), so each page prints as soon as it comes. */
function row(id: string, phone: string, name: string, tags: string): string {
  const cut = name.length > NAME_WIDTH ? `${name.slice(0, NAME_WIDTH - 1)}…` : name;
  return `${id.padEnd(30)}  ${phone.padEnd(16)}  ${cut.padEnd(NAME_WIDTH)}  ${tags}`.trimEnd();
}

export function contactLine(c: Contact): string {
  return row(c.id, c.phone, c.name ?? '', c.tags.join(','));
}

export function contactsListCommand(): Command {
  return apiCommand('list', 'list contacts, newest first: a table, or JSON lines')
    .option('--tag <tag>', 'only contacts with this tag (repeat it: every tag given)', collect)
    .option('--limit <n>', 'contacts per page, 1–100 (default: 20; 100 with --all)', pageSize)
    .option('--all', 'every page, not only the first')
    .option('--json', 'one contact a line, as the API gives it')
    .action((opts: ListOptions) =>
      runWithConnection('tidings contacts list', opts, async (connection) => {
        const limit = opts.limit ?? (opts.all ? 100 : 20);
        if (!opts.json) process.stdout.write(`${row('ID', 'PHONE', 'NAME', 'TAGS')}\n`);
        let cursor: string | undefined;
        let shown = 0;
        do {
          const page = await apiJson<{ data: Contact[]; nextCursor: string | null }>(
            connection,
            'GET',
            '/contacts',
            {
              query: { limit, cursor, tag: opts.tag },
            },
          );
          const text = page.data.map((c) => (opts.json ? JSON.stringify(c) : contactLine(c)));
          if (text.length) process.stdout.write(`${text.join('\n')}\n`);
          shown += page.data.length;
          cursor = page.nextCursor ?? undefined;
        } while (opts.all && cursor);
        // The count and whether there is more go to stderr, so stdout stays the list alone.
        const more = cursor ? ' (more: --all, or a larger --limit)' : '';
        process.stderr.write(`${shown} contact${shown === 1 ? '' : 's'}${more}\n`);
      }),
    );
}
