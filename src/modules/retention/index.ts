export { RetentionPruner, startRetention } from './prune.ts';
