// The developer portal (account admins, and partner admins on the account they picked): the
// WhatsApp number (connecting it, its profile), API keys,
// webhooks and their deliveries, usage, wallet, team (members and their console invitations). Loaded on first visit (route-level splitting); the
// usage page, which brings uPlot, is a chunk of its own.
import { lazy, Suspense } from 'react';
import { Navigate, Route, Routes } from 'react-router-dom';
import { Loading } from '../../components/Loading.tsx';
import { SubNav } from '../../components/SubNav.tsx';
import { KeysPage } from './KeysPage.tsx';
import { TeamPage } from './TeamPage.tsx';
import { WalletPage } from './WalletPage.tsx';
import { WebhookPage } from './WebhookPage.tsx';
import { WebhooksPage } from './WebhooksPage.tsx';
import { WhatsAppPage } from './WhatsAppPage.tsx';

const UsagePage = lazy(() => import('./UsagePage.tsx'));

const LINKS = [
  { to: '/portal/whatsapp', label: 'WhatsApp' },
  { to: '/portal/keys', label: 'API keys' },
  { to: '/portal/webhooks', label: 'Webhooks' },
  { to: '/portal/usage', label: 'Usage' },
  { to: '/portal/wallet', label: 'Wallet' },
  { to: '/portal/team', label: 'Team' },
];

export default function PortalSection() {
  return (
    <>
      <SubNav label="Developer portal" links={LINKS} />
      <Suspense fallback={<Loading />}>
        <Routes>
          <Route index element={<Navigate to="keys" replace />} />
          <Route path="whatsapp" element={<WhatsAppPage />} />
          <Route path="keys" element={<KeysPage />} />
          <Route path="webhooks" element={<WebhooksPage />} />
          <Route path="webhooks/:id" element={<WebhookPage />} />
          <Route path="usage" element={<UsagePage />} />
          <Route path="wallet" element={<WalletPage />} />
          <Route path="team" element={<TeamPage />} />
          <Route path="*" element={<Navigate to="keys" replace />} />
        </Routes>
      </Suspense>
    </>
  );
}
