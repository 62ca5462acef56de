#!/bin/bash
# Issue 18: `slender run --checkpoint-every N` and `--resume FILE`: the resumed run's last
# recorded state (energies.csv and nodes.csv, 17 significant digits) is the uninterrupted run's.
# usage: checkpoint_test.sh SLENDER_BINARY SCENE OUT_DIR
set -eu
bin=$1
scene=$2
out=$3
rm -rf "$out"
"$bin" run "$scene" --duration 0.08 --out "$out/whole" -q
"$bin" run "$scene" --duration 0.08 --out "$out/first" --checkpoint-every 30 -q
test -f "$out/first/checkpoint.slck"
"$bin" run "$scene" --duration 0.08 --out "$out/second" --resume "$out/first/checkpoint.slck" -q
fail=0
for f in energies.csv nodes.csv; do
  a=$(tail -1 "$out/whole/$f")
  b=$(tail -1 "$out/second/$f")
  if [ "$a" != "$b" ]; then
    echo "$f: the resumed run ends at"; echo "  $b"; echo "the whole run at"; echo "  $a"
    fail=1
  fi
done
# --duration on a resumed run takes it further than the run that wrote the checkpoint: from the
# step-30 checkpoint of a 0.08 s run to 0.12 s ends as a whole run of 0.12 s
"$bin" run "$scene" --duration 0.12 --out "$out/whole12" -q
"$bin" run "$scene" --duration 0.12 --out "$out/further" --resume "$out/first/checkpoint.slck" -q
if [ "$(tail -1 "$out/whole12/nodes.csv")" != "$(tail -1 "$out/further/nodes.csv")" ]; then
  echo "a run resumed to --duration 0.12 does not end as the whole run of 0.12 s"
  fail=1
fi
# refused NAME WHAT PATTERN SCENE ARGS...: a run of SCENE with ARGS, resuming the step-30
# checkpoint, exits with 2 and an error matching PATTERN (WHAT says the case where it does not)
refused() {
  local name=$1 what=$2 pattern=$3 sc=$4 code
  shift 4
  set +e
  "$bin" run "$sc" --out "$out/$name" --resume "$out/first/checkpoint.slck" -q "$@" \
    2> "$out/$name.err"
  code=$?
  set -e
  if [ "$code" -ne 2 ] || ! grep -q -- "$pattern" "$out/$name.err"; then
    echo "$what: exit $code, $(cat "$out/$name.err")"
    fail=1
  fi
}
# ... and a --duration that ends before the checkpoint is refused (exit 2), naming the option
refused short "a --duration before the checkpoint" "--duration.*nothing to resume" "$scene" \
  --duration 0.04
# a checkpoint of another scene is refused with exit code 2, naming the file
refused other "another scene's checkpoint" "another model" "$(dirname "$scene")/gripper.json" \
  --duration 0.01
# the same scene with inexact Newton (--inexact, integrator.newton.inexact) is another
# integrator: refused, naming it
refused inexact "a checkpoint resumed with --inexact" "integrator" "$scene" --duration 0.08 \
  --inexact
[ "$fail" -eq 0 ] && echo "resumed run ends as the whole run: $(tail -1 "$out/whole/energies.csv" | cut -c1-60)"
exit $fail
