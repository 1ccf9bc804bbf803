// A browser page already signed in: a console session made through the API (helpers/console.ts),
// its cookie put in a fresh browser context as a sign-in would set it.
import type { BrowserContext, Page } from 'playwright-core';
import { type BrowserEnv, DESKTOP, openPage } from './browser.ts';
import type { Session } from './console.ts';

export async function signedInPage(
  env: BrowserEnv,
  session: Session,
  path: string,
  viewport = DESKTOP,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const opened = await openPage(env, viewport);
  await opened.context.addCookies([
    { name: 'tidings_session', value: session.cookie, url: env.base, httpOnly: true, sameSite: 'Lax' },
  ]);
  await opened.page.goto(`/console${path}`);
  return opened;
}
