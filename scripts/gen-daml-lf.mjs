// Generates src/daml-lf/generated/ (the protobuf decoder and encoder of Daml-LF archives) from the
// official .proto files in ../shared/daml-lf/proto, with @bufbuild/buf and @bufbuild/protoc-gen-es.
// The output is committed: neither a build nor a test ever needs ../shared or this script.
//
// Why a derived schema, not the official one as it is: ledgerbot reads package *signatures* (data
// types, templates, choices, keys, interfaces), never expressions, and a signature needs few of a
// package's types. Decoding the full `Package` of the three shared DARs took 550-900 ms; without
// the expression fields (their bytes skipped undecoded, `readUnknownFields: false`) 160-330 ms,
// most of it creating the ~28,000 messages of the interned type tables; with the type table read
// as bytes too (each type decoded when a signature needs it) and locations left out, ~20 ms warm.
// So, mechanically, before generating (EDITS below):
//   - every field whose type is `Expr` (single or repeated) is removed from daml_lf2.proto,
//   - so are `Module.values`, `Module.exceptions`, `DefInterface.methods` and every `location`,
//   - `Package.interned_types` becomes `repeated bytes` (the same wire format as a message),
// and only the messages reachable from `Archive`, `ArchivePayload`, `Package` and `Type` are
// generated (so `Expr`, `Update`, `Case`, ... are not in the output at all). Field numbers stay
// as in the official schema, so the generated code reads real packages, and writes archives that
// are valid Daml-LF protobuf (without expressions). An edit that finds nothing to edit, or an
// expression field no edit recognises, fails the generation.
//
// `--check` writes nothing and exits 1 naming every committed file that differs from what the
// .proto files give (a stale file), so CI keeps the official schema the oracle.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const protoDir = join(root, '..', 'shared', 'daml-lf', 'proto');
const outDir = join(root, 'src', 'daml-lf', 'generated');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const ROOT_TYPES = [
  'daml_lf.Archive',
  'daml_lf.ArchivePayload',
  'daml_lf_2.Package',
  'daml_lf_2.Type',
];

const check = process.argv.includes('--check');
const unknown = process.argv.slice(2).filter((a) => a !== '--check');
if (unknown.length > 0) {
  console.error(`gen:daml-lf: unknown argument ${unknown.join(' ')} (only --check)`);
  process.exit(2);
}

function readProto(file) {
  try {
    return readFileSync(join(protoDir, file), 'utf8');
  } catch (err) {
    console.error(`gen:daml-lf: cannot read ${join(protoDir, file)}: ${err.message}`);
    process.exit(2);
  }
}

/**
 * The edits that derive the schema the reader decodes with from daml_lf2.proto (see the header).
 * Each is a whole-line pattern (comments aside) and must match at least once, so a changed
 * official schema fails the generation instead of silently decoding what it no longer skips.
 */
const EDITS = [
  // Expressions: most of a package's bytes; a signature has none.
  { what: 'Expr fields', pattern: /^\s*(repeated\s+)?Expr\s+\w+\s*=\s*\d+\s*;\s*$/ },
  // Value definitions (a name, a type, an expression each): not part of a signature.
  { what: 'Module.values', pattern: /^\s*repeated\s+DefValue\s+values\s*=\s*5\s*;\s*$/ },
  // Source locations, exception definitions and interface methods: not part of a signature.
  { what: 'Location fields', pattern: /^\s*Location\s+location\s*=\s*\d+\s*;\s*$/ },
  {
    what: 'Module.exceptions',
    pattern: /^\s*repeated\s+DefException\s+exceptions\s*=\s*7\s*;\s*$/,
  },
  {
    what: 'DefInterface.methods',
    pattern: /^\s*repeated\s+InterfaceMethod\s+methods\s*=\s*3\s*;\s*$/,
  },
  // The type table is most of what is left, and a signature needs few of its types: read as
  // bytes (the same wire format as an embedded message), each decoded with TypeSchema on demand.
  {
    what: 'Package.interned_types',
    pattern: /^(\s*repeated\s+)Type(\s+interned_types\s*=\s*5\s*;\s*)$/,
    replace: '$1bytes$2',
  },
];

function derivedSchema(text) {
  const counts = EDITS.map(() => 0);
  const lines = [];
  for (const line of text.split('\n')) {
    const code = line.replace(/\/\/.*$/, '');
    const i = EDITS.findIndex((e) => e.pattern.test(code));
    if (i < 0) {
      if (/\bExpr\s+\w+\s*=/.test(code) || /\bDefValue\s+\w+\s*=/.test(code)) {
        console.error(
          `gen:daml-lf: cannot remove this expression field mechanically: ${line.trim()}`,
        );
        process.exit(1);
      }
      lines.push(line);
      continue;
    }
    counts[i]++;
    const edit = EDITS[i];
    if (edit.replace !== undefined) lines.push(code.replace(edit.pattern, edit.replace));
  }
  const missing = EDITS.filter((_, i) => counts[i] === 0).map((e) => e.what);
  if (missing.length > 0) {
    console.error(
      `gen:daml-lf: daml_lf2.proto has no ${missing.join(', ')}: has the schema changed?`,
    );
    process.exit(1);
  }
  return lines.join('\n');
}

function generate() {
  const work = mkdtempSync(join(tmpdir(), 'gen-daml-lf-'));
  try {
    const input = join(work, 'proto');
    const out = join(work, 'out');
    mkdirSync(input);
    writeFileSync(join(input, 'daml_lf.proto'), readProto('daml_lf.proto'));
    writeFileSync(join(input, 'daml_lf2.proto'), derivedSchema(readProto('daml_lf2.proto')));
    const template = {
      version: 'v2',
      plugins: [
        {
          local: bin('protoc-gen-es'),
          out,
          opt: ['target=ts', 'import_extension=js'],
        },
      ],
    };
    execFileSync(
      bin('buf'),
      [
        'generate',
        input,
        '--template',
        JSON.stringify(template),
        ...ROOT_TYPES.flatMap((t) => ['--type', t]),
      ],
      {
        cwd: work,
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, BUF_CACHE_DIR: join(work, 'cache') },
      },
    );
    const files = {};
    for (const name of readdirSync(out).sort()) {
      files[name] =
        '// Generated by scripts/gen-daml-lf.mjs (npm run gen:daml-lf) from the official Daml-LF\n' +
        '// .proto files, without expressions (see the script). Do not edit.\n' +
        readFileSync(join(out, name), 'utf8');
    }
    return files;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const outputs = generate();
if (check) {
  const committed = readdirSync(outDir).sort();
  const stale = [];
  for (const [file, text] of Object.entries(outputs)) {
    let current;
    try {
      current = readFileSync(join(outDir, file), 'utf8');
    } catch {
      current = undefined;
    }
    if (current !== text) stale.push(`src/daml-lf/generated/${file}`);
  }
  for (const file of committed)
    if (!(file in outputs)) stale.push(`src/daml-lf/generated/${file} (not generated)`);
  if (stale.length > 0) {
    console.error(
      `gen:daml-lf: stale, not what ../shared/daml-lf/proto gives: ${stale.join(', ')}; run npm run gen:daml-lf and commit`,
    );
    process.exit(1);
  }
  console.log('gen:daml-lf: src/daml-lf/generated is up to date with ../shared/daml-lf/proto');
} else {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  for (const [file, text] of Object.entries(outputs)) writeFileSync(join(outDir, file), text);
  console.log(`gen:daml-lf: wrote ${Object.keys(outputs).join(', ')} in src/daml-lf/generated/`);
}
