#!/bin/bash
# test_app_events.sh - application events (include/dial9.h: dial9_event_id,
# dial9_event) reach the trace as the program recorded them: build/progs/
# app_events records "req.start" and "req.end" on 3 threads and one
# "queue:len" from a signal handler, and prints its own counts, sums,
# minima and maxima. The summary's app_events must equal them, `events`
# must list each with its name and value, the three exports must hold one
# instant (AppEvent in the dial9 format) a recorded event, named by the
# program, and the report a table of them. The program's
# checks of the API's errors (bad names, unknown ids, a full table of 256
# names) must pass, and without the agent it must run (weak symbols).
# shellcheck source=test/integration/lib.sh
. "$(dirname "$0")/lib.sh"
d9_require "$D9_AGENT" "$D9_DECODER" "$D9_PROGS/app_events"

[ "$("$D9_PROGS/app_events" 3 10)" = "api: no agent" ] || d9_fail "without the agent: $("$D9_PROGS/app_events" 3 10)"

out=$D9_TMP/out
d9_run_traced "$D9_TMP/t" "$D9_PROGS/app_events" 3 3001 full >"$out" || d9_fail "app_events failed: $(cat "$out")"
grep -qx 'api: ok' "$out" || d9_fail "the API did not behave as dial9.h says: $(grep '^api' "$out")"
d9_assert_check "$D9_TMP/t"
d9_decode_to "$D9_TMP/sum.json" summary --json "$D9_TMP/t"
[ "$(d9_json "$D9_TMP/sum.json" 'j["dropped"]')" = 0 ] || d9_fail "events were dropped: the counts cannot be compared"
want=$(sed -n 's/^app \([^ ]*\) count \([0-9]*\) sum \([0-9-]*\) min \([0-9-]*\) max \([0-9-]*\)$/\1 \2 \3 \4 \5/p' "$out" | sort)
got=$(d9_json "$D9_TMP/sum.json" '"\n".join(sorted("%s %d %d %d %d" % (a["name"], a["count"], a["sum"], a["min"], a["max"]) for a in j["app_events"]))')
[ "$(echo "$want" | wc -l)" = 3 ] && [ "$got" = "$want" ] ||
    d9_fail "summary's app_events differ from the program's: got [$got], want [$want]"
total=$(echo "$want" | awk '{n += $2} END {print n}')
per_thread=$(d9_json "$D9_TMP/sum.json" 'sum(t["app_events"] for t in j["threads"])')
[ "$per_thread" = "$total" ] || d9_fail "threads' app_events add up to $per_thread, not $total"

d9_decode_to "$D9_TMP/ev.txt" events "$D9_TMP/t"
[ "$(grep -c ' app name=' "$D9_TMP/ev.txt")" = "$total" ] || d9_fail "events lists $(grep -c ' app name=' "$D9_TMP/ev.txt") app events, not $total"
grep -q ' app name=queue:len value=7$' "$D9_TMP/ev.txt" || d9_fail "no queue:len value=7 in events: $(grep ' app ' "$D9_TMP/ev.txt" | head -3)"
grep -q ' app name=req.end value=-1$' "$D9_TMP/ev.txt" || d9_fail "no req.end value=-1 in events"

d9_decode_to "$D9_TMP/chrome.json" export --format chrome -o "$D9_TMP/tl.json" "$D9_TMP/t"
got=$(d9_json "$D9_TMP/tl.json" 'sum(1 for e in j["traceEvents"] if e.get("ph") == "i" and e.get("name") in ("req.start", "req.end", "queue:len") and "value" in e.get("args", {}))')
[ "$got" = "$total" ] || d9_fail "the chrome export has $got application instants, not $total"
d9_decode_to "$D9_TMP/perfetto.out" export --format perfetto -o "$D9_TMP/tl.pftrace" "$D9_TMP/t"
for name in req.start req.end queue:len; do
    grep -q "$name" "$D9_TMP/tl.pftrace" || d9_fail "the perfetto export does not name $name"
done
d9_decode_to "$D9_TMP/dial9.out" export --format dial9 -o "$D9_TMP/tl.trc" "$D9_TMP/t"
d9_decode_to "$D9_TMP/trc.jsonl" trc-dump "$D9_TMP/tl.trc"
got=$(grep -c '"type":"AppEvent"' "$D9_TMP/trc.jsonl" || true)
[ "$got" = "$total" ] || d9_fail "the dial9 export has $got AppEvents, not $total"
d9_decode_to "$D9_TMP/report.out" report -o "$D9_TMP/report.html" "$D9_TMP/t"
grep -q '<h3 id="app-table">' "$D9_TMP/report.html" && grep -q "<td>req.start</td><td class=\"n\">$(echo "$want" | awk '$1 == "req.start" {print $2}')</td>" "$D9_TMP/report.html" ||
    d9_fail "the report has no application events table with req.start's count"
d9_log "$total application events on 4 threads: summary, events, the three exports and the report agree with the program"
echo "PASS"
