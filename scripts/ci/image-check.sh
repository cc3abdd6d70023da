#!/usr/bin/env bash
# Builds the Docker image and exercises it (CI: `bash scripts/ci/image-check.sh` from the
# repository root, as root, with ../shared beside the repository and `npm ci` done, so that
# dist/ exists for the sandbox that runs on the host).
#
# The image is built with buildah from the Dockerfile, on the local stand-in for
# node:20-bookworm-slim that ../shared/tools/container-base.sh assembles (a no-op when it exists).
# `buildah run --isolation chroot` shares the host's network, so the containerised bot reaches a
# sandbox this script starts on 127.0.0.1. Inside the image it checks:
#   1. `--help` exits 0;
#   2. `validate` accepts the example config shipped in the image and the container config;
#   3. the image's default command (ENTRYPOINT + CMD) runs the bot with the config, the rules and
#      the state mounted where docs/operations.md says; the image's own HEALTHCHECK command, read
#      from the image config, exits 0 once the bot is up; an invoice created on the sandbox is
#      accepted by the bot's rule; SIGTERM (docker stop) ends the bot with exit code 0, and the
#      health check then exits 1;
#   4. the bot process ran as uid 1000 and wrote its SQLite file into the state volume;
#   5. the image holds no dev dependency (every package-lock.json entry marked dev is absent),
#      every production dependency, and no test files, sources or other repository files.
# Every phase is timed; every wait is bounded; containers and processes are removed on exit.
#
# Environment: LEDGERBOT_IMAGE (default localhost/ledgerbot:ci), IMAGE_CHECK_NO_CACHE=1 to build
# without buildah's layer cache (the build is otherwise reused while the sources are unchanged).
set -euo pipefail

cd "$(dirname "$0")/../.."
IMAGE=${LEDGERBOT_IMAGE:-localhost/ledgerbot:ci}
BASE_IMAGE=docker.io/library/node:20-bookworm-slim
BASE_SCRIPT=../shared/tools/container-base.sh

log() { printf '[image-check] %s\n' "$*"; }
fail() {
  printf '[image-check] FAIL: %s\n' "$*" >&2
  exit 1
}
now_ms() { date +%s%3N; }
seconds() { printf '%d.%01d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

START_MS=$(now_ms)
PHASE=''
PHASE_MS=0
TIMINGS=()
phase() {
  local t
  t=$(now_ms)
  if [ -n "$PHASE" ]; then
    TIMINGS+=("$(printf '%-34s %7ss' "$PHASE" "$(seconds $((t - PHASE_MS)))")")
    log "$PHASE: $(seconds $((t - PHASE_MS)))s"
  fi
  PHASE=$1
  PHASE_MS=$t
  [ -z "$PHASE" ] || log "== $PHASE"
}

work=$(mktemp -d /tmp/image-check.XXXXXX)
ctr=''
sandbox_pid=''
bot_run_pid=''
bot_pid=''

# The process ids below $1 (buildah run -> buildah-chroot-runtime -> buildah-chroot-exec -> node).
descendants() {
  local p
  for p in $(pgrep -P "$1" || true); do
    echo "$p"
    descendants "$p"
  done
}
# Waits up to $2 seconds for process $1 to end.
wait_gone() {
  local deadline=$((SECONDS + $2))
  while kill -0 "$1" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# Ends what this script started, by process id, and removes its container and files.
cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  if [ -n "$bot_run_pid" ] && kill -0 "$bot_run_pid" 2>/dev/null; then
    # The bot first (as docker stop would), then buildah run and whatever is left below it.
    local tree
    tree=$(descendants "$bot_run_pid")
    if [ -n "$bot_pid" ]; then kill -TERM "$bot_pid" 2>/dev/null; fi
    wait_gone "$bot_run_pid" 10 || kill -TERM "$bot_run_pid" 2>/dev/null
    wait_gone "$bot_run_pid" 5 || kill -KILL "$bot_run_pid" 2>/dev/null
    for p in $tree; do kill -KILL "$p" 2>/dev/null; done
  fi
  if [ -n "$sandbox_pid" ] && kill -0 "$sandbox_pid" 2>/dev/null; then
    kill -TERM "$sandbox_pid"
    wait_gone "$sandbox_pid" 5 || kill -KILL "$sandbox_pid" 2>/dev/null
  fi
  if [ "$rc" != 0 ]; then
    for f in build.log sandbox.log bot.log; do
      if [ -s "$work/$f" ]; then
        log "--- last lines of $f"
        tail -n 40 "$work/$f" >&2
      fi
    done
  fi
  if [ -n "$ctr" ]; then buildah rm "$ctr" >/dev/null 2>&1 || log "could not remove container $ctr"; fi
  rm -rf "$work"
  if [ "$rc" = 0 ]; then log "ok"; else log "failed (exit $rc)"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ "$(id -u)" = 0 ] || fail "run as root (buildah)"
[ -f dist/cli/run-cli.js ] || fail "dist/ is missing: run npm ci first (the sandbox runs on the host)"

# --- the base image -----------------------------------------------------------------------------
phase 'base image'
if ! buildah inspect --type image "$BASE_IMAGE" >/dev/null 2>&1; then
  [ -f "$BASE_SCRIPT" ] || fail "$BASE_IMAGE is missing and $BASE_SCRIPT is not there to build it"
  # Another copy may already be assembling it (one per machine): wait for that one, bounded.
  for _ in $(seq 1 180); do pgrep -f container-base.sh >/dev/null || break; sleep 5; done
  timeout 1200 bash "$BASE_SCRIPT"
fi

# --- build --------------------------------------------------------------------------------------
phase 'build'
cache=(--layers)
[ "${IMAGE_CHECK_NO_CACHE:-0}" = 1 ] && cache=(--layers=false)
build_start=$SECONDS
previous=$(buildah inspect --type image --format '{{.FromImageID}}' "$IMAGE" 2>/dev/null || true)
# The full output goes to build.log (shown on failure); the steps are printed with their time.
timeout 1500 buildah bud --pull-never --isolation chroot --format docker "${cache[@]}" \
  -t "$IMAGE" . 2>&1 | tee "$work/build.log" | while IFS= read -r line; do
  case $line in
    *STEP* | *COMMIT* | *'Using cache'* | *rror*) printf '  %4ss %s\n' $((SECONDS - build_start)) "${line:0:140}" ;;
  esac
