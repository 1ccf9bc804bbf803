// Automation, read only (admins): rules with their runs, sequences with their enrollments, and
// journeys with their runs and a run's steps. Changes are made through the API.
import type { ItemOf } from '@tidings/sdk';
import { Link, Route, Routes, useParams } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { dateTime } from '../../components/format.ts';
import { KeyValues } from '../../components/KeyValues.tsx';
import { Badge, Listing } from '../../components/Listing.tsx';
import { useOne, usePaged } from '../../components/usePaged.ts';
import '../../components/components.css';

type Rule = ItemOf<'/api/v1/public/rules'>;
type RuleRun = ItemOf<'/api/v1/public/rules/{id}/runs'>;
type Sequence = ItemOf<'/api/v1/public/sequences'>;
type Enrollment = ItemOf<'/api/v1/public/sequences/{id}/enrollments'>;
type Journey = ItemOf<'/api/v1/public/journeys'>;
type JourneyRun = ItemOf<'/api/v1/public/journeys/{id}/runs'>;

export default function AutomationPage() {
  return (
    <Routes>
      <Route index element={<Overview />} />
      <Route path="rules/:id" element={<RuleDetail />} />
      <Route path="sequences/:id" element={<SequenceDetail />} />
      <Route path="journeys/:id" element={<JourneyDetail />} />
      <Route path="journeys/:id/runs/:runId" element={<JourneyRunDetail />} />
    </Routes>
  );
}

const READ_ONLY = 'Read only: rules, sequences and journeys are made and changed through the API.';

function Overview() {
  const { api } = useAccount();
  const rules = usePaged<Rule>((cursor) => api.rules.list({ limit: 100, cursor }), [api]);
  const sequences = usePaged<Sequence>((cursor) => api.sequences.list({ limit: 100, cursor }), [api]);
  const journeys = usePaged<Journey>((cursor) => api.journeys.list({ limit: 100, cursor }), [api]);
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Automation</h1>
      <p className="muted">{READ_ONLY}</p>
      <h2>Rules</h2>
      <Listing<Rule>
        caption="Rules, in the order they run"
        list={rules}
        rowKey={(r) => r.id}
        empty="No rules."
        columns={[
          { header: 'Name', cell: (r) => <Link to={`/automation/rules/${r.id}`}>{r.name}</Link> },
          { header: 'When', cell: (r) => <code>{r.trigger.event}</code> },
          { header: 'Actions', cell: (r) => r.actions.map((a) => a.type).join(', ') },
          { header: 'Status', cell: (r) => <Badge value={r.status} /> },
        ]}
      />
      <h2>Sequences</h2>
      <Listing<Sequence>
        caption="Sequences"
        list={sequences}
        rowKey={(s) => s.id}
        empty="No sequences."
        columns={[
          { header: 'Name', cell: (s) => <Link to={`/automation/sequences/${s.id}`}>{s.name}</Link> },
          { header: 'Steps', cell: (s) => s.steps.length, numeric: true },
          { header: 'Version', cell: (s) => s.version, numeric: true },
          { header: 'Status', cell: (s) => <Badge value={s.status} /> },
        ]}
      />
      <h2>Journeys</h2>
      <Listing<Journey>
        caption="Journeys"
        list={journeys}
        rowKey={(j) => j.id}
        empty="No journeys."
        columns={[
          { header: 'Name', cell: (j) => <Link to={`/automation/journeys/${j.id}`}>{j.name}</Link> },
          {
            header: 'Starts',
            cell: (j) => (j.entry.trigger === 'event' ? <code>{j.entry.event}</code> : 'by the API'),
          },
          { header: 'Version', cell: (j) => j.version, numeric: true },
          { header: 'Status', cell: (j) => <Badge value={j.status} /> },
        ]}
      />
    </section>
  );
}

function Back() {
  return (
    <p>
      <Link to="/automation">← Automation</Link>
    </p>
  );
}

function RuleDetail() {
  const { id = '' } = useParams();
  const { api } = useAccount();
  const rule = useOne(() => api.rules.get(id), [api, id]);
  const runs = usePaged<RuleRun>((cursor) => api.rules.runs(id, { limit: 50, cursor }), [api, id]);
  const r = rule.value;
  return (
    <section aria-labelledby="page-title">
      <Back />
      <h1 id="page-title">{r ? `Rule: ${r.name}` : 'Rule'}</h1>
      <ErrorMessage error={rule.error} />
      {r ? (
        <KeyValues
          rows={[
            ['Status', <Badge key="s" value={r.status} />],
            [
              'When',
              <code key="w">
                {r.trigger.event}
                {r.trigger.after ? ` + ${r.trigger.after}` : ''}
              </code>,
            ],
            ['Conditions', JSON.stringify(r.conditions)],
            ['Actions', r.actions.map((a) => a.type).join(', ')],
            ['Description', r.description],
            ['Created', dateTime(r.createdAt)],
          ]}
        />
      ) : null}
      <Listing<RuleRun>
        caption="Runs, newest first"
        list={runs}
        rowKey={(run) => run.id}
        empty="No runs yet."
        columns={[
          { header: 'At', cell: (run) => dateTime(run.createdAt) },
          { header: 'Outcome', cell: (run) => <Badge value={run.status} /> },
          { header: 'Event', cell: (run) => <code>{run.eventId}</code> },
          { header: 'Contact', cell: (run) => run.contactId ?? '—' },
          {
            header: 'Actions',
            cell: (run) =>
              run.actions.length === 0
                ? '—'
                : run.actions
                    .map((a) => `${a.type}: ${a.status}${a.error ? ` (${a.error.message})` : ''}`)
                    .join('; '),
          },
          { header: 'Reason', cell: (run) => run.reason ?? '—' },
        ]}
      />
    </section>
  );
}

