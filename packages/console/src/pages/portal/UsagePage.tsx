// Usage: API calls per day (GET /account/usage?from&to) against the plan's monthly quota
// (GET /account: plan, limits.monthlyQuota, usage this month). A chunk of its own: it brings uPlot.
import { useAccount } from '../../account.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { count } from '../../components/format.ts';
import { UsageExplorer } from '../../components/UsageReport.tsx';
import { useLoad } from '../../components/useLoad.ts';

export default function UsagePage() {
  const { api } = useAccount();
  const account = useLoad(() => api.account.get(), [api]);
  const a = account.data;

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Usage
      </h1>
      <ErrorMessage error={account.error} />
      {a ? (
        <div className="block">
          <h2>This month ({a.usage.period})</h2>
          <dl className="summary">
            <dt>Plan</dt>
            <dd>{a.plan.name}</dd>
            <dt>API calls</dt>
            <dd>{count(a.usage.calls)}</dd>
            <dt>Monthly quota</dt>
            <dd>{a.limits.monthlyQuota === null ? 'Unlimited' : count(a.limits.monthlyQuota)}</dd>
            <dt>Remaining</dt>
            <dd>{a.usage.remaining === null ? 'Unlimited' : count(a.usage.remaining)}</dd>
            <dt>Rate limit</dt>
            <dd>{count(a.limits.requestsPerSecond)} calls per second</dd>
          </dl>
        </div>
      ) : null}
      <UsageExplorer
        loadKey={api}
        load={(range) => api.request('get', '/api/v1/public/account/usage', { query: range })}
        quota={a ? a.limits.monthlyQuota : undefined}
        caption="API calls per day (UTC)"
      />
    </section>
  );
}
