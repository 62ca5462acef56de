#!/usr/bin/env python3
"""Soak runs (issue 18, item 4): long runs whose memory must stay flat.

1. `slender run` of a contact scene (apps/scenes/rod_drop.json: a 51-node rod dropped on the
   ground with friction, resting on it for most of the run) for STEPS steps at dt = 1 ms, frames
   and node rows recorded every 1000 steps; the program's resident memory (VmRSS) sampled every
   SAMPLE seconds from /proc.
2. A vectorized batch of ENVS environments of a small rod on the ground (11 nodes, friction),
   stepped BATCH_STEPS times with a random natural curvature per environment changed every 100
   steps, and each environment reset with probability 1/200 at every step; this process's
   VmRSS sampled every 1000 steps.

Prints, per run, the RSS after warm-up (the first tenth), at the end and its largest value, and
whether the growth from warm-up to the end stays under 5 % (a leak of even a few bytes per step
would show over these step counts).

    PYTHONPATH=build/python python3 bench/soak.py [--steps 1000000] [--envs 1024]
        [--batch-steps 100000] [--slender build/slender] [--progress 5000] [--batch-only]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def rss_kib(pid="self"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def report(title, samples, steps):
    """samples: (step, rss KiB) pairs"""
    warm = [r for s, r in samples if s >= steps // 10]
    start, end, peak = warm[0], samples[-1][1], max(r for _, r in samples)
    growth = (end - start) / start
    print(f"| {title} | {steps} | {start / 1024:.1f} | {end / 1024:.1f} | {peak / 1024:.1f} | "
          f"{100 * growth:+.2f} % | {'flat' if growth < 0.05 else 'GROWS'} |")
    return growth < 0.05


def soak_run(slender, steps, sample):
    with tempfile.TemporaryDirectory() as out:
        cmd = [slender, "run", os.path.join(ROOT, "apps", "scenes", "rod_drop.json"), "--out",
               out, "--dt", "1e-3", "--duration", str(steps * 1e-3), "--every", "1000", "-q"]
        p = subprocess.Popen(cmd)
        t0 = time.time()
        samples = []
        while p.poll() is None:
            try:
                r = rss_kib(p.pid)
            except OSError:
                break
            # the step the run is at, from the elapsed share of an estimated rate: the samples
            # are taken at equal times, so their index stands in for progress
            samples.append((len(samples), r))
            time.sleep(sample)
        wall = time.time() - t0
        if p.returncode != 0:
            sys.exit(f"soak: {' '.join(cmd)} failed with exit code {p.returncode}")
        n = len(samples)
        scaled = [(int(i * steps / max(n, 1)), r) for i, r in samples]
        print(f"(run: {wall:.0f} s wall, {n} samples)", file=sys.stderr)
        return scaled


def soak_batch(envs, steps, progress=0):
    import slender

    b = slender.SceneBuilder("soak_rod")
    m = b.material("m", density=1000, youngs_modulus=1e6, poisson_ratio=0.5)
    b.straight_rod("rod", [0, 0, 0.02], [0.1, 0, 0.02], 11, m, b.circle(2e-3))
    b.gravity([0, 0, -9.81])
    b.ground(friction=0.3)
    b.integrator(dt=1e-3)
    model = b.build()
    batch = slender.BatchedSimulator(model, envs, engine="vectorized")
    rng = np.random.default_rng(7)
    samples = []
    failed = 0
    t0 = time.time()
    for k in range(steps):
        if k % 100 == 0:
            batch.set_natural_curvature(rng.uniform(-0.05, 0.05, size=(envs, model.nbend, 2)))
        status = batch.step()
        failed += int(np.count_nonzero(status))
        mask = rng.random(envs) < 1 / 200
        if mask.any():
            batch.reset(mask)
        if k % 1000 == 0:
            samples.append((k, rss_kib()))
        if progress and k % progress == 0 and k:
            wall = time.time() - t0
            print(f"(batch: step {k}, RSS {samples[-1][1] / 1024:.1f} MiB, "
                  f"{envs * k / wall:.0f} env-steps/s, {failed} failed env-steps)",
                  file=sys.stderr, flush=True)
    samples.append((steps, rss_kib()))
    wall = time.time() - t0
    print(f"(batch: {wall:.0f} s wall, {envs * steps / wall:.0f} env-steps/s, {failed} failed "
          f"env-steps)", file=sys.stderr)
    return samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--sample", type=float, default=0.5)
    ap.add_argument("--envs", type=int, default=1024)
    ap.add_argument("--batch-steps", type=int, default=100_000)
    ap.add_argument("--slender", default=os.path.join(ROOT, "build", "slender"))
    ap.add_argument("--progress", type=int, default=0,
                    help="print the batch's step, RSS and rate every this many steps")
    ap.add_argument("--batch-only", action="store_true", help="leave out the slender run")
    args = ap.parse_args()
    print("| run | steps | RSS after warm-up [MiB] | RSS at the end [MiB] | largest [MiB] | "
          "growth | |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    ok = True
    if not args.batch_only:
        ok = report("slender run rod_drop.json (ground contact, friction), outputs every 1000 "
                    "steps", soak_run(args.slender, args.steps, args.sample), args.steps)
    ok = report(f"vectorized batch, {args.envs} rods on the ground, random actions and resets",
                soak_batch(args.envs, args.batch_steps, args.progress), args.batch_steps) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
