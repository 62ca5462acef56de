#!/usr/bin/env python3
"""Chooses the tests that scripts/sanitize.sh runs under ASan and UBSan by the code they cover.

Runs every GoogleTest suite (each `Suite.*` of each CPU test executable, as its own process;
the suites named by --split test by test) of a build made like build-san/ plus clang's
source-based coverage, timing each and keeping its profile; then takes the library's lines
(host/ and include/) each one executes, and keeps units greedily by new lines per second until
they cover every line the whole suite does. What it writes (--out, default
scripts/sanitize_skip_covered.txt) is the units left out, `Suite.*` or `Suite.Test` a line,
which scripts/sanitize.sh adds to its negative filter; the long tests of
scripts/sanitize_skip.txt stay out of the measurement and of the sanitizer run alike. Runs are
kept (build/suite-coverage/runs.json and the profiles), so a second call with other --split
suites reruns only what changed.

`--left-out-files BUILD` (no measurement) prints, ';'-separated, the test sources of which
the sanitizer run would run no test: the test executables of a plain build (BUILD, e.g. build/)
list their tests under the same negative filter as scripts/sanitize.sh, each suite is found in
its source file, and a file none of whose tests is listed is not needed. scripts/
instrumented_build.sh leaves those files out of build-san/ (they compile in the plain build,
which runs them; `sanitize.sh --all` builds them too).

`--check-skip-lists BUILD` (no measurement; a ctest) prints every line of the two skip lists
that matches no test of the build's executables and exits with 1 if there is one.

usage (about 20 minutes on 2 cores; the build alone as long as build-san's):
  cmake -S . -B build-cov <build-san's options> \\
    -DCMAKE_CXX_FLAGS="<build-san's flags> -fprofile-instr-generate -fcoverage-mapping" \\
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined -fprofile-instr-generate" \\
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined -fprofile-instr-generate"
  cmake --build build-cov
  python3 scripts/sanitizer_subset.py build-cov [--jobs 2] [--out FILE] [--report FILE]
"""

import argparse
import fnmatch
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def skip_list():
    with open(os.path.join(ROOT, "scripts", "sanitize_skip.txt")) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def list_suites(exe):
    """{suite: [test, ...]} of a test executable, in its order"""
    out = subprocess.run([exe, "--gtest_list_tests"], capture_output=True, text=True,
                         check=True, env=dict(os.environ, LLVM_PROFILE_FILE=os.devnull)).stdout
    suites, current = {}, None
    for line in out.splitlines():
        if not line.strip() or line.startswith("Running main"):
            continue
        if not line.startswith(" "):
            current = line.split(".")[0]  # "Suite." or "Suite.  # TypeParam = ..."
            suites[current] = []
        elif current is not None:
            suites[current].append(line.split("#")[0].strip())
    return suites


def run_unit(build, exe, unit, skip, profdir, cache):
    """runs one unit, "Suite.*" or "Suite.Test", alone (or takes its earlier run from the cache)"""
    name = f"{os.path.basename(exe)}--{unit.replace('/', '_').replace('*', 'ALL')}"
    raw = os.path.join(profdir, name + ".profraw")
    if name in cache and os.path.exists(raw):
        return dict(cache[name], raw=raw, name=name, unit=unit, exe=os.path.basename(exe))
    env = dict(os.environ, LLVM_PROFILE_FILE=raw, ASAN_OPTIONS="detect_leaks=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1", OMP_NUM_THREADS="1")
    filt = unit + (f"-{':'.join(skip)}" if skip else "")
    t0 = time.monotonic()
    p = subprocess.run([exe, f"--gtest_filter={filt}", "--gtest_brief=1"], env=env,
                       capture_output=True, text=True)
    dt = time.monotonic() - t0
    ran = re.search(r"\[==========\] (\d+) tests? from", p.stdout)
    return dict(exe=os.path.basename(exe), unit=unit, seconds=dt, rc=p.returncode,
                tests=int(ran.group(1)) if ran else 0, raw=raw, name=name)


LIB_FILE = re.compile(r"^SF:(.*)$")


