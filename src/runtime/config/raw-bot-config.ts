import type { AuthConfig } from '../../ledger/auth/create-auth-provider.js';
import type { ApiVersion, LogLevel, TlsFiles } from './bot-config.js';

/** A config file as the schema leaves it: defaults filled in, durations as text, paths relative. */
export type RawBotConfig = {
  ledger: {
    url?: string;
    embedded?: { models: string[]; parties: string[] };
    userId: string;
    auth: AuthConfig;
    tls?: TlsFiles;
    apiVersion: ApiVersion;
    pingInterval: string;
    packages: string[];
    startTimeout?: string;
  };
  parties: Record<string, string>;
  rules: string | string[];
  tests?: string | string[];
  state: {
    dir: string;
    retention: string;
    postgres?: { url: string; schema: string; poolSize: number };
  };
  start: string | number;
  submission: {
    maxInFlight: number;
    completionTimeout: string;
    retry: { maxAttempts: number; initialDelay: string; maxDelay: string; deadline: string };
    dedup: { mode: 'offset'; fallback?: string } | { mode: 'duration'; value: string };
  };
  fleet?: { name: string; leasePeriod: string };
  http?: {
    port: number;
    host: string;
    token?: string;
    readyMaxLag: number;
    readOnly: boolean;
    allowedHosts: string[];
  };
  log: { level: LogLevel; pretty?: boolean };
};
