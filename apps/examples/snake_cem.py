#!/usr/bin/env python3
"""Learning example: a soft snake in a resistive-force medium learns to crawl forward.

The cross-entropy method improves the travelling curvature wave (amplitude, wavelength,
frequency) of 64 snakes simulated together on a BatchedSimulator; it prints the reward curve
(mean and best forward speed per iteration) and writes a plot (PNG with matplotlib, SVG
without).

    PYTHONPATH=build/python python3 apps/examples/snake_cem.py [--envs 64] [--iterations 12]
        [--seconds 2] [--out snake_cem] [--engine per-env|vectorized] [--backend cpu|cuda]
"""

import argparse
import os
import sys
import time

import numpy as np

from slender import snake


def write_svg(path, history):
    its = [h["iteration"] for h in history]
    series = {"mean": [h["mean_reward"] for h in history],
              "best": [h["best_reward"] for h in history]}
    lo = min(min(v) for v in series.values())
    hi = max(max(v) for v in series.values())
    if hi == lo:
        hi = lo + 1
    w, h, m = 640, 400, 50

    def xy(i, v):
        x = m + (w - 2 * m) * (i / max(1, its[-1]))
        y = h - m - (h - 2 * m) * (v - lo) / (hi - lo)
        return f"{x:.1f},{y:.1f}"

    lines = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{w / 2}" y="25" text-anchor="middle" font-size="16">snake: forward '
             'speed per CEM iteration [m/s]</text>',
             f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="black"/>',
             f'<line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="black"/>',
             f'<text x="{m}" y="{h - m + 20}" font-size="12">0</text>',
             f'<text x="{w - m}" y="{h - m + 20}" font-size="12">{its[-1]}</text>',
             f'<text x="5" y="{h - m}" font-size="12">{lo:.3f}</text>',
             f'<text x="5" y="{m}" font-size="12">{hi:.3f}</text>']
    for name, color in (("mean", "steelblue"), ("best", "darkorange")):
        pts = " ".join(xy(i, v) for i, v in zip(its, series[name]))
        lines.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{pts}"/>')
    lines.append(f'<text x="{w - m - 80}" y="{m + 10}" fill="steelblue">mean</text>')
    lines.append(f'<text x="{w - m - 80}" y="{m + 28}" fill="darkorange">best</text>')
    lines.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=64)
    ap.add_argument("--iterations", type=int, default=12)
    ap.add_argument("--seconds", type=float, default=2.0, help="episode length [s]")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="snake_cem", help="output name (plot and CSV)")
    ap.add_argument("--engine", default="per-env", choices=["per-env", "vectorized"],
                    help="the batch's engine (vectorized: one masked Newton iteration for all)")
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda"],
                    help="cuda: the rollouts on the GPU (the vectorized engine)")
    a = ap.parse_args(argv)
    engine = "vectorized" if a.backend == "cuda" else a.engine
    env = snake.SnakeVectorEnv(a.envs, episode_seconds=a.seconds, engine=engine,
                               backend=a.backend)
    t0 = time.time()
    history = snake.cem(env, iterations=a.iterations, seed=a.seed)
    wall = time.time() - t0
    steps = a.iterations * env.num_envs * env.episode_steps * env.substeps
    where = "the GPU" if a.backend == "cuda" else "the CPU"
    print(f"{steps} env-steps in {wall:.1f} s ({steps / wall:.0f} env-steps/s on {where})")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out + ".csv", "w") as f:
        f.write("iteration,mean_reward,best_reward,amplitude,wavelength,frequency\n")
        for h in history:
            f.write(f"{h['iteration']},{h['mean_reward']},{h['best_reward']},"
                    + ",".join(f"{v}" for v in h["mean"]) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot([h["mean_reward"] for h in history], label="population mean")
        ax.plot([h["best_reward"] for h in history], label="best")
        ax.set_xlabel("CEM iteration")
        ax.set_ylabel("forward speed [m/s]")
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.out + ".png", dpi=120)
        print(f"wrote {a.out}.png and {a.out}.csv")
    except ImportError:
        write_svg(a.out + ".svg", history)
        print(f"wrote {a.out}.svg and {a.out}.csv (no matplotlib: SVG)")
    return 0 if history[-1]["mean_reward"] > history[0]["mean_reward"] else 1


if __name__ == "__main__":
    sys.exit(main())
