// The signed-in frame: a header (the console's name, the menu button on narrow screens, who is
// signed in), the nav of the sections the role may use, and the page. Below 640 px the nav folds
// behind the menu button (aria-expanded), so a 390 px phone gets the whole width for the page.
import { type ReactNode, useEffect, useId, useState } from 'react';
import { NavLink, useLocation } from 'react-router-dom';
import type { ConsoleUser } from '../api.ts';
import { ROLE_NAMES, type Section } from '../nav.ts';

interface Props {
  user: ConsoleUser;
  sections: Section[];
  /** The partner admin's account picker, or nothing. */
  accountPicker?: ReactNode;
  /** Sign out, sign out everywhere. */
  actions: ReactNode;
  children: ReactNode;
}

export function Layout({ user, sections, accountPicker, actions, children }: Props) {
  const [open, setOpen] = useState(false);
  const navId = useId();
  const location = useLocation();
  // A followed link closes the folded menu.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on each navigation
  useEffect(() => setOpen(false), [location.pathname]);

  return (
    <div className="layout">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          className="btn btn-quiet menu-toggle"
          aria-expanded={open}
          aria-controls={navId}
          onClick={() => setOpen((o) => !o)}
        >
          Menu
        </button>
        <span className="brand">Tidings</span>
        <span className="whoami">
          <span className="whoami-name">{user.name}</span>
          <span className="whoami-role">{ROLE_NAMES[user.role]}</span>
        </span>
      </header>
      <div className="body">
        <nav id={navId} className={`sidenav${open ? ' open' : ''}`} aria-label="Console">
          {accountPicker}
          <ul>
            {sections.map((s) => (
              <li key={s.path}>
                <NavLink to={`/${s.path}`}>{s.label}</NavLink>
              </li>
            ))}
          </ul>
          <div className="nav-actions">{actions}</div>
        </nav>
        <main id="main" tabIndex={-1}>
          {children}
        </main>
      </div>
    </div>
  );
}
