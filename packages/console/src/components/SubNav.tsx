// The pages of one section (the developer portal's keys, webhooks, usage, wallet) as a row of
// links; the current one is marked (aria-current) by NavLink.
import { NavLink } from 'react-router-dom';
import './pieces.css';

export function SubNav({ label, links }: { label: string; links: { to: string; label: string }[] }) {
  return (
    <nav className="subnav" aria-label={label}>
      <ul>
        {links.map((l) => (
          <li key={l.to}>
            <NavLink to={l.to}>{l.label}</NavLink>
          </li>
        ))}
      </ul>
    </nav>
  );
}