done

# The image this build replaced, now untagged, is removed (its layers still cached stay).
current=$(buildah inspect --type image --format '{{.FromImageID}}' "$IMAGE")
if [ -n "$previous" ] && [ "$previous" != "$current" ]; then buildah rmi "$previous" >/dev/null 2>&1 || true; fi

# --- the image config: entry point, default command, health check, user -------------------------
phase 'image config'
buildah inspect --type image "$IMAGE" >"$work/inspect.json"
# Prints one field of the Docker image config as NUL-separated words.
config_words() {
  node -e '
    const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).Docker.config;
    const field = process.argv[2];
    let out;
    if (field === "Healthcheck") {
      const t = c.Healthcheck?.Test ?? [];
      if (t[0] === "CMD") out = t.slice(1);
      else if (t[0] === "CMD-SHELL") out = ["/bin/sh", "-c", t[1]];
      else { console.error("no HEALTHCHECK in the image config (built without --format docker?)"); process.exit(1); }
    } else if (field === "Volumes") {
      out = Object.keys(c.Volumes ?? {});
    } else {
      out = [].concat(c[field] ?? []);
    }
    process.stdout.write(out.map((w) => w + "\0").join(""));
  ' "$work/inspect.json" "$1"
}
mapfile -d '' ENTRYPOINT < <(config_words Entrypoint)
mapfile -d '' CMD < <(config_words Cmd)
mapfile -d '' HEALTHCHECK < <(config_words Healthcheck)
mapfile -d '' USER_NAME < <(config_words User)
mapfile -d '' VOLUMES < <(config_words Volumes)
[ "${#ENTRYPOINT[@]}" -gt 0 ] || fail "the image has no ENTRYPOINT"
[ "${#HEALTHCHECK[@]}" -gt 0 ] || fail "the image has no HEALTHCHECK"
case ${USER_NAME[0]:-} in '' | root | 0 | root:* | 0:*) fail "the image runs as root" ;; esac
log "entrypoint: ${ENTRYPOINT[*]}"
log "cmd: ${CMD[*]}"
log "user: ${USER_NAME[0]}"
log "healthcheck: ${HEALTHCHECK[*]:0:3} ..."
log "volumes: ${VOLUMES[*]}"
for v in /etc/ledgerbot /etc/ledgerbot/rules /var/lib/ledgerbot; do
  printf '%s\n' "${VOLUMES[@]}" | grep -qx "$v" || fail "the image declares no VOLUME $v"
