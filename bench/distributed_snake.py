#!/usr/bin/env python3
"""Env-steps per second of the soft snake (slender.snake.SnakeVectorEnv, control_dt = 0.1 s,
10 simulator steps per control step) in one process and split over 1 and 2 Ray actors
(slender.distributed.ShardedVectorEnv) on this machine, for the same total number of
environments, and the cost of the remote calls themselves (issue 22's benchmark).

Configurations, for each number of environments:
- single process: the batch in this process, with 1 and with 2 OpenMP threads (set through
  libgomp's omp_set_num_threads between the measurements);
- Ray, 1 actor and 2 actors, each with OMP_NUM_THREADS=1, on a local cluster. The cluster
  declares 3 logical CPUs so that the 1-actor and the 2-actor environments can live side by
  side; only one configuration steps at a time.
The configurations take turns, one repeat of `steps` control steps each (after one warm-up
step), so that whatever else runs on the machine spreads over all of them alike. Each row:
min / median / max over the repeats.

Overhead (no simulation): an empty remote call per shard (ping), and a step of a trivial
environment of the snake's shapes (zeros in, zeros out) sharded the same way, against the same
in this process.

    PYTHONPATH=build/python python3 bench/distributed_snake.py [--envs 64 256] [--steps 8]
                                                               [--repeats 5]
"""

import argparse
import ctypes
import logging
import os
import platform
import statistics
import time

import numpy as np

ACTION = [10.0, 0.5, -1.0]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def actions(n):
    rng = np.random.default_rng(0)
    a = np.tile(ACTION, (n, 1))
    a[:, 0] += rng.uniform(-2, 2, n)
    return a


def timed(env, a, steps):
    """Seconds per step over `steps` steps."""
    t0 = time.perf_counter()
    for _ in range(steps):
        env.step(a)
    return (time.perf_counter() - t0) / steps


class ZeroEnv:
    """A vector environment of the snake's shapes that does no work (24 observations, 3
    actions per environment): what remains of a step is the remote call."""

    def __init__(self, num_envs):
        from slender.envs import Box

        self.num_envs = num_envs
        self.single_observation_space = Box(-np.inf, np.inf, shape=(24,))
        self.single_action_space = Box(-1.0, 1.0, shape=(3,))

    def reset(self, seed=None, options=None):
        return np.zeros((self.num_envs, 24)), {}

    def step(self, actions):
        n = self.num_envs
        return (np.zeros((n, 24)), np.zeros(n), np.zeros(n, bool), np.zeros(n, bool),
                {"failed": np.zeros(n, bool)})


def spread(secs, scale):
    vals = sorted(scale(s) for s in secs)
    return vals[0], statistics.median(vals), vals[-1]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, nargs="+", default=[64, 256])
    p.add_argument("--steps", type=int, default=8, help="control steps per repeat")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--calls", type=int, default=300, help="remote calls per overhead repeat")
    a = p.parse_args()

    import ray

    import slender.distributed as sd
    from slender.snake import SnakeVectorEnv

    gomp = ctypes.CDLL("libgomp.so.1")  # the OpenMP runtime the native module uses
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}, "
          f"Ray {ray.__version__}; {a.steps} control steps x {a.repeats} repeats; load average "
          f"at the start {os.getloadavg()[0]:.2f}")
    print()
    print("| configuration | envs | env-steps/s min / median / max "
          "| ms per step min / median / max |")
    print("| --- | --- | --- | --- |")
    ray.init(num_cpus=3, include_dashboard=False, logging_level=logging.WARNING,
             object_store_memory=200 * 2**20)
    opts = {"runtime_env": {"env_vars": {"OMP_NUM_THREADS": "1"}}}
    try:
        for n in a.envs:
            act = actions(n)
            local = SnakeVectorEnv(n)
            envs = {"single process, 1 OpenMP thread": (local, 1),
                    "single process, 2 OpenMP threads": (local, 2)}
            for shards in (1, 2):
                name = f"Ray, {shards} actor{'s' * (shards > 1)} x 1 thread"
                envs[name] = (sd.ShardedVectorEnv(SnakeVectorEnv, n, shards,
                                                  actor_options=opts), None)
            for env, threads in envs.values():
                env.reset(seed=0)
                env.step(act)  # warm-up
            secs = {name: [] for name in envs}
            for _ in range(a.repeats):
                for name, (env, threads) in envs.items():
                    if threads:
                        gomp.omp_set_num_threads(threads)
                    secs[name].append(timed(env, act, a.steps))
            for name, (env, _) in envs.items():
                rate = spread(secs[name], lambda s: n / s)
                ms = spread(secs[name], lambda s: 1e3 * s)
                print(f"| {name} | {n} | {rate[0]:.0f} / {rate[1]:.0f} / {rate[2]:.0f} | "
                      f"{ms[0]:.1f} / {ms[1]:.1f} / {ms[2]:.1f} |", flush=True)
                if isinstance(env, sd.ShardedVectorEnv):
                    env.close()
        print()
        print("Overhead of the remote calls (no simulation)")
        print()
        print("| what | envs | ms per call min / median / max |")
        print("| --- | --- | --- |")

        def ms_row(name, n, secs):
            ms = spread(secs, lambda s: 1e3 * s)
            print(f"| {name} | {n} | {ms[0]:.3f} / {ms[1]:.3f} / {ms[2]:.3f} |", flush=True)

        for shards in (1, 2):
            with sd.ShardedVectorEnv(ZeroEnv, 2, shards, actor_options=opts) as env:
                env.ping()
                secs = []
                for _ in range(a.repeats):
                    t0 = time.perf_counter()
                    for _ in range(a.calls):
                        env.ping()
                    secs.append((time.perf_counter() - t0) / a.calls)
                ms_row(f"empty call, {shards} actor{'s' * (shards > 1)} (ping)", "-", secs)
        for n in a.envs:
            act = np.zeros((n, 3))
            for shards in (0, 1, 2):
                local = shards == 0
                with sd.ShardedVectorEnv(ZeroEnv, n, max(shards, 1), local=local,
                                         actor_options=None if local else opts) as env:
                    env.reset(seed=0)
                    env.step(act)
                    secs = [timed(env, act, a.calls) for _ in range(a.repeats)]
                name = ("trivial env step, in this process (local=True)" if local else
                        f"trivial env step, {shards} actor{'s' * (shards > 1)}")
                ms_row(name, n, secs)
    finally:
        ray.shutdown()
    print()
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
