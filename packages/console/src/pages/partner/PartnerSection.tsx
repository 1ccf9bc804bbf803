// Partner admin (partner admins only): the partner's accounts, provisioning, and each account's
// plan, wallet credits, status and usage; the partner's Meta app (its Embedded Signup). Loaded on first visit (route-level splitting).
import { Navigate, Route, Routes } from 'react-router-dom';
import { AccountPage } from './AccountPage.tsx';
import { AccountsPage } from './AccountsPage.tsx';
import { MetaAppPage } from './MetaAppPage.tsx';

export default function PartnerSection() {
  return (
    <Routes>
      <Route index element={<AccountsPage />} />
      <Route path="accounts" element={<Navigate to="/partner" replace />} />
      <Route path="accounts/:id" element={<AccountPage />} />
      <Route path="meta-app" element={<MetaAppPage />} />
      <Route path="*" element={<Navigate to="/partner" replace />} />
    </Routes>
  );
}
