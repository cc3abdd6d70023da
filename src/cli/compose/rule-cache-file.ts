import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../core/logger.js';
import { sha256Hex } from '../../core/sha256-hex.js';
import { writeFileAtomically } from '../../core/write-file-atomically.js';
import type { CheckedRuleSource, RuleSourceCache } from '../../rules/rule-source-cache.js';

/**
 * The checked form of the bot's rule files (see rule-source-cache.ts), kept in
 * `<state.dir>/rule-cache.json` so that a start with unchanged rule files skips YAML and the
 * schema. The file is a header line (format, ledgerbot version, sha256 of the rest) and one JSON
 * body. Whatever does not match (absent, truncated, corrupt, another format or version, a body
 * whose hash is not the header's) is ignored and rebuilt, never trusted: the loader then parses
 * every file, exactly as without a cache. Entries are keyed by the hash of a file's path and
 * bytes, so an edited file simply misses. Written atomically (see write-file-atomically.ts).
 */
export const RULE_CACHE_FILE = 'rule-cache.json';

const FORMAT = 'ledgerbot-rule-cache/1';

type Header = { readonly format: string; readonly ledgerbot: string; readonly sha256: string };

export type RuleCacheFileOptions = {
  /** The state directory (`state.dir`). */
  readonly stateDir: string;
  /** ledgerbot's version: a cache another version wrote is ignored. */
  readonly version: string;
  readonly logger: Logger;
  /** Read only: `save` writes nothing (a shadow bot writes nothing to its state directory). */
  readonly readOnly?: boolean;
};

export class RuleCacheFile implements RuleSourceCache {
  readonly file: string;
  readonly #options: RuleCacheFileOptions;
  /**
   * Every entry as JSON text, or null for one read from the file: its copies come from parsing
   * the file's body again (one parse per load, not one per entry). Each get hands out its own
   * copy: what one load does to an entry, no other load sees.
   */
  #entries = new Map<string, string | null>();
  /** The file's body, as read (verified) or last written. */
  #body = '{}';
  /** Copies of the body's entries not handed out yet. */
  #fresh = new Map<string, unknown>();
  /** Keys got or set since the last save: what the next save keeps. */
  #used = new Set<string>();
  /** The keys the file on disk holds. */
  #onDisk = new Set<string>();
  /** Whether the file was read (at first use: a start that takes compiled rules never is). */
  #read = false;

  private constructor(file: string, options: RuleCacheFileOptions) {
    this.file = file;
    this.#options = options;
  }

  /**
   * The cache file of a state directory, read at its first use; a missing or unusable one is an
   * empty cache.
   */
  static load(options: RuleCacheFileOptions): RuleCacheFile {
    return new RuleCacheFile(join(options.stateDir, RULE_CACHE_FILE), options);
  }

  get size(): number {
    this.#readOnce();
    return this.#entries.size;
  }

  get(key: string): CheckedRuleSource | undefined {
    this.#readOnce();
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#used.add(key);
    if (entry !== null) return JSON.parse(entry) as CheckedRuleSource;
    return this.#fromBody(key) as CheckedRuleSource;
  }

  /** A copy of an entry of the body, not handed out before. */
  #fromBody(key: string): unknown {
    if (!this.#fresh.has(key)) {
      this.#fresh = new Map(Object.entries(JSON.parse(this.#body) as Record<string, unknown>));
    }
    const entry = this.#fresh.get(key);
    this.#fresh.delete(key);
    return entry;
  }

  set(key: string, entry: CheckedRuleSource): void {
    this.#readOnce();
    this.#entries.set(key, JSON.stringify(entry));
    this.#used.add(key);
  }

  /**
   * After a load that succeeded: keeps only the entries it used, and writes them when they are
   * not what the file holds. A write that fails is logged (the next start parses again).
   */
  save(): void {
    this.#readOnce();
    const keep = this.#used;
    this.#used = new Set();
    for (const key of this.#entries.keys()) {
      if (!keep.has(key)) this.#entries.delete(key);
    }
    if (this.#options.readOnly === true) return;
    if (keep.size === this.#onDisk.size && [...keep].every((k) => this.#onDisk.has(k))) return;
    const parts = [...this.#entries].map(
      ([key, entry]) => `${JSON.stringify(key)}:${entry ?? JSON.stringify(this.#fromBody(key))}`,
    );
    const body = `{${parts.join(',')}}`;
    const header: Header = {
      format: FORMAT,
      ledgerbot: this.#options.version,
      sha256: sha256Hex(body),
    };
    try {
      writeFileAtomically(this.file, `${JSON.stringify(header)}\n${body}`);
      this.#onDisk = new Set(keep);
      this.#body = body;
      this.#fresh.clear();
      for (const key of keep) this.#entries.set(key, null);
      this.#options.logger.debug({ file: this.file, files: keep.size }, 'rule cache written');
    } catch (err) {
      this.#options.logger.warn(
        { file: this.file, error: (err as Error).message },
        'rule cache not written; the next start reads the rule files again',
      );
    }
  }

  #readOnce(): void {
    if (this.#read) return;
    this.#read = true;
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      this.#options.logger.debug({ file: this.file }, 'no rule cache');
      return;
    }
    const why = this.#parse(text);
    if (why !== undefined) {
      this.#options.logger.info({ file: this.file, why }, 'rule cache ignored; it is rebuilt');
    } else {
      this.#options.logger.debug({ file: this.file, files: this.size }, 'rule cache read');
    }
  }

  /** Fills the entries from the file's text; the reason it is unusable otherwise. */
  #parse(text: string): string | undefined {
    const nl = text.indexOf('\n');
    if (nl < 0) return 'truncated';
    let header: Partial<Header>;
    try {
      header = JSON.parse(text.slice(0, nl)) as Partial<Header>;
    } catch {
      return 'corrupt header';
    }
    if (header.format !== FORMAT) return `another format (${String(header.format)})`;
    if (header.ledgerbot !== this.#options.version) {
      return `written by ledgerbot ${String(header.ledgerbot)}`;
    }
    const body = text.slice(nl + 1);
    if (sha256Hex(body) !== header.sha256) return 'its contents do not match its hash';
    let entries: unknown;
    try {
      entries = JSON.parse(body);
    } catch {
      return 'corrupt body';
    }
    if (entries === null || typeof entries !== 'object' || Array.isArray(entries)) {
      return 'corrupt body';
    }
    this.#body = body;
    this.#fresh = new Map(Object.entries(entries));
    this.#entries = new Map([...this.#fresh.keys()].map((key) => [key, null]));
    this.#onDisk = new Set(this.#entries.keys());
    return undefined;
  }
}