def covered_lines(build, exe, raw, profdir, name):
    """the library lines (host/, include/) the suite's run executed, as a set of 'file:line'"""
    data = os.path.join(profdir, name + ".profdata")
    subprocess.run(["llvm-profdata", "merge", "-sparse", raw, "-o", data], check=True)
    objects = []
    for lib in ("libslender_host.so", "libslender_base.so"):
        objects += ["-object", os.path.join(build, lib)]
    out = subprocess.run(["llvm-cov", "export", "-format=lcov", "-skip-functions",
                          "-instr-profile", data, exe, *objects],
                         capture_output=True, text=True, check=True).stdout
    lines, keep, current = set(), False, ""
    for line in out.splitlines():
        m = LIB_FILE.match(line)
        if m:
            rel = os.path.relpath(m.group(1), ROOT)
            keep = rel.startswith("host/") or rel.startswith("include/")
            current = rel
        elif keep and line.startswith("DA:"):
            num, count = line[3:].split(",")[:2]
            if int(count) > 0:
                lines.add(f"{current}:{num}")
    return lines


def skip_lines(with_covered=True):
    """(list, line number, pattern) of every pattern of the skip lists"""
    names = ["sanitize_skip.txt"] + (["sanitize_skip_covered.txt"] if with_covered else [])
    lines = []
    for n in names:
        path = os.path.join(ROOT, "scripts", n)
        if os.path.exists(path):
            with open(path) as f:
                lines += [(f"scripts/{n}", no, l.strip()) for no, l in enumerate(f, 1)
                          if l.strip() and not l.startswith("#")]
    return lines


def skip_patterns(with_covered=True):
    """the negative filter of scripts/sanitize.sh: its long tests and the covered units"""
    return [pat for _, _, pat in skip_lines(with_covered)]


def test_executables(build):
    """the CPU test executables of a build"""
    exes = sorted(e for e in glob.glob(os.path.join(build, "tests", "*_tests"))
                  if os.access(e, os.X_OK) and not e.endswith("gpu_tests"))
    if not exes:
        raise SystemExit(f"sanitizer_subset.py: no test executables in {build}/tests")
    return exes


def stale_skip_lines(build):
    """the skip lists' lines that match no test of the build's executables: a renamed test
    leaves its old name behind, and scripts/sanitize.sh would then run the new one under the
    sanitizers unnoticed, unless another line names it"""
    names = [f"{suite}.{test}" for exe in test_executables(build)
             for suite, tests in list_suites(exe).items() for test in tests]
    return [(lst, no, pat) for lst, no, pat in skip_lines()
            if not any(fnmatch.fnmatchcase(n, pat) for n in names)]


def suite_sources():
    """{suite name: test source relative to tests/} from the TEST* macros"""
    macro = re.compile(r"^\s*(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\(\s*(\w+)\s*,", re.M)
    out = {}
    for path in glob.glob(os.path.join(ROOT, "tests", "*", "*.cpp")):
        with open(path) as f:
            for m in macro.finditer(f.read()):
                out[m.group(1)] = os.path.relpath(path, os.path.join(ROOT, "tests"))
    return out


