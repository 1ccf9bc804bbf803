// The face of billing: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { formatMicros, MICROS_PER_UNIT, money, parseAmount } from './money.ts';
export { walletRoutes } from './routes.ts';
export { CreditBody, toTransaction, WalletTransactionSchema } from './schemas.ts';
export { changeBalance, crossesBelow, emitIfBelowThreshold } from './wallet.ts';
