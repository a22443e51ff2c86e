"""Balance a pole on a cart with REINFORCE (the policy-gradient method).

Plain PyTorch: runs with `python reinforce.py` (real PyTorch) and with
`ember run reinforce.py` (ember). The environment is the classic cart-pole system (Barto,
Sutton and Anderson, 1983), simulated below in NumPy; no gym needed. Each step plays one
episode with the current policy and then takes one gradient step on it.
"""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


def parse_args():
    parser = argparse.ArgumentParser(description="REINFORCE on cart-pole")
    parser.add_argument("--steps", type=int, default=400, help="episodes (one update each)")
    parser.add_argument("--tiny", action="store_true", help="short episodes (for tests)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--gamma", type=float, default=0.99, help="discount factor")
    parser.add_argument("--log-every", type=int, default=20)
    parser.add_argument("--compile", action="store_true",
                        help="run the model through torch.compile")
    return parser.parse_args()


class CartPole:
    """A pole hinged on a cart that moves along a track; push the cart left (action 0) or
    right (action 1) every 20 ms. Reward 1 per step until the pole leans more than 12
    degrees, the cart leaves the track (|x| > 2.4) or `max_steps` pass."""
    gravity, cart_mass, pole_mass, half_length, force, dt = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    max_angle, max_x = 12 * math.pi / 180, 2.4

    def __init__(self, seed, max_steps):
        self.rng = np.random.default_rng(seed)
        self.max_steps = max_steps

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, size=4)  # x, x', theta, theta'
        self.t = 0
        return self.state.copy()

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force if action == 1 else -self.force
        total_mass = self.cart_mass + self.pole_mass
        cos, sin = math.cos(theta), math.sin(theta)
        # The equations of motion of the cart-pole, integrated with Euler steps.
        tmp = (force + self.pole_mass * self.half_length * theta_dot ** 2 * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * tmp) / (
            self.half_length * (4 / 3 - self.pole_mass * cos ** 2 / total_mass))
        x_acc = tmp - self.pole_mass * self.half_length * theta_acc * cos / total_mass
        self.state = np.array([x + self.dt * x_dot, x_dot + self.dt * x_acc,
                               theta + self.dt * theta_dot, theta_dot + self.dt * theta_acc])
        self.t += 1
        fallen = abs(self.state[0]) > self.max_x or abs(self.state[2]) > self.max_angle
        return self.state.copy(), 1.0, fallen or self.t >= self.max_steps


def discounted_returns(rewards, gamma):
    """G_t = r_t + gamma r_{t+1} + gamma^2 r_{t+2} + ..., normalised to mean 0, std 1
    (a simple baseline that lowers the variance of the gradient)."""
    returns = np.zeros(len(rewards))
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running
        returns[t] = running
    return (returns - returns.mean()) / (returns.std() + 1e-8)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    dtype = getattr(torch, args.dtype)
    torch.set_default_dtype(dtype)
    device = torch.device(args.device)

    env = CartPole(args.seed, max_steps=30 if args.tiny else 500)
    hidden = 8 if args.tiny else 64
    policy = nn.Sequential(nn.Linear(4, hidden), nn.Tanh(), nn.Linear(hidden, 2)).to(device)
    policy = torch.compile(policy) if args.compile else policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)

    average, loss = None, None
    for step in range(1, args.steps + 1):
        # Play one episode, sampling each action from the policy.
        observations, actions, rewards = [], [], []
        obs, done = env.reset(), False
        with torch.no_grad():
            while not done:
                logits = policy(torch.tensor(obs, dtype=dtype, device=device))
                action = Categorical(logits=logits).sample().item()
                observations.append(obs)
                actions.append(action)
                obs, reward, done = env.step(action)
                rewards.append(reward)

        # One gradient step: raise the log-probability of actions in proportion to the
        # (normalised) return that followed them.
        obs_batch = torch.tensor(np.array(observations), dtype=dtype, device=device)
        returns = torch.tensor(discounted_returns(rewards, args.gamma), dtype=dtype,
                               device=device)
        log_probs = Categorical(logits=policy(obs_batch)).log_prob(
            torch.tensor(actions, device=device))
        loss = -(log_probs * returns).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        length = len(rewards)
        average = length if average is None else 0.9 * average + 0.1 * length
        if step % args.log_every == 0 or step == 1 or step == args.steps:
            print(f"step {step:5d}  loss {loss.item():.10f}  episode length {length:4d}  "
                  f"running average {average:.1f}")
    print(f"final loss: {loss.item():.10f}")


if __name__ == "__main__":
    main()