done

ctr=$(buildah from --pull-never --name "ledgerbot-image-check-$$" "$IMAGE")
# buildah run (1.28) mounts the image's VOLUMEs and the -v binds in map order, so a volume can
# hide a bind at the same path; docker run lets the bind win. The working container forgets the
# volumes (the image keeps them), so the binds below are what the bot sees, as with docker run -v.
for v in "${VOLUMES[@]}"; do buildah config --volume "$v-" "$ctr"; done
# in_ctr LIMIT [buildah run options] -- COMMAND...: runs a command in the container, bounded
# (buildah run starts it as the image's user, in the image's working directory).
in_ctr() {
  local limit=$1
  local opts=()
  shift
  while [ "$1" != -- ]; do
    opts+=("$1")
    shift
  done
  shift
  timeout -k 5 "$limit" buildah run --isolation chroot "${opts[@]}" "$ctr" -- "$@"
}

# --- 1. --help ----------------------------------------------------------------------------------
phase '1. --help'
in_ctr 60 -- "${ENTRYPOINT[@]}" --help >"$work/help.txt" || fail "--help exited $?"
grep -q 'validate' "$work/help.txt" || fail "--help does not list the commands: $(head -5 "$work/help.txt")"

# --- the sandbox on the host, and the container config ------------------------------------------
phase 'sandbox on the host'
# The log exists before the poll below reads it: the background child opens it only once it runs,
# and a `sed` on a missing file exits 2, which `set -e` makes the script's exit (a CI run failed so).
: >"$work/sandbox.log"
node bin/ledgerbot.js sandbox --port 0 --model examples/invoices/model.yaml \
  --user ledgerbot:issuer,payer >"$work/sandbox.log" 2>&1 &
sandbox_pid=$!
sandbox_url=''
deadline=$((SECONDS + 30))
while [ "$SECONDS" -lt "$deadline" ]; do
  sandbox_url=$(sed -n 's/^sandbox ready \(http[^ ]*\) .*/\1/p' "$work/sandbox.log")
  if [ -n "$sandbox_url" ] && grep -q '^party payer ' "$work/sandbox.log"; then break; fi
  kill -0 "$sandbox_pid" 2>/dev/null || fail "the sandbox exited"
  sleep 0.1
done
[ -n "$sandbox_url" ] || fail "the sandbox did not report ready within 30 s"
issuer=$(sed -n 's/^party issuer //p' "$work/sandbox.log")
payer=$(sed -n 's/^party payer //p' "$work/sandbox.log")
if [ -z "$issuer" ] || [ -z "$payer" ]; then fail "the sandbox did not name the parties"; fi
log "sandbox $sandbox_url (pid $sandbox_pid)"

# The ops port: a free one on the host (the container shares its network), passed to the bot and
# to the health check as LEDGERBOT_HTTP_PORT, as docs/operations.md keeps them in step.
http_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
# The container config of docs/operations.md, pointed at the sandbox (no auth there). The ops
# endpoints listen on 127.0.0.1: the container shares this machine's network.
cat >"$work/bot.config.yaml" <<EOF
ledger:
  url: $sandbox_url
  userId: ledgerbot
parties:
  issuer: $issuer
  payer: $payer
rules: rules/
state: { dir: /var/lib/ledgerbot }
http:
  host: 127.0.0.1
  port: \${LEDGERBOT_HTTP_PORT:-9464}
log: { level: info, pretty: false }
EOF
chmod 0644 "$work/bot.config.yaml"
# The state volume: a host directory writable by uid 1000, as the docs ask of a bind mount.
mkdir "$work/state"
chown 1000:1000 "$work/state"
mounts=(
  -v "$work/bot.config.yaml:/etc/ledgerbot/bot.config.yaml:ro"
  -v "$PWD/examples/invoices/rules:/etc/ledgerbot/rules:ro"
  -v "$work/state:/var/lib/ledgerbot"
)

