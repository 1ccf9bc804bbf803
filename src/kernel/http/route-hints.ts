// What the not-found handler says when no route answers: the methods a path does take (for a 405
// with Allow), or the path the caller probably meant (the API lives under /api/v1/public; a path
// without /public, or without any prefix, is the usual first stumble). Read from the route table
// the onRoute hook fills, so a route added later is covered without being listed here.
import type { RouteInfo } from '../context.ts';

interface Pattern {
  method: string;
  regex: RegExp;
}

function regexOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((part) => {
      if (part.startsWith(':')) return '[^/]+';
      if (part === '*') return '.*';
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}$`);
}

export class RouteHints {
  readonly #routes: RouteInfo[];
  readonly #prefix: string;
  #patterns: Pattern[] = [];
  #seen = -1;

  /** `routes` is the live table (filled as routes register); `prefix` the API's, /api/v1/public. */
  constructor(routes: RouteInfo[], prefix: string) {
    this.#routes = routes;
    this.#prefix = prefix;
  }

  #table(): Pattern[] {
    if (this.#seen !== this.#routes.length) {
      this.#patterns = this.#routes.map((r) => ({ method: r.method, regex: regexOf(r.url) }));
      this.#seen = this.#routes.length;
    }
    return this.#patterns;
  }

  /** The methods some route takes on this path, as an Allow header lists them (HEAD with GET). */
  allowed(path: string): string[] {
    const methods = new Set(
      this.#table()
        .filter((p) => p.regex.test(path))
        .map((p) => p.method),
    );
    if (methods.has('GET')) methods.add('HEAD');
    const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
    return [...methods].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  }

  /** The path under the API prefix a prefix-less or /api/v1-only path means, when it exists. */
  suggestion(path: string): string | null {
    if (path.startsWith(`${this.#prefix}/`)) return null;
    const base = this.#prefix.replace(/\/public$/, '');
    const rest = path.startsWith(`${base}/`) ? path.slice(base.length) : path;
    const candidate = `${this.#prefix}${rest}`;
    return this.allowed(candidate).length > 0 ? candidate : null;
  }
}
