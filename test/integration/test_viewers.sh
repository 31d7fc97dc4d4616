#!/bin/bash
# test_viewers.sh - the browser proof of issue 6: the HTML report and the
# Chrome export open in Debian's chromium (headless, --no-sandbox,
# --disable-gpu, a fresh profile), driven by playwright-core
# (test/viewers/check_viewers.js). Files are served by python3 -m http.server
# on 127.0.0.1. Asserted:
#   (a) report.html: no console error, exception or failed request; it
#       requests nothing but itself and has no script; the utilization chart
#       has a row per thread and the histograms visible bars whose counts add
#       up to each chart's count; screenshot $BUILD/test-artifacts/report.png
#       (and report-utilization.png, report-histograms.png);
#   (b) speedscope (npm, served from 127.0.0.1) loads the Chrome export by
#       #profileURL=: the page is titled after the profile, shows a profile
#       per thread track named after its thread, no error message, no console
#       error; screenshot $BUILD/test-artifacts/speedscope.png;
#   (c) a plain page fetches the export, JSON.parses it and finds traceEvents
#       with a thread_name per thread and slices.
# A negative control (the report with a script logging an error and an
# image from another origin) must make the checker fail.
# Needs chromium and npm (scripts/install-deps.sh test installs both; a
# missing one fails the test). npm packages, pinned, are installed once from
# the npm registry into $BUILD/npm-cache and reused.
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/ground_truth"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || d9_fail "$CHROMIUM is missing (Debian: chromium; scripts/install-deps.sh test)"
command -v node >/dev/null || d9_fail "node is missing (scripts/install-deps.sh test)"
command -v npm >/dev/null || d9_fail "npm is missing (Debian: npm; scripts/install-deps.sh test)"

PLAYWRIGHT_VERSION=1.65.1
SPEEDSCOPE_VERSION=1.25.0
NPM_DIR=$D9_BUILD/npm-cache
ART=$D9_BUILD/test-artifacts
mkdir -p "$NPM_DIR" "$ART"

# npm_version PKG: the installed version of PKG in the cache, or nothing.
npm_version() {
    node -e 'try { console.log(require(process.argv[1]).version) } catch (e) {}' \
        "$NPM_DIR/node_modules/$1/package.json"
}
if [ "$(npm_version playwright-core)" != "$PLAYWRIGHT_VERSION" ] ||
    [ "$(npm_version speedscope)" != "$SPEEDSCOPE_VERSION" ]; then
    d9_log "installing playwright-core@$PLAYWRIGHT_VERSION speedscope@$SPEEDSCOPE_VERSION into $NPM_DIR"
    printf '{"private": true, "dependencies": {"playwright-core": "%s", "speedscope": "%s"}}\n' \
        "$PLAYWRIGHT_VERSION" "$SPEEDSCOPE_VERSION" >"$NPM_DIR/package.json"
    # playwright-core never downloads browsers; the variable makes sure.
    # Node trusts only its bundled CAs unless told: add Debian's store (where
    # a site's TLS proxy CA is installed), and fail in a minute, not hang.
    [ -n "${NODE_EXTRA_CA_CERTS:-}" ] || [ ! -r /etc/ssl/certs/ca-certificates.crt ] ||
        export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 timeout -k 5 120 npm install --prefix "$NPM_DIR" --no-audit --no-fund \
        --no-update-notifier --fetch-retries=1 --fetch-timeout=20000 >"$D9_TMP/npm.log" 2>&1 ||
        d9_fail "npm install failed: $(tail -n 20 "$D9_TMP/npm.log")"
fi
SPEEDSCOPE=$NPM_DIR/node_modules/speedscope/dist/release
[ -f "$SPEEDSCOPE/index.html" ] || d9_fail "speedscope has no $SPEEDSCOPE/index.html"

