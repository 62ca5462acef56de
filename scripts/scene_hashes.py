#!/usr/bin/env python3
"""Bit-identity of every scene on the CPU backend: one hash of each scene's final state.

Runs every scene of apps/scenes/*.json and bench/scenes/*.json with a build's `slender` program
(it builds nothing) on the CPU backend, one thread (SLENDER_THREADS=1), for a fixed number of
steps of the scene's own dt, with a checkpoint after every step into a temporary folder and no
other output. It prints one line per scene: its name, the steps taken, the run's exit code and
a SHA-256 of the final checkpoint's state: every byte of its payload after the scene's
fingerprint (the time, the step and warning counters, the run cursor, every State array, the
held DOFs, the boundary events applied). The fingerprint (a hash of the model's arrays and
settings) is left out on purpose: a refactor that moves a family's data into a table changes
the model's arrays, not the trajectory; the fingerprint's hash is printed apart, for a note.

    scripts/scene_hashes.py build/slender                 # print the table
    scripts/scene_hashes.py build/slender --save FILE     # and write it to FILE
    scripts/scene_hashes.py build/slender --check FILE    # compare: exit 1 naming each scene
                                                          # whose state differs (a scene not
                                                          # in FILE is new: named, not failed)

Steps: STEPS (200) of every scene's dt, unless SHORT below names fewer (the scenes whose steps
are slow on one thread: gripper, jellyfish and parachute, cut so that each run takes at most
~7 s in a Release build). An adaptive scene that halves its step takes more, smaller steps to the same
time; the step count is in the state hashed. The whole table takes ~1 minute in a Release
build on one core. A run that fails (a step that does not converge) still has its last good
state hashed, with its exit code in the table.
"""

import argparse
import hashlib
import json
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
STEPS = 200
# scenes whose steps are slow on one core: fewer steps (measured, Release build, 1 thread)
SHORT = {"gripper.json": 40, "jellyfish.json": 80, "parachute.json": 80}


def scenes():
    out = []
    for folder in ("apps/scenes", "bench/scenes"):
        out += sorted((ROOT / folder).glob("*.json"))
    return out


def state_hash(path):
    """(sha256 of the state after the fingerprint, fnv of the fingerprint part) of a checkpoint"""
    data = path.read_bytes()
    magic = b"SLENDERCK\0"
    if not data.startswith(magic):
        raise RuntimeError(f"{path}: not a Slender checkpoint")
    pos = len(magic) + 4 + 8  # magic, format version (u32), checksum (u64)
    (nparts,) = struct.unpack_from("<I", data, pos)
    fp_begin = pos
    pos += 4
    for _ in range(nparts):
        (n,) = struct.unpack_from("<I", data, pos)
        pos += 4 + n + 8  # name, its 64-bit hash
    fingerprint = hashlib.sha256(data[fp_begin:pos]).hexdigest()[:16]
    return hashlib.sha256(data[pos:]).hexdigest(), fingerprint


def run_scene(slender, scene, steps, tmp):
    spec = json.loads(scene.read_text())
    dt = float(spec["integrator"]["dt"])
    out = pathlib.Path(tmp) / scene.stem
    cmd = [str(slender), "run", str(scene), "--backend", "cpu", "--duration", repr(steps * dt),
           "--out", str(out), "--no-output", "--quiet", "--checkpoint-every", "1"]
    env = dict(os.environ, SLENDER_THREADS="1")
    t0 = time.time()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.time() - t0
    ck = out / "checkpoint.slck"
    if not ck.exists():
        return None, None, p.returncode, wall, p.stdout.strip()
    h, fp = state_hash(ck)
    return h, fp, p.returncode, wall, p.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("slender", help="the slender program of a build (build/slender)")
    ap.add_argument("--save", help="write the table to this file")
    ap.add_argument("--check", help="compare with a table saved before; exit 1 on a difference")
    ap.add_argument("--only", help="run only the scenes whose name contains this")
    a = ap.parse_args()
    slender = pathlib.Path(a.slender).resolve()
    if not slender.exists():
        sys.exit(f"scene_hashes: no program {slender}")

    lines = []
    with tempfile.TemporaryDirectory(prefix="scene_hashes_") as tmp:
        for scene in scenes():
            name = f"{scene.parent.parent.name}/{scene.name}"
            if a.only and a.only not in name:
                continue
            steps = SHORT.get(scene.name, STEPS)
            h, fp, rc, wall, log = run_scene(slender, scene, steps, tmp)
            if h is None:
                h, fp = "no-checkpoint", "-"
                print(f"scene_hashes: {name}: no checkpoint written (exit {rc}): {log[-400:]}",
                      file=sys.stderr)
            line = f"{name} steps={steps} rc={rc} {h}"
            lines.append(line)
            print(f"{line}  (fingerprint {fp}, {wall:.1f} s)", flush=True)

    if a.save:
        pathlib.Path(a.save).write_text("\n".join(lines) + "\n")
    if a.check:
        saved = {}
        for line in pathlib.Path(a.check).read_text().splitlines():
            if line.strip():
                saved[line.split()[0]] = line
        bad, new = [], []
        for line in lines:
            name = line.split()[0]
            if name not in saved:
                new.append(name)  # a scene added since: nothing to compare with
            elif saved[name] != line:
                bad.append(f"{name}: differs\n  was {saved[name]}\n  now {line}")
        if not a.only:
            for name in saved:
                if name not in {l.split()[0] for l in lines}:
                    bad.append(f"{name}: in {a.check}, not run now")
        if bad:
            print("scene_hashes: " + str(len(bad)) + " scene(s) differ:\n" + "\n".join(bad),
                  file=sys.stderr)
            sys.exit(1)
        print(f"scene_hashes: all {len(lines) - len(new)} scenes of {a.check} bit-identical" +
              (f"; new since (not compared): {', '.join(new)}" if new else ""))


if __name__ == "__main__":
    main()
