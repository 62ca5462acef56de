#!/usr/bin/env python3
"""S8 from Python (issue 20): the batched snake driven the way a learning loop drives it.

Every step each environment gets its own travelling curvature wave (amplitudes 10-15 1/m, as
slender_batch_bench), and the loop reads an observation (the mean x of each snake's nodes).
Three ways, each timed over the engine's calls (set_natural_curvature and step) and over the
whole loop (the actions' and the observation's computation included):
- numpy: actions computed with numpy on the host, observations from positions() (a host view);
- torch: actions computed with torch on the batch's device (CUDA on the GPU), handed over
  through DLPack (on the CUDA backend copied on the device), observations read through the live
  DLPack view (torch.from_dlpack(batch.live_positions()): no copy);
Prints a markdown table: B, the way, env-steps/s of the engine's calls and of the whole loop
(medians over the repeats, min/max of the engine's ms per batch step). Compare the engine's
column with slender_batch_bench's figure measured in the same run: the difference is the
bindings' overhead.

    PYTHONPATH=build/python python3 bench/s8_python.py [--backend cpu|cuda]
        [--sizes 1,64,1024,4096] [--steps 20] [--repeats 3] [--ways numpy,torch] [--check]
"""

import argparse
import math
import os
import platform
import time

import numpy as np

import slender

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SNAKE = os.path.join(ROOT, "apps", "scenes", "snake.json")


def run_once(model, n, steps, backend, way, torch):
    b = slender.BatchedSimulator(model, n, engine="vectorized", backend=backend)
    nb = model.nbend
    dl = 0.5 / (model.nnode - 1)
    dt = model.dt
    s = (np.arange(nb) + 1) * dl
    amp = 10 + 5.0 * np.arange(n) / max(1, n - 1)
    if way == "torch":
        dev = "cuda" if backend == "cuda" else "cpu"
        ts = torch.tensor(s, dtype=torch.float64, device=dev)
        tamp = torch.tensor(amp, dtype=torch.float64, device=dev)
        kappa = torch.zeros((n, nb, 2), dtype=torch.float64, device=dev)
        live = torch.from_dlpack(b.live_positions())
    else:
        kappa = np.zeros((n, nb, 2))
    engine = whole = 0.0
    obs = None
    for k in range(steps):
        t0 = time.perf_counter()
        t = (k + 1) * dt
        if way == "torch":
            kappa[:, :, 1] = (tamp * dl)[:, None] * torch.sin(
                2 * math.pi * (ts / 0.53 + 1.9 * t))[None, :]
        else:
            kappa[:, :, 1] = (amp * dl)[:, None] * np.sin(2 * np.pi * (s / 0.53 + 1.9 * t))[None, :]
        t1 = time.perf_counter()
        b.set_natural_curvature(kappa)
        st = b.step()
        t2 = time.perf_counter()
        obs = live[:, :, 0].mean(dim=1) if way == "torch" else b.positions()[:, :, 0].mean(axis=1)
        if way == "torch" and backend == "cuda":
            torch.cuda.synchronize()
        t3 = time.perf_counter()
        if (st != 0).any():
            raise RuntimeError(f"{int((st != 0).sum())} environments failed at step {k}")
        engine += t2 - t1
        whole += t3 - t0
    return engine / steps, whole / steps, float(obs[0])


def check(model, backend, torch, n=64, steps=10):
    """the same waves from numpy and from torch (on the batch's device): the same bits; a NaN
    in a torch action is refused with an error naming its environment"""
    xs = []
    for way in ("numpy", "torch"):
        b = slender.BatchedSimulator(model, n, engine="vectorized", backend=backend)
        dev = "cuda" if backend == "cuda" else "cpu"
        j = np.arange(model.nbend)
        for k in range(steps):
            kappa = np.zeros((n, model.nbend, 2))
            kappa[:, :, 1] = (0.1 + 0.001 * np.arange(n))[:, None] * np.sin(0.12 * j - 0.1 * k)
            b.set_natural_curvature(kappa if way == "numpy" else torch.from_numpy(kappa).to(dev))
            assert (b.step() == 0).all()
        if way == "torch":
            bad = torch.zeros((n, model.nbend, 2), dtype=torch.float64, device=dev)
            bad[5, 2, 1] = float("nan")
            try:
                b.set_natural_curvature(bad)
                raise AssertionError("a NaN action was taken")
            except RuntimeError as e:
                assert "environment 5" in str(e) or "not finite" in str(e), str(e)
                print(f"check: a NaN action refused: {e}")
        assert (b.step() == 0).all()
        xs.append(b.positions().copy())
    same = np.array_equal(xs[0], xs[1])
    print(f"check: actions from torch on {backend} give "
          + ("the same bits as numpy's" if same else
             f"DIFFERENT positions (max {np.abs(xs[0] - xs[1]).max():.3e})"))
    return same


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--sizes", default="1,64,1024,4096")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ways", default="numpy,torch")
    ap.add_argument("--check", action="store_true",
                    help="first check that torch's actions give numpy's bits (needs torch)")
    a = ap.parse_args()
    model = slender.load_model(SNAKE)
    ways = a.ways.split(",")
    torch = None
    if "torch" in ways:
        try:
            import torch  # noqa: F401
        except ImportError:
            print("(torch is not installed: the torch way is left out)")
            ways = [w for w in ways if w != "torch"]
    print(f"S8 from Python: snake {model.nnode} nodes, backend {a.backend}, vectorized engine, "
          f"{a.steps} steps, {a.repeats} repeats; {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, numpy {np.__version__}"
          + (f", torch {torch.__version__}" if torch else ""))
    if a.check and torch and not check(model, a.backend, torch):
        raise SystemExit(1)
    print()
    print("| B | way | engine ms/batch step min/med/max | engine env-steps/s | "
          "whole loop env-steps/s |")
    print("| --- | --- | --- | --- | --- |")
    for n in [int(x) for x in a.sizes.split(",")]:
        for way in ways:
            runs = [run_once(model, n, a.steps, a.backend, way, torch) for _ in range(a.repeats)]
            eng = sorted(r[0] for r in runs)
            whole = sorted(r[1] for r in runs)
            med, wmed = eng[len(eng) // 2], whole[len(whole) // 2]
            print(f"| {n} | {way} | {1e3 * eng[0]:.3f} / {1e3 * med:.3f} / {1e3 * eng[-1]:.3f} | "
                  f"{n / med:.0f} | {n / wmed:.0f} |", flush=True)


if __name__ == "__main__":
    main()
