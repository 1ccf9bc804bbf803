export { formatMicros, MICROS_PER_UNIT, money, parseAmount } from './money.ts';
export { walletRoutes } from './routes.ts';
export { CreditBody, toTransaction, WalletTransactionSchema } from './schemas.ts';
export { changeBalance, crossesBelow, emitIfBelowThreshold } from './wallet.ts';