def left_out_files(build):
    """the CPU test sources of which the sanitizer run runs no test (see the docstring)"""
    sources = suite_sources()
    filt = "-" + ":".join(skip_patterns())
    exes = test_executables(build)

    def files_listed(exe, gtest_filter):
        out = subprocess.run([exe, "--gtest_list_tests", f"--gtest_filter={gtest_filter}"],
                             capture_output=True, text=True, check=True,
                             env=dict(os.environ, LLVM_PROFILE_FILE=os.devnull)).stdout
        files = set()
        for line in out.splitlines():
            if not line.strip() or line.startswith(" ") or line.startswith("Running main"):
                continue
            # "Suite.", "Prefix/Suite.", "Suite/0.  # TypeParam = ..."
            parts = line.split(".")[0].split("/")
            found = [sources[p] for p in parts if p in sources]
            if not found:  # a suite the macros above do not show: keep every file
                return None
            files.add(found[0])
        return files

    # a file is left out only if the plain build has its tests (a build older than the sources
    # may not) and the filter leaves none of them
    known, needed = set(), set()
    for exe in exes:
        every, kept = files_listed(exe, "*"), files_listed(exe, filt)
        if every is None or kept is None:
            return []
        known |= every
        needed |= kept
    return sorted(known - needed)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--left-out-files":
        print(";".join(left_out_files(os.path.abspath(sys.argv[2]))))
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "--check-skip-lists":
        stale = stale_skip_lines(os.path.abspath(sys.argv[2]))
        for lst, no, pat in stale:
            print(f"{lst}:{no}: '{pat}' matches no test of {sys.argv[2]}")
        print(f"sanitizer_subset.py --check-skip-lists: {len(stale)} stale line(s)")
        return 1 if stale else 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--split", default="",
                    help="suites (comma-separated) run and picked test by test: the long ones")
    ap.add_argument("--out", default=os.path.join(ROOT, "scripts", "sanitize_skip_covered.txt"))
    ap.add_argument("--report", default=None, help="a markdown table of every unit")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    profdir = os.path.join(build, "suite-coverage")
    os.makedirs(profdir, exist_ok=True)
    cache_path = os.path.join(profdir, "runs.json")
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    skip = skip_list()
    split = set(filter(None, args.split.split(",")))
    exes = sorted(e for e in glob.glob(os.path.join(build, "tests", "*_tests"))
                  if os.access(e, os.X_OK) and not e.endswith("gpu_tests"))
    jobs = []
    for exe in exes:
        for suite, tests in list_suites(exe).items():
            if suite in split:
                jobs += [(exe, f"{suite}.{t}") for t in tests if f"{suite}.{t}" not in skip]
            else:
                jobs.append((exe, f"{suite}.*"))
    print(f"{len(jobs)} units (suites, and the tests of {len(split)} split suites) in "
          f"{len(exes)} executables", flush=True)
    results = []
    t_all = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for r in pool.map(lambda j: run_unit(build, j[0], j[1], skip, profdir, cache), jobs):
            results.append(r)
            cache[r["name"]] = {k: r[k] for k in ("seconds", "rc", "tests")}
            if r["rc"] != 0:
                print(f"  {r['exe']} {r['unit']}: exit {r['rc']}", flush=True)
    json.dump(cache, open(cache_path, "w"), indent=1)
    print(f"ran them in {time.monotonic() - t_all:.0f} s "
          f"({sum(r['seconds'] for r in results):.0f} s of runs)", flush=True)
    exe_path = {os.path.basename(e): e for e in exes}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        covs = list(pool.map(lambda r: covered_lines(build, exe_path[r["exe"]], r["raw"],
                                                     profdir, r["name"]), results))
    for r, c in zip(results, covs):
        r["lines"] = c
    union = set().union(*covs)
    # greedy: the most new lines per second first, until the union is covered
    chosen, have, left = [], set(), [r for r in results if r["lines"]]
    while have != union and left:
        best = max(left, key=lambda r: len(r["lines"] - have) / max(r["seconds"], 0.05))
        if not best["lines"] - have:
            break
        chosen.append(best)
        have |= best["lines"]
        left.remove(best)
    # a filter names a unit in every executable: one kept anywhere is kept everywhere
    kept = {r["unit"] for r in chosen}
    kept_runs = [r for r in results if r["unit"] in kept]
    t_kept = sum(r["seconds"] for r in kept_runs)
    t_total = sum(r["seconds"] for r in results)
    left_out = sorted({r["unit"] for r in results} - kept)
    print(f"library lines executed by the whole suite: {len(union)}; {len(kept_runs)} of "
          f"{len(results)} units cover {len(have)} of them in {t_kept:.0f} s of {t_total:.0f} s")
    with open(args.out, "w") as f:
        f.write("# GoogleTest suites and tests that scripts/sanitize.sh leaves out because the\n"
                "# others execute every library line (host/, include/) they do. Written by\n"
                "# scripts/sanitizer_subset.py, which runs each suite (the long suites test by\n"
                "# test) alone under ASan, UBSan and clang's coverage: the units kept execute all\n"
                f"# {len(union)} lines the whole CPU suite executes, in {t_kept:.0f} of its "
                f"{t_total:.0f} s there (less\n"
                "# scripts/sanitize_skip.txt). The plain build (ctest) runs every test, and a\n"
                "# suite not listed here (a new one) runs under the sanitizers.\n")
        for unit in left_out:
            f.write(unit + "\n")
    if args.report:
        with open(args.report, "w") as f:
            f.write("| executable | unit | tests | seconds | lines | kept |\n"
                    "| --- | --- | --- | --- | --- | --- |\n")
            for r in sorted(results, key=lambda r: -r["seconds"]):
                f.write(f"| {r['exe']} | {r['unit']} | {r['tests']} | {r['seconds']:.2f} | "
                        f"{len(r['lines'])} | {'yes' if r['unit'] in kept else ''} |\n")
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
