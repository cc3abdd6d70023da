/**
 * The base of every error ledgerbot throws on purpose. `code` is stable and machine-readable;
 * the message says what happened and what to do next. A family of errors with its own codes
 * subclasses `LedgerbotError<TheirCode>` and needs no constructor of its own.
 */
export type LedgerbotError<Code extends string = string> = Error & { readonly code: Code };

const LedgerbotErrorClass = class LedgerbotError<Code extends string = string> extends Error {
  readonly code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
  }
};

/**
 * The class. Its `prototype` is typed with a string code so that `err instanceof
 * LedgerbotError` narrows to `LedgerbotError<string>`, not to the `any` code TypeScript gives a
 * generic class.
 */
export const LedgerbotError: {
  new <Code extends string = string>(
    code: Code,
    message: string,
    options?: { cause?: unknown },
  ): LedgerbotError<Code>;
  readonly prototype: LedgerbotError;
} = LedgerbotErrorClass;
