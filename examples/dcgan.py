"""Train a DCGAN (convolutional generator and discriminator) on 8x8 handwritten digits.

Plain PyTorch: runs with `python dcgan.py` (real PyTorch) and with `ember run dcgan.py`
(ember). The digits are the UCI set that ships inside ember
(ember/vision/datasets/data/digits.npz), read here with NumPy; `--synthetic` trains on
random images instead. The printed loss is the discriminator's plus the generator's.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

DIGITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "ember",
                      "vision", "datasets", "data", "digits.npz")


def parse_args():
    parser = argparse.ArgumentParser(description="DCGAN on 8x8 digits")
    parser.add_argument("--steps", type=int, default=1500, help="optimizer steps (D and G)")
    parser.add_argument("--tiny", action="store_true", help="tiny model and data (for tests)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--log-every", type=int, default=100)
    parser.add_argument("--compile", action="store_true",
                        help="run the model through torch.compile")
    parser.add_argument("--synthetic", action="store_true", help="random images")
    return parser.parse_args()


def load_images(synthetic, seed):
    """All 1,797 digits as (N, 1, 8, 8) floats in [-1, 1] (the generator ends in tanh)."""
    if synthetic or not os.path.exists(DIGITS):
        if not synthetic:
            print(f"note: {DIGITS} not found, using synthetic data")
        images = np.random.default_rng(seed).integers(0, 17, size=(500, 8, 8))
    else:
        with np.load(DIGITS) as archive:
            images = archive["images"]
    return images[:, None].astype(np.float64) / 8.0 - 1.0


def generator(nz, ngf):
    return nn.Sequential(                                   # (nz, 1, 1)
        nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
        nn.BatchNorm2d(ngf * 2), nn.ReLU(True),             # (2 ngf, 4, 4)
        nn.ConvTranspose2d(ngf * 2, ngf, 3, 1, 1, bias=False),
        nn.BatchNorm2d(ngf), nn.ReLU(True),                 # (ngf, 4, 4)
        nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False),
        nn.Tanh())                                          # (1, 8, 8)


def discriminator(ndf):
    return nn.Sequential(                                   # (1, 8, 8)
        nn.Conv2d(1, ndf, 4, 2, 1, bias=False),
        nn.LeakyReLU(0.2),                                  # (ndf, 4, 4)
        nn.Conv2d(ndf, ndf * 2, 3, 1, 1, bias=False),
        nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2),
        nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),         # (1, 1, 1): a logit
        nn.Flatten(0))


def weights_init(m):
    """The DCGAN paper's initialisation: N(0, 0.02) convolutions, N(1, 0.02) norm scales."""
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    dtype = getattr(torch, args.dtype)
    torch.set_default_dtype(dtype)
    device = torch.device(args.device)

    images = load_images(args.synthetic, args.seed)
    if args.tiny:
        images = images[:256]
    batch_size = 32 if args.tiny else 64
    loader = DataLoader(TensorDataset(torch.tensor(images, dtype=dtype)),
                        batch_size=batch_size, shuffle=True, drop_last=True)
    nz, ngf, ndf = (4, 4, 4) if args.tiny else (16, 32, 32)
    net_g, net_d = generator(nz, ngf).to(device), discriminator(ndf).to(device)
    net_g.apply(weights_init)
    net_d.apply(weights_init)
    if args.compile:
        net_g, net_d = torch.compile(net_g), torch.compile(net_d)
    criterion = nn.BCEWithLogitsLoss()
    opt_d = torch.optim.Adam(net_d.parameters(), lr=args.lr, betas=(0.5, 0.999))
    opt_g = torch.optim.Adam(net_g.parameters(), lr=args.lr, betas=(0.5, 0.999))
    fixed_noise = torch.randn(6, nz, 1, 1, device=device)
    real_label = torch.ones(batch_size, device=device)
    fake_label = torch.zeros(batch_size, device=device)

    step, loss = 0, None
    while step < args.steps:
        for (real,) in loader:
            real = real.to(device)
            # (1) the discriminator: real images -> 1, generated ones -> 0
            fake = net_g(torch.randn(batch_size, nz, 1, 1, device=device))
            out_real = net_d(real)
            loss_d = (criterion(out_real, real_label)
                      + criterion(net_d(fake.detach()), fake_label))
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()
            # (2) the generator: make the discriminator call its images real
            out_fake = net_d(fake)
            loss_g = criterion(out_fake, real_label)
            opt_g.zero_grad()
            loss_g.backward()
            opt_g.step()

            step += 1
            loss = loss_d.item() + loss_g.item()
            if step % args.log_every == 0 or step == 1 or step == args.steps:
                print(f"step {step:5d}  loss {loss:.10f}  loss_D {loss_d.item():.10f}  "
                      f"loss_G {loss_g.item():.10f}  D(x) {out_real.sigmoid().mean():.4f}  "
                      f"D(G(z)) {out_fake.sigmoid().mean():.4f}")
            if step == args.steps:
                break

    net_g.eval()
    with torch.no_grad():
        samples = (net_g(fixed_noise) + 1) / 2  # back to [0, 1]
    shades = " .:-=+*#%@"
    for r in range(8):
        print("  ".join("".join(shades[min(9, int(v * 10))] for v in img[0][r])
                        for img in samples.tolist()))
    print(f"final loss: {loss:.10f}")


if __name__ == "__main__":
    main()
