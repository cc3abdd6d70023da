// The public library API of ledgerbot. Everything a user may import is re-exported here.
export type { Clock, TimerHandle } from './core/clock.js';
export { systemClock } from './core/clock.js';
export { FakeClock } from './core/fake-clock.js';
export type { Random } from './core/random.js';
export { systemRandom } from './core/random.js';
export { SeededRandom } from './core/seeded-random.js';
export { LedgerbotError } from './core/ledgerbot-error.js';
export { IllegalStateError } from './core/illegal-state-error.js';
export { AbortError } from './core/abort-error.js';
export { parseDuration, formatDuration, DurationSyntaxError } from './core/duration.js';
