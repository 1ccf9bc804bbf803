// A paged list as a table: the rows read so far, "Loading…" while the first page comes, the API's
// error, and the next page on demand.

import { LoadMore } from './LoadMore.tsx';
import { type Column, Table } from './Table.tsx';
import type { Paged } from './usePaged.ts';

interface Props<T> {
  caption: string;
  list: Paged<T>;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  empty?: string;
}

export function Listing<T>({ caption, list, columns, rowKey, empty = 'None yet.' }: Props<T>) {
  return (
    <>
      <Table<T>
        caption={caption}
        rows={list.items ?? []}
        rowKey={rowKey}
        columns={columns}
        empty={list.items === null ? (list.error ? 'Could not be read.' : 'Loading…') : empty}
      />
      <LoadMore list={list} />
    </>
  );
}

export function Badge({ value }: { value: string }) {
  return <span className={`badge badge-${value.toLowerCase()}`}>{value}</span>;
}
