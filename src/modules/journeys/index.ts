// The face of journeys: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { subscribeJourneyCallResumes } from './call-ended.ts';
export { subscribeJourneyRunMerges } from './contact-merges.ts';
export { answerRuns, startOnEvent } from './engine.ts';
export { MAX_REPLY_TIMEOUT, MAX_RUN_DURATION, MAX_WAIT } from './nodes.ts';
export { journeyActions } from './owned-actions.ts';
export { findJourney } from './repo.ts';
export { journeyRoutes } from './routes.ts';
export { runDueJourneys } from './runner.ts';
export { wakeRun } from './runs.ts';
export { RunSchema, toRun } from './schemas.ts';
export type { JourneyInput, JourneyServices } from './service.ts';
export { createJourney, moveJourney, patchJourney, removeJourney } from './service.ts';
export { scanTimedEntries } from './timed.ts';
