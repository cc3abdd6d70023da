export type EnvPath = readonly (string | number)[];

export type EnvProblem = {
  readonly path: EnvPath;
  /** Character offset of the `${` inside the string value. */
  readonly offset: number;
  readonly code: 'MISSING_ENV' | 'BAD_ENV_SYNTAX';
  readonly message: string;
  readonly hint?: string;
};

export type EnvInterpolation = {
  readonly value: unknown;
  /** Paths (joined with "/") of string values that took text from the environment. */
  readonly fromEnv: ReadonlySet<string>;
  readonly problems: readonly EnvProblem[];
};

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string VALUE of parsed YAML (never in keys,
 * never in the raw text, so a secret containing YAML syntax cannot change the structure).
 * `$${` is a literal `${`. As in the shell, `:-` also applies when the variable is empty.
 * Values are never copied into problems: only variable names are.
 */
export function interpolateEnv(
  data: unknown,
  env: Readonly<Record<string, string | undefined>>,
): EnvInterpolation {
  const fromEnv = new Set<string>();
  const problems: EnvProblem[] = [];

  const visit = (value: unknown, path: EnvPath): unknown => {
    if (typeof value === 'string') {
      if (!value.includes('$')) return value;
      const out = interpolateString(value, env, path, problems);
      if (out.used) fromEnv.add(path.join('/'));
      return out.text;
    }
    if (Array.isArray(value)) return value.map((v, i) => visit(v, [...path, i]));
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, visit(v, [...path, k])]));
    }
    return value;
  };

  return { value: visit(data, []), fromEnv, problems };
}

function interpolateString(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  path: EnvPath,
  problems: EnvProblem[],
): { text: string; used: boolean } {
  let out = '';
  let used = false;
  let i = 0;
  while (i < text.length) {
    const dollar = text.indexOf('$', i);
    if (dollar < 0) break;
    out += text.slice(i, dollar);
    if (text.startsWith('$${', dollar)) {
      out += '${';
      i = dollar + 3;
      continue;
    }
    if (text[dollar + 1] !== '{') {
      out += '$';
      i = dollar + 1;
      continue;
    }
    const close = text.indexOf('}', dollar + 2);
    if (close < 0) {
      problems.push({
        path,
        offset: dollar,
        code: 'BAD_ENV_SYNTAX',
        message: '`${` is never closed',
        hint: 'write ${NAME} or ${NAME:-default}; for a literal ${ write $${',
      });
      return { text, used };
    }
    const inner = text.slice(dollar + 2, close);
    const sep = inner.indexOf(':-');
    const name = sep < 0 ? inner : inner.slice(0, sep);
    const fallback = sep < 0 ? undefined : inner.slice(sep + 2);
    if (!NAME.test(name)) {
      problems.push({
        path,
        offset: dollar,
        code: 'BAD_ENV_SYNTAX',
        message: `"${name}" is not an environment variable name`,
        hint: 'names are letters, digits and _, not starting with a digit: ${NAME} or ${NAME:-default}',
      });
    } else {
      const found = env[name];
      if (found !== undefined && (fallback === undefined || found !== '')) {
        out += found;
        used = true;
      } else if (fallback !== undefined) {
        out += fallback;
      } else {
        problems.push({
          path,
          offset: dollar,
          code: 'MISSING_ENV',
          message: `environment variable ${name} is not set`,
          hint: `set ${name}, or give a default: \${${name}:-value}`,
        });
      }
    }
    i = close + 1;
  }
  return { text: out + text.slice(i), used };
}
