// An API error as the API said it: its message, code, the fields it names, and the request id to
// quote. Announced to screen readers (role=alert) when it appears.
import type { ShownError } from '../api.ts';

function fieldIssues(details: unknown): { field: string; issue: string }[] {
  if (!Array.isArray(details)) return [];
  return details.filter(
    (d): d is { field: string; issue: string } =>
      typeof d === 'object' && d !== null && typeof d.field === 'string' && typeof d.issue === 'string',
  );
}

export function ErrorMessage({ error }: { error: ShownError | null }) {
  if (!error) return null;
  const issues = fieldIssues(error.details);
  return (
    <div className="error-box" role="alert">
      <p className="error-message">{error.message}</p>
      {issues.length > 0 ? (
        <ul>
          {issues.map((i) => (
            <li key={`${i.field}:${i.issue}`}>
              <code>{i.field}</code>: {i.issue}
            </li>
          ))}
        </ul>
      ) : null}
      {error.code ? (
        <p className="error-meta">
          <code>{error.code}</code>
          {error.requestId ? <> · request {error.requestId}</> : null}
        </p>
      ) : null}
    </div>
  );
}
