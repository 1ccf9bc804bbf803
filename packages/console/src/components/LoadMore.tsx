// What a paged list shows under it: its error, "Loading…", or the button for the next page.

import { Button } from './Button.tsx';
import { ErrorMessage } from './ErrorMessage.tsx';
import type { Paged } from './usePaged.ts';

export function LoadMore<T>({ list, label = 'Load more' }: { list: Paged<T>; label?: string }) {
  return (
    <>
      <ErrorMessage error={list.error} />
      {list.loading ? (
        <p className="muted" role="status">
          Loading…
        </p>
      ) : list.hasMore ? (
        <Button onClick={list.more}>{label}</Button>
      ) : null}
    </>
  );
}
