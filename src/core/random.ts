import { randomUUID } from 'node:crypto';

/** Randomness as a dependency, so retries, jitter and ids are reproducible in tests. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** A random RFC 4122 version 4 UUID. */
  uuid(): string;
}

export const systemRandom: Random = {
  next: () => Math.random(),
  uuid: () => randomUUID(),
};
