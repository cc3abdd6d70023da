import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../core/logger.js';
import { sha256Hex } from '../../core/sha256-hex.js';
import { writeFileAtomically } from '../../core/write-file-atomically.js';
import type { CelEnvironment } from '../../rules/cel/cel-environment.js';
import { decodeRuleSet, encodeRuleSet, RuleSetNotCoded } from '../../rules/compiled-rule-codec.js';
import type { RuleSet } from '../../rules/compiled-rule.js';

/**
 * `<state.dir>/compiled-rules.json`: the rule set `run` last compiled, as compiled-rule-codec.ts
 * writes it, with the key of the inputs it was compiled from (`ruleInputsKey`: the rule files,
 * parties, `submission.retry`, the package ids of the catalogue, the models and the ledgerbot
 * version). A start whose inputs give the same key takes the rules from there: no YAML, no
 * schema, no CEL parsing or checking, no compiling. The first line is a header (format, version,
 * key, sha256 of the rest); a file that is too large, truncated, damaged, foreign or malformed is
 * logged as a warning and ignored, and the rules are compiled and the file written again; one
 * for other inputs or another version is simply not used. Written atomically, only by a load
 * without errors (so a rule error is always reported by compiling the files).
 */
export const COMPILED_RULES_FILE = 'compiled-rules.json';

const FORMAT = 'ledgerbot-compiled-rules/1';
/** A file larger than this is not read (the start-up bench's 1,000 rules take 1.9 MB). */
const MAX_BYTES = 64 * 1024 * 1024;

type Header = {
  readonly format: string;
  readonly ledgerbot: string;
  readonly key: string;
  readonly sha256: string;
};

export type CompiledRulesFileOptions = {
  /** The state directory (`state.dir`). */
  readonly stateDir: string;
  /** ledgerbot's version: a file another version wrote is not used. */
  readonly version: string;
  readonly logger: Logger;
  /** Read only: nothing is written (a shadow bot writes nothing to its state directory). */
  readonly readOnly?: boolean;
  /**
   * Write a set this long after `set` (or at `flush`, whichever is first) instead of at once:
   * encoding and writing the set is then not part of the start it was compiled at.
   * @default 0 (at once)
   */
  readonly writeDelayMs?: number;
};

export class CompiledRulesFile {
  readonly file: string;
  readonly version: string;
  readonly #options: CompiledRulesFileOptions;
  /** The key the file on disk holds, once read or written. */
  #onDisk: string | undefined;
  /** The set to write (see `writeDelayMs`), and the timer that writes it. */
  #pending: { key: string; ruleSet: RuleSet; cel: CelEnvironment } | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: CompiledRulesFileOptions) {
    this.file = join(options.stateDir, COMPILED_RULES_FILE);
    this.version = options.version;
    this.#options = options;
  }

  /** The rule set stored for `key`, its programs restored by `cel`; undefined otherwise. */
  get(key: string, cel: CelEnvironment): RuleSet | undefined {
    const text = this.#readText();
    if (text === undefined) return undefined;
    const nl = text.indexOf('\n');
    let header: Partial<Header>;
    try {
      header = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as Partial<Header>;
    } catch {
      return this.#ignored('corrupt header');
    }
    if (typeof header !== 'object' || header === null) return this.#ignored('corrupt header');
    if (header.format !== FORMAT) return this.#ignored(`another format (${String(header.format)})`);
    if (nl < 0) return this.#ignored('truncated');
    if (header.ledgerbot !== this.version || header.key !== key) {
      this.#options.logger.debug(
        { file: this.file },
        'compiled rules are of other inputs; the rules are compiled',
      );
      return undefined;
    }
    const body = text.slice(nl + 1);
    if (sha256Hex(body) !== header.sha256)
      return this.#ignored('its contents do not match its hash');
    try {
      const ruleSet = decodeRuleSet(body, cel);
      this.#onDisk = key;
      this.#options.logger.debug(
        { file: this.file, rules: ruleSet.rules.length },
        'compiled rules read',
      );
      return ruleSet;
    } catch (error) {
      if (!(error instanceof RuleSetNotCoded)) throw error;
      return this.#ignored(`malformed: ${error.message}`);
    }
  }

  /**
   * Stores `ruleSet` (compiled without errors) for `key`, unless the file holds that key
   * already: at once, or after `writeDelayMs`. A set that cannot be encoded, or a write that
   * fails, is logged: the next start compiles the rules.
   */
  set(key: string, ruleSet: RuleSet, cel: CelEnvironment): void {
    if (this.#options.readOnly === true) return;
    this.#pending = this.#onDisk === key ? undefined : { key, ruleSet, cel };
    const delay = this.#options.writeDelayMs ?? 0;
    if (delay <= 0) {
      this.flush();
    } else if (this.#pending !== undefined && this.#timer === undefined) {
      this.#timer = setTimeout(() => this.flush(), delay);
      this.#timer.unref();
    }
  }

  /** Writes the set `set` left to write, if any (at a stop). */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) this.#write(pending.key, pending.ruleSet, pending.cel);
  }

  #write(key: string, ruleSet: RuleSet, cel: CelEnvironment): void {
    let body: string;
    try {
      body = encodeRuleSet(ruleSet, cel);
    } catch (error) {
      if (!(error instanceof RuleSetNotCoded)) throw error;
      this.#options.logger.debug(
        { file: this.file, why: error.message },
        'compiled rules not written; the next start compiles the rules',
      );
      return;
    }
    const header: Header = {
      format: FORMAT,
      ledgerbot: this.version,
      key,
      sha256: sha256Hex(body),
    };
    try {
      writeFileAtomically(this.file, `${JSON.stringify(header)}\n${body}`);
      this.#onDisk = key;
      this.#options.logger.debug({ file: this.file }, 'compiled rules written');
    } catch (err) {
      this.#options.logger.warn(
        { file: this.file, error: (err as Error).message },
        'compiled rules not written; the next start compiles the rules',
      );
    }
  }

  /** The file's text; undefined when it is missing, or too large (then logged). */
  #readText(): string | undefined {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      this.#options.logger.debug({ file: this.file }, 'no compiled rules');
      return undefined;
    }
    try {
      const size = fstatSync(fd).size;
      if (size > MAX_BYTES) {
        this.#ignored(`larger than ${MAX_BYTES} bytes`);
        return undefined;
      }
      const bytes = Buffer.allocUnsafe(size);
      let read = 0;
      while (read < size) {
        const n = readSync(fd, bytes, read, size - read, read);
        if (n === 0) break;
        read += n;
      }
      return bytes.toString('utf8', 0, read);
    } catch (err) {
      this.#ignored(`unreadable: ${(err as Error).message}`);
      return undefined;
    } finally {
      closeSync(fd);
    }
  }

  #ignored(why: string): undefined {
    this.#options.logger.warn(
      { file: this.file, why },
      'compiled rules ignored; the rules are compiled and the file written again',
    );
    return undefined;
  }
}
