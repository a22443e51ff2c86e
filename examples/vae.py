"""Train a variational autoencoder on 8x8 handwritten digits, then draw a few new ones.

Plain PyTorch: runs with `python vae.py` (real PyTorch) and with `ember run vae.py`
(ember). The digits are the UCI set that ships inside ember
(ember/vision/datasets/data/digits.npz), read here with NumPy; `--synthetic` trains on
random images instead.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

DIGITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "ember",
                      "vision", "datasets", "data", "digits.npz")


def parse_args():
    parser = argparse.ArgumentParser(description="VAE on 8x8 digits")
    parser.add_argument("--steps", type=int, default=2000, help="optimizer steps")
    parser.add_argument("--tiny", action="store_true", help="tiny model and data (for tests)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--log-every", type=int, default=200)
    parser.add_argument("--compile", action="store_true",
                        help="run the model through torch.compile")
    parser.add_argument("--synthetic", action="store_true", help="random images")
    return parser.parse_args()


def load_images(synthetic, seed):
    """All 1,797 digits as (N, 64) floats in [0, 1]."""
    if synthetic or not os.path.exists(DIGITS):
        if not synthetic:
            print(f"note: {DIGITS} not found, using synthetic data")
        images = np.random.default_rng(seed).integers(0, 17, size=(500, 8, 8))
    else:
        with np.load(DIGITS) as archive:
            images = archive["images"]
    return images.reshape(len(images), 64).astype(np.float64) / 16.0


class VAE(nn.Module):
    def __init__(self, hidden, latent):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(),
                                     nn.Linear(hidden, 64))  # logits of each pixel

    def forward(self, x):
        h = self.encoder(x)
        mu, logvar = self.mu(h), self.logvar(h)
        # The reparameterisation trick: z = mu + sigma * eps keeps z differentiable.
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        return self.decoder(z), mu, logvar


def vae_loss(logits, x, mu, logvar):
    """The negative evidence lower bound per image: reconstruction + KL(q(z|x) || N(0, I))."""
    recon = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (recon + kl) / x.size(0)


def show(images):
    """Print 8x8 images side by side as characters, darker = more ink."""
    shades = " .:-=+*#%@"
    rows = []
    for r in range(8):
        rows.append("  ".join("".join(shades[min(9, int(v * 10))] for v in img[r])
                              for img in images))
    print("\n".join(rows))


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    dtype = getattr(torch, args.dtype)
    torch.set_default_dtype(dtype)
    device = torch.device(args.device)

    images = load_images(args.synthetic, args.seed)
    if args.tiny:
        images = images[:256]
    loader = DataLoader(TensorDataset(torch.tensor(images, dtype=dtype)),
                        batch_size=32 if args.tiny else 64, shuffle=True, drop_last=True)
    model = VAE(*((16, 2) if args.tiny else (128, 8))).to(device)
    model = torch.compile(model) if args.compile else model
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    print(f"{len(images)} images, {sum(p.numel() for p in model.parameters())} parameters")

    step, loss = 0, None
    while step < args.steps:
        for (x,) in loader:
            x = x.to(device)
            logits, mu, logvar = model(x)
            loss = vae_loss(logits, x, mu, logvar)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0 or step == 1 or step == args.steps:
                print(f"step {step:5d}  loss {loss.item():.10f}")
            if step == args.steps:
                break

    model.eval()
    with torch.no_grad():  # new digits: decode draws from the prior N(0, I)
        z = torch.randn(6, model.mu.out_features, device=device)
        samples = torch.sigmoid(model.decoder(z)).view(6, 8, 8)
    show(samples.cpu().tolist())
    print(f"final loss: {loss.item():.10f}")


if __name__ == "__main__":
    main()