# --- 2. validate --------------------------------------------------------------------------------
phase '2. validate'
in_ctr 60 -- "${ENTRYPOINT[@]}" validate --config examples/invoices/bot.config.yaml ||
  fail "validate of the image's examples/invoices/bot.config.yaml exited $?"
in_ctr 60 -e "LEDGERBOT_HTTP_PORT=$http_port" "${mounts[@]}" -- \
  "${ENTRYPOINT[@]}" validate --config /etc/ledgerbot/bot.config.yaml \
  --model examples/invoices/model.yaml ||
  fail "validate of the container config exited $?"

# --- 3. run the bot; the image's HEALTHCHECK ----------------------------------------------------
phase '3a. bot up, HEALTHCHECK exit 0'
healthcheck() { in_ctr 30 -e "LEDGERBOT_HTTP_PORT=$http_port" -- "${HEALTHCHECK[@]}" >/dev/null 2>&1; }
: >"$work/bot.log"
buildah run --isolation chroot -e "LEDGERBOT_HTTP_PORT=$http_port" "${mounts[@]}" \
  "$ctr" -- "${ENTRYPOINT[@]}" "${CMD[@]}" >"$work/bot.log" 2>&1 &
bot_run_pid=$!
# The bot's node process: a descendant of `buildah run` (chroot isolation keeps the host's PID
# namespace), whose command line is the entry point (the executable resolved to its path) + CMD.
want="${ENTRYPOINT[*]:1} ${CMD[*]}"
exe=$(basename "${ENTRYPOINT[0]}")
deadline=$((SECONDS + 30))
while [ -z "$bot_pid" ] && [ "$SECONDS" -lt "$deadline" ]; do
  for p in $(descendants "$bot_run_pid"); do
    args=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
    args=${args% }
    if [ "$(basename "${args%% *}")" = "$exe" ] && [ "${args#* }" = "$want" ]; then bot_pid=$p; fi
  done
  [ -n "$bot_pid" ] && break
  kill -0 "$bot_run_pid" 2>/dev/null || fail "the bot exited at once"
  sleep 0.2
done
[ -n "$bot_pid" ] || fail "the bot process did not appear within 30 s"
up=''
deadline=$((SECONDS + 60))
while [ "$SECONDS" -lt "$deadline" ]; do
  if healthcheck; then
    up=1
    break
  fi
  kill -0 "$bot_run_pid" 2>/dev/null || fail "the bot exited before its health check passed"
  sleep 0.5
done
[ -n "$up" ] || fail "the HEALTHCHECK did not pass within 60 s"
log "bot pid $bot_pid up; HEALTHCHECK exit 0"

phase '3b. an invoice, accepted'
node -e '
  const [url, issuer, payer] = process.argv.slice(1);
  const body = {
    commands: [{ CreateCommand: {
      templateId: "#invoices:Invoice:Invoice",
      createArguments: { issuer, payer, amount: "100.00", currency: "USD", due: "2030-01-31", reference: "IMAGE-CHECK-1" },
    } }],
    commandId: "image-check-invoice-1", userId: "ledgerbot", actAs: [issuer],
  };
  fetch(url + "/v2/commands/submit-and-wait", {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
    signal: AbortSignal.timeout(20000),
  }).then(async (r) => { if (!r.ok) { console.error(r.status, await r.text()); process.exit(1); } });
' "$sandbox_url" "$issuer" "$payer" || fail "could not create the invoice on the sandbox"
accepted=''
deadline=$((SECONDS + 30))
while [ "$SECONDS" -lt "$deadline" ]; do
  if node -e '
    fetch(process.argv[1], { signal: AbortSignal.timeout(5000) }).then((r) => r.text()).then((t) =>
      process.exit(/^ledgerbot_intents_total\{[^}]*rule="accept-small-invoices"[^}]*state="succeeded"[^}]*\} 1$/m.test(t) ? 0 : 1),
      () => process.exit(1));
  ' "http://127.0.0.1:$http_port/metrics"; then
    accepted=1
    break
  fi
  sleep 0.5
done
[ -n "$accepted" ] || fail "the bot did not accept the invoice within 30 s (ledgerbot_intents_total)"
log "accept-small-invoices: 1 intent succeeded"

