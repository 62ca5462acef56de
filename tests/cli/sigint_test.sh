#!/bin/bash
# Issue 18, fault 9: Ctrl-C during `slender run` stops the run after the step in progress, with
# complete outputs (the .pvd series, energies.csv, no .part file) and exit code 130.
# usage: sigint_test.sh SLENDER_BINARY SCENE OUT_DIR
set -u
bin=$1
scene=$2
out=$3
rm -rf "$out"
"$bin" run "$scene" --duration 1000 --out "$out" -q &
pid=$!
# wait until the run has recorded a few steps (up to 120 s)
for _ in $(seq 1 1200); do
  if [ -f "$out/energies.csv.part" ] && [ "$(wc -l < "$out/energies.csv.part")" -ge 4 ]; then
    break
  fi
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
code=$?
fail=0
if [ "$code" -ne 130 ]; then echo "exit code $code, expected 130"; fail=1; fi
if ls "$out"/*.pvd > /dev/null 2>&1; then :; else echo "no .pvd series"; fail=1; fi
if [ ! -f "$out/energies.csv" ]; then echo "no energies.csv"; fail=1; fi
parts=$(find "$out" -name '*.part' | wc -l)
if [ "$parts" -ne 0 ]; then echo "$parts .part files left"; fail=1; fi
# every row of energies.csv complete: as many fields as the header
if [ -f "$out/energies.csv" ]; then
  bad=$(awk -F, 'NR == 1 {n = NF} NF != n {c++} END {print c + 0}' "$out/energies.csv")
  if [ "$bad" -ne 0 ]; then echo "$bad incomplete rows in energies.csv"; fail=1; fi
  rows=$(wc -l < "$out/energies.csv")
  echo "interrupted: exit $code, energies.csv has $rows lines"
fi
exit $fail
