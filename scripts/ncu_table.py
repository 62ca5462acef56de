#!/usr/bin/env python3
"""Nsight Compute's per-kernel summary as a markdown table, the kernels by their total time.

Reads the output of `ncu --metrics gpu__time_duration.sum --print-summary per-kernel PROGRAM ...`
(one block per kernel: its name line with `Invocations N`, then the metric's row with its unit,
minimum, maximum and average) and prints, for the `--top` kernels of largest total time (average
times invocations): total [us], average, minimum and maximum [us] per call, the calls, and the
kernel's name shortened (template arguments of the launch helpers and parameter lists dropped).
The last line gives the sum over every kernel.

    scripts/ncu_table.py ncu_s1.txt [--top 20]
"""

import argparse
import re
import sys

UNITS = {"ns": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}


def short_name(line):
    name = line.strip()
    name = re.sub(r",\s*Device \d+.*$", "", name)  # the launch's device and invocation count
    name = re.sub(r"\s*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)\s*$", "", name)  # grid and block
    name = re.sub(r"^void ", "", name)
    name = name.replace("slender::", "").replace("<unnamed>::", "")
    name = re.sub(r"^unnamed>::", "", name)  # (how ncu prints an anonymous namespace's start)
    # the parameter list: the last parenthesised group, at the end
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i].rstrip()
                break
    return name[:140]


def read(text):
    rows = {}
    name = None
    calls = 0
    for line in text.splitlines():
        m = re.search(r"Invocations (\d+)", line)
        if m and line.startswith("  "):
            name, calls = short_name(line), int(m.group(1))
            continue
        m = re.match(r"\s+gpu__time_duration\.sum\s+(\S+)\s+([\d.,]+)\s+([\d.,]+)\s+([\d.,]+)", line)
        if m and name:
            unit = UNITS.get(m.group(1))
            if unit is None:
                raise SystemExit(f"ncu_table: unknown unit {m.group(1)!r} in: {line.strip()}")
            lo, hi, avg = (float(v.replace(",", "")) * unit for v in m.groups()[1:])
            r = rows.setdefault(name, {"calls": 0, "total": 0.0, "min": lo, "max": hi})
            r["calls"] += calls
            r["total"] += avg * calls
            r["min"] = min(r["min"], lo)
            r["max"] = max(r["max"], hi)
            name = None
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args()
    with open(a.file, errors="replace") as f:
        rows = read(f.read())
    if not rows:
        print(f"ncu_table: no kernel summary in {a.file}", file=sys.stderr)
        return 1
    order = sorted(rows.items(), key=lambda kv: -kv[1]["total"])
    total = sum(r["total"] for r in rows.values())
    print("| kernel | total [us] | share | us per call (avg) | min | max | calls |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, r in order[: a.top]:
        avg = r["total"] / r["calls"] if r["calls"] else 0.0
        print(f"| `{name}` | {r['total']:.1f} | {100 * r['total'] / total:.1f} % | {avg:.2f} | "
              f"{r['min']:.2f} | {r['max']:.2f} | {r['calls']} |")
    rest = len(order) - a.top
    print(f"\n{len(order)} kernels, {total:.1f} us in all" +
          (f" ({rest} more below the table)" if rest > 0 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
