#!/usr/bin/env python3
"""ptxas -v's report (standard input) as a markdown table of kernels: registers, stack frame,
spill stores and loads, for scripts/ptxas_report.sh. With --check FILE, compares with the table
in FILE (a results file) and exits 1 if a kernel listed there now uses more of any of them.
Issue 47's target (the bend-twist evaluation within 128 registers, no spills) is reported, and
fails the run where it is not met. With --target-only, only the target's lines (the CI test
tests/cuda/ptxas_bend_twist.sh, which compiles that kernel alone)."""

import re
import subprocess
import sys

TARGET = ("EvalStencils<RodBendTwistBinding>", 128)  # issue 47: the bend-twist evaluation


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    return out.stdout.splitlines() if out.returncode == 0 else list(names)


def short(name):
    """The kernel's name without namespaces, its argument list and the launch layer's wrapper."""
    name = name.replace("(anonymous namespace)::", "")
    if name.endswith(")"):  # the parameter list: from its opening parenthesis
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    name = re.sub(r"\b(slender|cuda_exec|vec|contact|cub|CUB_\w+)::", "", name)
    name = name.replace("void ", "")
    return name[:150]


def parse(text):
    kernels = {}
    current = None
    for line in text.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = m.group(1)
            kernels.setdefault(current, [0, 0, 0, 0])
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current:
            kernels[current][1:4] = [int(m.group(1)), int(m.group(2)), int(m.group(3))]
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            kernels[current][0] = int(m.group(1))
            current = None
    # device functions (not entries) report stack frames too: keep the entries (registers)
    entries = {k: v for k, v in kernels.items() if v[0] > 0}
    names = list(entries)
    return {short(d): entries[n] for n, d in zip(names, demangle(names))}


def read_table(path):
    table = {}
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1].isdigit():
            table[cells[0].strip("`")] = [int(c) for c in cells[1:]]
    return table


def main():
    check = sys.argv[sys.argv.index("--check") + 1] if "--check" in sys.argv else None
    now = parse(sys.stdin.read())
    if not now:
        print("ptxas_table: no kernel in ptxas's report", file=sys.stderr)
        return 2
    target_only = "--target-only" in sys.argv
    if not target_only:
        print("| kernel | registers | stack frame (bytes) | spill stores (bytes) | spill loads (bytes) |")
        print("| --- | --- | --- | --- | --- |")
        for name in sorted(now, key=lambda n: (-now[n][0], n)):
            r = now[name]
            print(f"| `{name}` | {r[0]} | {r[1]} | {r[2]} | {r[3]} |")
    targets = [(n, r) for n, r in now.items() if TARGET[0] in n]
    missed = 0
    for n, r in targets:
        met = r[0] <= TARGET[1] and r[2] == 0 and r[3] == 0
        missed += not met
        print(f"\ntarget (issue 47): `{n}` at <= {TARGET[1]} registers and no spills: "
              f"{r[0]} registers, {r[2]}/{r[3]} bytes spilled: {'met' if met else 'not met'}")
    if not targets:
        print(f"ptxas_table: no kernel `{TARGET[0]}` in ptxas's report", file=sys.stderr)
        return 1
    if not check:
        return 1 if missed else 0
    before = read_table(check)
    grown = []
    for name, old in before.items():
        if name in now and any(a > b for a, b in zip(now[name], old)):
            grown.append(f"{name}: {old} -> {now[name]}")
    gone = [n for n in before if n not in now]
    new = [n for n in now if n not in before]
    print(f"\ncheck against {check}: {len(before)} kernels there, {len(new)} new, {len(gone)} gone")
    for g in grown:
        print("grew: " + g)
    return 1 if grown or missed else 0


if __name__ == "__main__":
    sys.exit(main())