function SequenceDetail() {
  const { id = '' } = useParams();
  const { api } = useAccount();
  const sequence = useOne(() => api.sequences.get(id), [api, id]);
  const enrollments = usePaged<Enrollment>(
    (cursor) => api.sequences.enrollments.list(id, { limit: 50, cursor }),
    [api, id],
  );
  const s = sequence.value;
  return (
    <section aria-labelledby="page-title">
      <Back />
      <h1 id="page-title">{s ? `Sequence: ${s.name}` : 'Sequence'}</h1>
      <ErrorMessage error={sequence.error} />
      {s ? (
        <KeyValues
          rows={[
            ['Status', <Badge key="s" value={s.status} />],
            ['Version', s.version],
            ['Steps', s.steps.map((st) => st.id).join(', ')],
            ['Description', s.description],
            ['Created', dateTime(s.createdAt)],
          ]}
        />
      ) : null}
      <Listing<Enrollment>
        caption="Enrollments"
        list={enrollments}
        rowKey={(e) => e.id}
        empty="No enrollments yet."
        columns={[
          { header: 'Contact', cell: (e) => e.contactId },
          { header: 'Status', cell: (e) => <Badge value={e.status} /> },
          { header: 'Current step', cell: (e) => e.currentStepId ?? '—' },
          { header: 'Next at', cell: (e) => dateTime(e.nextRunAt) },
          {
            header: 'Ended',
            cell: (e) =>
              e.endedAt ? `${dateTime(e.endedAt)}${e.exitReason ? ` (${e.exitReason})` : ''}` : '—',
          },
        ]}
      />
    </section>
  );
}

function JourneyDetail() {
  const { id = '' } = useParams();
  const { api } = useAccount();
  const journey = useOne(() => api.journeys.get(id), [api, id]);
  const runs = usePaged<JourneyRun>((cursor) => api.journeys.runs(id, { limit: 50, cursor }), [api, id]);
  const j = journey.value;
  return (
    <section aria-labelledby="page-title">
      <Back />
      <h1 id="page-title">{j ? `Journey: ${j.name}` : 'Journey'}</h1>
      <ErrorMessage error={journey.error} />
      {j ? (
        <KeyValues
          rows={[
            ['Status', <Badge key="s" value={j.status} />],
            ['Version', j.version],
            ['Starts', j.entry.trigger === 'event' ? j.entry.event : 'by the API'],
            ['Description', j.description],
            ['Created', dateTime(j.createdAt)],
          ]}
        />
      ) : null}
      <Listing<JourneyRun>
        caption="Runs, newest first"
        list={runs}
        rowKey={(r) => r.id}
        empty="No runs yet."
        columns={[
          { header: 'Run', cell: (r) => <Link to={`/automation/journeys/${id}/runs/${r.id}`}>{r.id}</Link> },
          { header: 'Contact', cell: (r) => r.contactId },
          { header: 'Status', cell: (r) => <Badge value={r.status} /> },
          { header: 'At node', cell: (r) => r.currentNodeId ?? '—' },
          { header: 'Started', cell: (r) => dateTime(r.startedAt) },
        ]}
      />
    </section>
  );
}

function JourneyRunDetail() {
  const { id = '', runId = '' } = useParams();
  const { api } = useAccount();
  const run = useOne(() => api.journeys.getRun(id, runId), [api, id, runId]);
  const r = run.value;
  return (
    <section aria-labelledby="page-title">
      <p>
        <Link to={`/automation/journeys/${id}`}>← The journey</Link>
      </p>
      <h1 id="page-title">Journey run</h1>
      <ErrorMessage error={run.error} />
      {r ? (
        <>
          <KeyValues
            rows={[
              ['Run', <code key="r">{r.id}</code>],
              ['Status', <Badge key="s" value={r.status} />],
              ['Contact', r.contactId],
              ['Version', r.journeyVersion],
              ['Started', dateTime(r.startedAt)],
              ['Ended', dateTime(r.endedAt)],
              ['Error', r.error ? `${r.error.code}: ${r.error.message}` : null],
            ]}
          />
          <Listing
            caption="Steps, in order"
            list={{
              items: r.steps,
              error: null,
              loading: false,
              hasMore: false,
              more: () => {},
              reload: run.reload,
              setItems: () => {},
            }}
            rowKey={(s) => `${s.nodeId}:${s.startedAt}`}
            empty="No steps yet."
            columns={[
              { header: 'Node', cell: (s) => <code>{s.nodeId}</code> },
              { header: 'Type', cell: (s) => s.type },
              { header: 'Status', cell: (s) => <Badge value={s.status} /> },
              { header: 'Took', cell: (s) => s.edge ?? '—' },
              { header: 'Started', cell: (s) => dateTime(s.startedAt) },
              { header: 'Error', cell: (s) => (s.error ? `${s.error.code}: ${s.error.message}` : '—') },
            ]}
          />
        </>
      ) : null}
    </section>
  );
}
