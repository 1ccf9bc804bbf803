// Voice and campaigns, read only (admins): calls, WhatsApp broadcast campaigns and voice
// campaigns with their counters; a detail of each.
import type { ItemOf } from '@tidings/sdk';
import { Link, Route, Routes, useParams } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { dateTime, money } from '../../components/format.ts';
import { KeyValues } from '../../components/KeyValues.tsx';
import { Badge, Listing } from '../../components/Listing.tsx';
import { useOne, usePaged } from '../../components/usePaged.ts';
import '../../components/components.css';

type Call = ItemOf<'/api/v1/public/voice/calls'>;
type Campaign = ItemOf<'/api/v1/public/campaigns'>;
type VoiceCampaign = ItemOf<'/api/v1/public/voice/campaigns'>;

export default function VoicePage() {
  return (
    <Routes>
      <Route index element={<Overview />} />
      <Route path="calls/:id" element={<CallDetail />} />
      <Route path="campaigns/:id" element={<CampaignDetail />} />
      <Route path="voice-campaigns/:id" element={<VoiceCampaignDetail />} />
    </Routes>
  );
}

function Overview() {
  const { api } = useAccount();
  const calls = usePaged<Call>((cursor) => api.calls.list({ limit: 50, cursor }), [api]);
  const campaigns = usePaged<Campaign>((cursor) => api.campaigns.list({ limit: 50, cursor }), [api]);
  const voiceCampaigns = usePaged<VoiceCampaign>(
    (cursor) => api.voiceCampaigns.list({ limit: 50, cursor }),
    [api],
  );
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Voice and campaigns</h1>
      <p className="muted">Read only: calls and campaigns are made and run through the API.</p>
      <h2>Campaigns</h2>
      <Listing<Campaign>
        caption="WhatsApp campaigns"
        list={campaigns}
        rowKey={(c) => c.id}
        empty="No campaigns."
        columns={[
          { header: 'Name', cell: (c) => <Link to={`/voice/campaigns/${c.id}`}>{c.name}</Link> },
          { header: 'Status', cell: (c) => <Badge value={c.status} /> },
          { header: 'Total', cell: (c) => c.counters.total, numeric: true },
          { header: 'Sent', cell: (c) => c.counters.sent, numeric: true },
          { header: 'Delivered', cell: (c) => c.counters.delivered, numeric: true },
          { header: 'Read', cell: (c) => c.counters.read, numeric: true },
          { header: 'Failed', cell: (c) => c.counters.failed, numeric: true },
        ]}
      />
      <h2>Voice campaigns</h2>
      <Listing<VoiceCampaign>
        caption="Voice campaigns"
        list={voiceCampaigns}
        rowKey={(c) => c.id}
        empty="No voice campaigns."
        columns={[
          { header: 'Name', cell: (c) => <Link to={`/voice/voice-campaigns/${c.id}`}>{c.name}</Link> },
          { header: 'Status', cell: (c) => <Badge value={c.status} /> },
          { header: 'Total', cell: (c) => c.counters.total, numeric: true },
          { header: 'Answered', cell: (c) => c.counters.answered, numeric: true },
          { header: 'Completed', cell: (c) => c.counters.completed, numeric: true },
          { header: 'Failed', cell: (c) => c.counters.failed, numeric: true },
        ]}
      />
      <h2>Calls</h2>
      <Listing<Call>
        caption="Calls, newest first"
        list={calls}
        rowKey={(c) => c.id}
        empty="No calls."
        columns={[
          { header: 'To', cell: (c) => <Link to={`/voice/calls/${c.id}`}>{c.to}</Link> },
          { header: 'Status', cell: (c) => <Badge value={c.status} /> },
          { header: 'Duration (s)', cell: (c) => c.durationSeconds ?? '—', numeric: true },
          { header: 'Charged', cell: (c) => money(c.charged), numeric: true },
          { header: 'Queued', cell: (c) => dateTime(c.queuedAt) },
        ]}
      />
    </section>
  );
}

function Back() {
  return (
    <p>
      <Link to="/voice">← Voice and campaigns</Link>
    </p>
  );
}

function CallDetail() {
  const { id = '' } = useParams();
  const { api } = useAccount();
  const call = useOne(() => api.calls.get(id), [api, id]);
  const c = call.value;
  return (
    <section aria-labelledby="page-title">
      <Back />
      <h1 id="page-title">{c ? `Call to ${c.to}` : 'Call'}</h1>
      <ErrorMessage error={call.error} />
      {c ? (
        <KeyValues
          rows={[
            ['Status', <Badge key="s" value={c.status} />],
            ['From', c.from],
            ['Script', `${c.scriptId} v${c.scriptVersion}`],
            ['Answered by', c.answeredBy],
            ['Digits', c.digits.map((d) => `${d.nodeId}: ${d.input}`).join(', ') || null],
            ['Duration (s)', c.durationSeconds],
            ['Price', money(c.price)],
            ['Charged', money(c.charged)],
            ['Campaign', c.campaignId],
            ['Queued', dateTime(c.queuedAt)],
            ['Answered', dateTime(c.answeredAt)],
            ['Ended', dateTime(c.endedAt)],
            ['Error', c.error ? `${c.error.code}: ${c.error.message}` : null],
          ]}
        />
      ) : null}
    </section>
  );
}

function CampaignDetail() {
  const { id = '' } = useParams();
  const { api } = useAccount();
  const campaign = useOne(() => api.campaigns.get(id), [api, id]);
  const c = campaign.value;
  return (
    <section aria-labelledby="page-title">
      <Back />
      <h1 id="page-title">{c ? `Campaign: ${c.name}` : 'Campaign'}</h1>
      <ErrorMessage error={campaign.error} />
      {c ? (
        <>
          <KeyValues
            rows={[
              ['Status', <Badge key="s" value={c.status} />],
              ['Template', `${c.message.templateName} (${c.message.templateLanguage})`],
              ['Paused because', c.pausedReason],
              ['Estimated cost', money(c.cost.estimated)],
              ['Charged', money(c.cost.charged)],
              ['Started', dateTime(c.startedAt)],
              ['Completed', dateTime(c.completedAt)],
            ]}
          />
          <h2>Counters</h2>
          <KeyValues rows={Object.entries(c.counters).map(([k, v]) => [k, v])} />
        </>
      ) : null}
    </section>
  );
}

function VoiceCampaignDetail() {
  const { id = '' } = useParams();
  const { api } = useAccount();
  const campaign = useOne(() => api.voiceCampaigns.get(id), [api, id]);
  const c = campaign.value;
  return (
    <section aria-labelledby="page-title">
      <Back />
      <h1 id="page-title">{c ? `Voice campaign: ${c.name}` : 'Voice campaign'}</h1>
      <ErrorMessage error={campaign.error} />
      {c ? (
        <>
          <KeyValues
            rows={[
              ['Status', <Badge key="s" value={c.status} />],
              ['Script', c.scriptId],
              ['Estimated cost', money(c.estimatedCost)],
              ['Calls per second', c.pacing.callsPerSecond],
              ['Started', dateTime(c.startedAt)],
              ['Ended', dateTime(c.endedAt)],
            ]}
          />
          <h2>Counters</h2>
          <KeyValues rows={Object.entries(c.counters).map(([k, v]) => [k, v])} />
        </>
      ) : null}
    </section>
  );
}
