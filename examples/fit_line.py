"""Fit y = 3x - 2 with a hand-written linear model and gradient descent, on ember."""
import numpy as np

import ember as torch

rng = np.random.default_rng(0)
x = torch.tensor(rng.uniform(-1, 1, (256, 1)), dtype=torch.float32)
y = 3 * x - 2 + 0.05 * torch.tensor(rng.standard_normal((256, 1)), dtype=torch.float32)

w = torch.zeros(1, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for step in range(200):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    w.grad = None
    b.grad = None
    if step % 50 == 0 or step == 199:
        print(f"step {step:3d}  loss {loss.item():.5f}")
print(f"w = {w.item():.3f} (true 3), b = {b.item():.3f} (true -2)")