# A real trace, its report and its Chrome export.
trace=$D9_TMP/gt
d9_run_traced "$trace" "$D9_PROGS/ground_truth" >"$D9_TMP/truth.json" 2>"$D9_TMP/gt.err" ||
    d9_fail "ground_truth failed under the agent: $(cat "$D9_TMP/gt.err")"
www=$D9_TMP/www
mkdir -p "$www"
d9_decode_to "$D9_TMP/summary.json" summary --json "$trace"
"$D9_DECODER" report -o "$www/report.html" "$trace" || d9_fail "report failed"
"$D9_DECODER" export --format chrome -o "$www/trace.json" "$trace" || d9_fail "export --format chrome failed"
cp "$D9_ROOT/test/viewers/load_trace.html" "$www/"
ln -s "$SPEEDSCOPE" "$www/speedscope"
cp "$www/report.html" "$ART/report.html"
# Negative control: what the checker must catch.
sed '0,/<title>/s|<title>|<script>console.error("negative control")</script><img src="http://127.0.0.1:9/x.png"><title>|' \
    "$www/report.html" >"$www/bad.html"

port=$(d9_free_port)
python3 -m http.server --bind 127.0.0.1 --directory "$www" "$port" >"$D9_TMP/http.log" 2>&1 &
d9_track $!
d9_wait_port "$port" 10 $!

# config NAME PROFILE_DIR ARTIFACTS [EXTRA JSON]: a check_viewers.js config.
config() {
    python3 - "$@" <<'EOF'
import json, os, sys
name, profile, art, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
summary = json.load(open(os.environ["D9_SUMMARY"]))
cfg = {
    "modules": os.environ["D9_NPM"] + "/node_modules", "chromium": os.environ["D9_CHROMIUM"],
    "profile": profile, "base": "http://127.0.0.1:" + os.environ["D9_PORT"],
    "report": "report.html", "trace": "trace.json", "speedscope": "speedscope/index.html",
    "loader": "load_trace.html", "artifacts": art,
    "threads": sorted({t["name"] for t in summary["threads"] if t["name"]}),
    "nthreads": len(summary["threads"]),
}
for e in extra:
    cfg.update(json.loads(e))
json.dump(cfg, open(name, "w"))
EOF
}
export D9_SUMMARY=$D9_TMP/summary.json D9_NPM=$NPM_DIR D9_CHROMIUM=$CHROMIUM D9_PORT=$port
rm -f "$ART/report.png" "$ART/speedscope.png"
config "$D9_TMP/cfg.json" "$D9_TMP/profile" "$ART" || d9_fail "cannot write the config"
rc=0
timeout -k 5 90 node "$D9_ROOT/test/viewers/check_viewers.js" "$D9_TMP/cfg.json" || rc=$?
[ "$rc" -eq 0 ] || d9_fail "the browser checks failed (exit $rc, see above)"
for png in report.png speedscope.png; do
    [ -s "$ART/$png" ] || d9_fail "no screenshot $ART/$png"
done
d9_log "screenshots: $ART/report.png $ART/speedscope.png"

mkdir -p "$D9_TMP/bad-art"
config "$D9_TMP/bad.json" "$D9_TMP/profile-bad" "$D9_TMP/bad-art" '{"report": "bad.html", "checks": ["report"]}' ||
    d9_fail "cannot write the config"
rc=0
timeout -k 5 60 node "$D9_ROOT/test/viewers/check_viewers.js" "$D9_TMP/bad.json" >"$D9_TMP/bad.out" 2>&1 || rc=$?
sed 's/^/# negative control: /' "$D9_TMP/bad.out"
[ "$rc" -eq 1 ] || d9_fail "the checker passed a page with a console error and a foreign request (exit $rc)"
grep -q '^FAIL report: no console errors.*negative control' "$D9_TMP/bad.out" ||
    d9_fail "the checker missed the console error"
grep -q '^FAIL report: fetched nothing but itself.*127.0.0.1:9' "$D9_TMP/bad.out" ||
    d9_fail "the checker missed the foreign request"
echo "ok"
