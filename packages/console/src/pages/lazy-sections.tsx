// The pages of the inbox side (inbox, contacts, templates, automation and voice read views), each
// its own chunk loaded when first opened: the first load stays small (test/console-app.test.ts).
import { type ComponentType, lazy, Suspense } from 'react';

const PAGES: Record<string, ComponentType> = {
  inbox: lazy(() => import('./inbox/InboxPage.tsx')),
  contacts: lazy(() => import('./contacts/ContactsPage.tsx')),
  templates: lazy(() => import('./templates/TemplatesPage.tsx')),
  automation: lazy(() => import('./automation/AutomationPage.tsx')),
  voice: lazy(() => import('./voice/VoicePage.tsx')),
};

/** The section's page, or null when it has none yet. */
export function lazySection(path: string) {
  const Page = PAGES[path];
  if (!Page) return null;
  return (
    <Suspense
      fallback={
        <p className="muted" role="status">
          Loading…
        </p>
      }
    >
      <Page />
    </Suspense>
  );
}
