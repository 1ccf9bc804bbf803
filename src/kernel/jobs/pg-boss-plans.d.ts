// pg-boss's SQL builders (its src/plans.js), used to add jobs inside a statement of our own.
declare module 'pg-boss/src/plans.js' {
  const plans: {
    insertJobs(schema: string, options: { table: string; name: string; returnId?: boolean }): string;
  };
  export default plans;
}
