// What a lazily loaded page shows while its code (or its data) arrives.
export function Loading({ what = 'Loading…' }: { what?: string }) {
  return (
    <p className="muted" role="status">
      {what}
    </p>
  );
}
