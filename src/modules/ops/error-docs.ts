// The error documentation page (/docs/errors), rendered from docs/errors.md: one section per code,
// each with its status. A test keeps this page and the catalogue in sync.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ERRORS_MD = fileURLToPath(new URL('../../../docs/errors.md', import.meta.url));

export interface DocumentedError {
  code: string;
  status: number;
}

export function readErrorDocs(path = ERRORS_MD): string {
  return readFileSync(path, 'utf8');
}

/** The codes the page documents, with the status each section states. */
export function documentedErrors(markdown: string): DocumentedError[] {
  const out: DocumentedError[] = [];
  for (const section of markdown.split(/^## /m).slice(1)) {
    const code = section.split('\n')[0].trim();
    const status = /^Status: (\d{3})$/m.exec(section)?.[1];
    out.push({ code, status: status ? Number(status) : Number.NaN });
  }
  return out;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function inline(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

/** A small renderer for the subset of Markdown the page uses: headings, paragraphs, code blocks. */
export function renderErrorDocs(markdown: string): string {
  const blocks = markdown.split(/\n{2,}/);
  const body = blocks
    .map((block) => {
      if (block.startsWith('```')) return `<pre>${escapeHtml(block.replace(/^```\w*\n?|```$/g, ''))}</pre>`;
      if (block.startsWith('## ')) {
        const code = block.slice(3).trim();
        return `<h2 id="${code}"><a href="#${code}">${code}</a></h2>`;
      }
      if (block.startsWith('# ')) return `<h1>${inline(block.slice(2))}</h1>`;
      return `<p>${inline(block)}</p>`;
    })
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tidings API errors</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}
pre{background:#f4f4f4;padding:1rem;overflow:auto}code{background:#f4f4f4;padding:0 .2rem}h2 a{color:inherit}</style>
</head><body>${body}</body></html>`;
}
