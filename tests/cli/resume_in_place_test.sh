#!/bin/bash
# Issue 49, cases 6 and 7: `timeout -s INT` delivers SIGINT twice (to the program, then to its
# process group); the run still stops after the step in progress with exit code 130 and
# complete outputs (no .part file, the .pvd series there). Resumed into its own folder from its
# checkpoint, the run then ends with every file, the frames, the .pvd, the .usda (issue 52,
# continued from the records the completed file holds) and the last checkpoint included, byte
# for byte as the run that was not interrupted.
# usage: resume_in_place_test.sh SLENDER_BINARY SCENE OUT_DIR
set -u
bin=$1
scene=$2
out=$3
rm -rf "$out"
mkdir -p "$out"
args=(--duration 10 --every 25 --checkpoint-every 40 -q)
fail=0
"$bin" run "$scene" "${args[@]}" --out "$out/whole" --usd "$out/whole/run.usda" ||
  { echo "the whole run failed"; exit 1; }

# stopped by timeout's two signals once the first checkpoint is on disk: SIGINT sent to timeout
# is passed on as timeout passes its own (to the program, then to its process group). Waiting for
# the file, not for a time, keeps the stop inside the run however fast the machine (a 10 s run
# of rod_drop takes seconds; its first checkpoint comes at step 40).
timeout --preserve-status -s INT 600 "$bin" run "$scene" "${args[@]}" --out "$out/stopped" \
  --usd "$out/stopped/run.usda" 2> "$out/stopped.err" &
tpid=$!
for _ in $(seq 1 12000); do
  [ -f "$out/stopped/checkpoint.slck" ] && break
  kill -0 "$tpid" 2> /dev/null || break
  sleep 0.01
done
kill -INT "$tpid" 2> /dev/null
wait "$tpid"
code=$?
if [ "$code" -ne 130 ]; then
  echo "stopped: exit code $code, expected 130: $(cat "$out/stopped.err")"
  exit 1
fi
grep -q "interrupted after" "$out/stopped.err" || { echo "no message: $(cat "$out/stopped.err")"; fail=1; }
parts=$(find "$out/stopped" -name '*.part' | wc -l)
[ "$parts" -eq 0 ] || { echo "$parts .part files left after two signals"; fail=1; }
ls "$out/stopped"/*.pvd > /dev/null 2>&1 || { echo "no .pvd series after two signals"; fail=1; }
[ -f "$out/stopped/checkpoint.slck" ] || { echo "no checkpoint after the stop"; fail=1; }
echo "stopped: $(head -c 200 "$out/stopped.err" | tr '\n' ' ')"
[ "$fail" -eq 0 ] || exit 1

# resumed into its own folder
"$bin" run "$scene" "${args[@]}" --out "$out/stopped" --resume "$out/stopped/checkpoint.slck" \
  --usd "$out/stopped/run.usda" 2> "$out/resumed.err" ||
  { echo "the resumed run failed: $(cat "$out/resumed.err")"; exit 1; }
if ! diff -r "$out/whole" "$out/stopped" > "$out/diff.txt"; then
  echo "the folder of the resumed run differs from the whole run's:"
  head -20 "$out/diff.txt"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "resumed in place: $(find "$out/whole" -type f | wc -l) files identical"
exit $fail
