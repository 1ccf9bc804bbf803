// The boxed page used before signing in (first run, sign in, invitation).
import type { ReactNode } from 'react';

export function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main id="main" className="auth-page">
      <div className="auth-card">
        <p className="brand">Tidings</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
