#!/usr/bin/env python3
"""Learning example with a standard RL library: Stable-Baselines3's PPO teaches the soft snake
(slender/Snake-v0, docs/rl.md) to crawl, its environments stepped together by one
BatchedSimulator. Prints the mean forward speed of the random policy, of the untrained and of the
trained policy, and the training time.

    PYTHONPATH=build/python python3 apps/examples/snake_ppo.py [--envs 16] [--timesteps 1280]
                                                               [--seed 0] [--save snake_ppo.zip]

Needs gymnasium, stable-baselines3 and torch (scripts/setup.sh installs them).
"""

import argparse
import sys
import time

import gymnasium as gym
import torch
from stable_baselines3 import PPO

import slender  # noqa: F401 - registers slender/Snake-v0
from slender import rl


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=16, help="snakes simulated together")
    ap.add_argument("--timesteps", type=int, default=1280, help="control steps to train on")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", default=None, help="write the trained model here (.zip)")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)  # a small network: one thread is fastest

    # the batched environment, as Gymnasium makes it from the vector entry point
    env = gym.make_vec(rl.ENV_ID, num_envs=a.envs, vectorization_mode="vector_entry_point")
    probe = gym.make_vec(rl.ENV_ID, num_envs=1, vectorization_mode="vector_entry_point")
    print(f"{env}: {env.episode_steps} control steps of {env.control_dt:g} s per episode, "
          f"observation {env.single_observation_space.shape}, action "
          f"{env.single_action_space.shape} in [-1, 1]")

    model = PPO("MlpPolicy", rl.sb3_vec_env(env), n_steps=env.episode_steps,
                batch_size=a.envs * env.episode_steps // 2, n_epochs=10, learning_rate=3e-3,
                seed=a.seed, device="cpu")

    def policy(obs):
        return model.predict(obs, deterministic=True)[0]

    random_speed = rl.mean_speed(env, rl.random_policy(env, seed=a.seed), seed=a.seed)
    before = rl.mean_speed(probe, policy)
    print(f"random policy:    {random_speed:+.4f} m/s")
    print(f"before training:  {before:+.4f} m/s")
    t0 = time.perf_counter()
    model.learn(total_timesteps=a.timesteps)
    wall = time.perf_counter() - t0
    after = rl.mean_speed(probe, policy)
    amp, freq = env.wave(policy(probe.reset(seed=0)[0]))
    print(f"after training:   {after:+.4f} m/s ({a.timesteps} control steps in {wall:.1f} s; "
          f"the wave: A {amp[0]:.1f} 1/m, f {freq[0]:+.2f} Hz at the start)")
    if a.save:
        model.save(a.save)
        print(f"wrote {a.save}")
    return 0 if after > max(before, random_speed) else 1


if __name__ == "__main__":
    sys.exit(main())
