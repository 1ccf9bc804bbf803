// API calls per day over a range: a uPlot chart (bars per day, the month's running total, and the
// plan's monthly quota when there is one) and the same numbers in a table, which is what screen
// readers get (the canvas is one image with a summary). Only the pages that show usage import
// this file, so uPlot stays out of the console's first load.
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { Button } from './Button.tsx';
import { ErrorMessage } from './ErrorMessage.tsx';
import { Field } from './Field.tsx';
import { count, day } from './format.ts';
import './pieces.css';
import { type Column, Table } from './Table.tsx';
import { useLoad } from './useLoad.ts';

export interface UsageData {
  from: string;
  to: string;
  totalCalls: number;
  days: { date: string; calls: number }[];
}

interface Row {
  date: string;
  calls: number;
  /** Calls since the 1st of that month (what the monthly quota counts). */
  monthToDate: number;
}

const DAY_MS = 86_400_000;

/** Every day of the range (the API leaves out days without calls), with the month's running total. */
export function usageRows(report: UsageData): Row[] {
  const byDate = new Map(report.days.map((d) => [d.date, d.calls]));
  const rows: Row[] = [];
  let running = 0;
  for (let t = Date.parse(report.from); t <= Date.parse(report.to); t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    if (date.endsWith('-01')) running = 0;
    const calls = byDate.get(date) ?? 0;
    running += calls;
    rows.push({ date, calls, monthToDate: running });
  }
  return rows;
}

const COLOURS = { calls: '#0b5cad', total: '#8a4b00', quota: '#b3261e' };

function UsageChart({ rows, quota, summary }: { rows: Row[]; quota: number | null; summary: string }) {
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const el = box.current!;
    const xs = rows.map((r) => Date.parse(r.date) / 1000);
    const series: uPlot.Series[] = [
      {},
      {
        label: 'Calls',
        scale: 'calls',
        stroke: COLOURS.calls,
        fill: `${COLOURS.calls}cc`,
        paths: uPlot.paths.bars!({ size: [0.7, 40] }),
        points: { show: false },
      },
      { label: 'Month to date', scale: 'total', stroke: COLOURS.total, width: 2 },
    ];
    const data: uPlot.AlignedData = [xs, rows.map((r) => r.calls), rows.map((r) => r.monthToDate)];
    if (quota !== null) {
      series.push({ label: 'Monthly quota', scale: 'total', stroke: COLOURS.quota, dash: [6, 4], width: 2 });
      data.push(rows.map(() => quota));
    }
    const plot = new uPlot(
      {
        width: Math.max(el.clientWidth, 240),
        height: 260,
        legend: { show: false },
        cursor: { show: false },
        // Days are UTC calendar days, whatever the reader's zone.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true }, calls: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [
          {},
          { scale: 'calls', label: 'Calls per day', size: 60 },
          { scale: 'total', side: 1, label: 'Month to date', size: 70, grid: { show: false } },
        ],
        series,
      },
      data,
      el,
    );
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(el.clientWidth, 240), height: 260 }),
    );
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [rows, quota]);

  return (
    <figure className="usage-chart">
      <div ref={box} role="img" aria-label={summary} />
      <figcaption>
        <span className="swatch swatch-calls" /> Calls per day (left axis) ·{' '}
        <span className="swatch swatch-total" /> Month to date (right axis)
        {quota !== null ? (
          <>
            {' '}
            · <span className="swatch swatch-quota" /> Monthly quota: {count(quota)}
          </>
        ) : null}
      </figcaption>
    </figure>
  );
}

interface Props {
  report: UsageData;
  /** The plan's monthly quota; null: unlimited; undefined: not known here. */
  quota?: number | null;
  caption: string;
}

export function UsageReport({ report, quota, caption }: Props) {
  const id = useId();
  const rows = useMemo(() => usageRows(report), [report]);
  const busiest = rows.reduce((top, r) => (r.calls > top.calls ? r : top), rows[0] ?? { calls: 0, date: '' });
  const summary =
    `Chart of API calls per day from ${day(report.from)} to ${day(report.to)}: ${count(report.totalCalls)} in all` +
    (busiest.calls > 0 ? `, the most on ${day(busiest.date)} (${count(busiest.calls)})` : '') +
    '. The table below has every number.';
  const columns: Column<Row>[] = [
    { header: 'Day', cell: (r) => day(r.date) },
    { header: 'Calls', cell: (r) => count(r.calls), numeric: true },
    { header: 'Month to date', cell: (r) => count(r.monthToDate), numeric: true },
  ];
  return (
    <div className="usage-report" id={id}>
      <p>
        <strong>{count(report.totalCalls)}</strong> API calls from {day(report.from)} to {day(report.to)}.
      </p>
      {rows.length > 0 ? <UsageChart rows={rows} quota={quota ?? null} summary={summary} /> : null}
      <Table
        caption={caption}
        columns={columns}
        rows={rows}
        rowKey={(r) => r.date}
        empty="No days in this range."
      />
    </div>
  );
}

export interface DateRange {
  from: string;
  to: string;
}

/** This month so far (UTC): the API's own default range. */
export function thisMonth(now = new Date()): DateRange {
  const today = now.toISOString().slice(0, 10);
  return { from: `${today.slice(0, 7)}-01`, to: today };
}

interface ExplorerProps {
  /** Loads the report of a range (GET /account/usage or GET /partner/accounts/{id}/usage). */
  load: (range: DateRange) => Promise<UsageData>;
  /** Changes when load() would answer for another account. */
  loadKey: unknown;
  quota?: number | null;
  caption: string;
}

/** A date range form (this month by default) and the report of that range. */
export function UsageExplorer({ load, loadKey, quota, caption }: ExplorerProps) {
  const [range, setRange] = useState(thisMonth);
  const report = useLoad(() => load(range), [loadKey, range.from, range.to]);
  return (
    <>
      <form
        className="row-form"
        aria-label="Date range"
        onSubmit={(event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          setRange({ from: String(data.get('from')), to: String(data.get('to')) });
        }}
      >
        <Field label="From" name="from" type="date" required defaultValue={range.from} />
        <Field label="To" name="to" type="date" required defaultValue={range.to} />
        <Button type="submit">Show</Button>
      </form>
      <ErrorMessage error={report.error} />
      {report.data ? (
        <UsageReport report={report.data} quota={quota} caption={caption} />
      ) : report.loading ? (
        <p className="muted">Loading usage…</p>
      ) : null}
    </>
  );
}
