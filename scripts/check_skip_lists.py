#!/usr/bin/env python3
"""Every line of scripts/sanitize_skip.txt and scripts/sanitize_skip_covered.txt names a test
that exists: `Suite.Test` or a `Suite.*` / `*` pattern (GoogleTest's filter syntax) matching at
least one test of the CPU suites of a build. A renamed test leaves its old name behind, and
scripts/sanitize.sh would then run it under the sanitizers unnoticed, unless another list names
it. Prints each stale line with its file and line number and exits with 1.

usage: scripts/check_skip_lists.py BUILD_DIR
"""
import fnmatch
import glob
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def tests_of(build):
    names = []
    for exe in sorted(glob.glob(os.path.join(build, "tests", "*_tests"))):
        if not os.access(exe, os.X_OK) or os.path.basename(exe) == "gpu_tests":
            continue
        out = subprocess.run([exe, "--gtest_list_tests"], capture_output=True, text=True,
                             check=True).stdout
        suite = None
        for line in out.splitlines():
            if not line.strip():
                continue
            if not line.startswith(" "):
                suite = line.split()[0]
            else:
                names.append(suite + line.split()[0])
    return names


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    names = tests_of(argv[1])
    if not names:
        print(f"check_skip_lists: no test executables under {argv[1]}/tests", file=sys.stderr)
        return 2
    stale = 0
    for rel in ("scripts/sanitize_skip.txt", "scripts/sanitize_skip_covered.txt"):
        path = os.path.join(ROOT, rel)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for no, line in enumerate(f, 1):
                pat = line.strip()
                if not pat or pat.startswith("#"):
                    continue
                if not any(fnmatch.fnmatchcase(n, pat) for n in names):
                    print(f"{rel}:{no}: '{pat}' matches no test of {argv[1]}")
                    stale += 1
    print(f"check_skip_lists: {len(names)} tests; {stale} stale line(s)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