# --- 4. uid 1000, the state in the volume -------------------------------------------------------
phase '4. uid 1000, SQLite state'
uids=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$bot_pid/status")
[ "$uids" = '1000 1000 1000 1000' ] || fail "the bot runs with uids $uids, not 1000"
db="$work/state/ledgerbot.sqlite"
[ -f "$db" ] || fail "no ledgerbot.sqlite in the state volume: $(ls -la "$work/state")"
[ "$(stat -c %u "$db")" = 1000 ] || fail "ledgerbot.sqlite is owned by uid $(stat -c %u "$db")"
[ "$(head -c 15 "$db")" = 'SQLite format 3' ] || fail "ledgerbot.sqlite is not an SQLite database"
log "bot uid 1000; in the state volume: $(find "$work/state" -mindepth 1 -printf '%f (uid %U, %s bytes) ')"

phase '3c. SIGTERM, HEALTHCHECK exit 1'
kill -TERM "$bot_pid"
wait_gone "$bot_run_pid" 30 || fail "the bot did not stop within 30 s of SIGTERM"
bot_rc=0
wait "$bot_run_pid" || bot_rc=$?
bot_run_pid=''
bot_pid=''
[ "$bot_rc" = 0 ] || fail "the bot exited $bot_rc after SIGTERM (expected 0)"
hc_rc=0
healthcheck || hc_rc=$?
[ "$hc_rc" = 1 ] || fail "the HEALTHCHECK exited $hc_rc after the bot stopped (expected 1)"
log "bot exit 0 after SIGTERM; HEALTHCHECK exit 1"

# --- 5. no dev dependencies, no tests, no sources -----------------------------------------------
phase '5. image contents'
mnt=$(buildah mount "$ctr")
# shellcheck disable=SC2016 # JavaScript, with template literals of its own
node -e '
  const fs = require("fs");
  const path = require("path");
  const [root] = process.argv.slice(1);
  const app = path.join(root, "app");
  const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8"));
  const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
  const problems = [];
  // Every package the lock file marks as dev-only (vitest, typescript, eslint, tsx,
  // openapi-typescript, prettier, ... and what only they pull in) must be absent.
  const dev = Object.entries(lock.packages).filter(([k, v]) => k !== "" && v.dev === true);
  for (const [k] of dev) if (fs.existsSync(path.join(app, k))) problems.push(`dev dependency ${k}`);
  for (const name of ["vitest", "typescript", "eslint", "tsx", "openapi-typescript", "prettier"]) {
    if (fs.existsSync(path.join(app, "node_modules", name))) problems.push(`node_modules/${name}`);
  }
  for (const name of Object.keys(pkg.dependencies)) {
    if (!fs.existsSync(path.join(app, "node_modules", name, "package.json"))) problems.push(`missing dependency ${name}`);
  }
  for (const p of ["src", "test", "bench", "docs", "scripts", ".git", "coverage", ".state",
    "tsconfig.json", "bot.config.yaml", "Dockerfile", "node_modules/.cache"]) {
    if (fs.existsSync(path.join(app, p))) problems.push(`/app/${p}`);
  }
  // Test files of our own (third-party packages may ship theirs inside node_modules).
  const walk = (dir, rel) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (r === "node_modules") continue;
      if (e.isDirectory()) {
        if (e.name === "test" || e.name === "tests" || e.name === "__tests__") problems.push(`/app/${r}/`);
        walk(path.join(dir, e.name), r);
      } else if (/\.(test|spec)\.[^/]+$/.test(e.name)) problems.push(`/app/${r}`);
    }
  };
  walk(app, "");
  if (problems.length > 0) {
    console.error("the image holds:\n  " + problems.join("\n  "));
    process.exit(1);
  }
  console.log(`${dev.length} dev-only packages absent, ${Object.keys(pkg.dependencies).length} dependencies present, no tests or sources`);
' "$mnt" | sed 's/^/[image-check] /' || fail "the image holds what it should not (above)"
log "/app: $(du -sh "$mnt/app" | cut -f1), of which node_modules $(du -sh "$mnt/app/node_modules" | cut -f1)"
buildah umount "$ctr" >/dev/null

phase ''
log "timings:"
for t in "${TIMINGS[@]}"; do log "  $t"; done
log "  $(printf '%-34s %7ss' total "$(seconds $(($(now_ms) - START_MS)))")"
