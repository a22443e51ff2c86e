"""Train a small convolutional classifier on 8x8 handwritten digits.

Plain PyTorch: runs with `python cnn_classifier.py` (real PyTorch) and with
`ember run cnn_classifier.py` (ember). The digits are the UCI set that ships inside ember
(ember/vision/datasets/data/digits.npz), read here with NumPy so that the same file also
works under real PyTorch; `--synthetic` trains on random images instead.
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
    parser = argparse.ArgumentParser(description="CNN classifier on 8x8 digits")
    parser.add_argument("--steps", type=int, default=600, help="optimizer steps")
    parser.add_argument("--tiny", action="store_true", help="tiny model and data (for tests)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--compile", action="store_true",
                        help="run the model through torch.compile")
    parser.add_argument("--synthetic", action="store_true",
                        help="random images and labels instead of the digits")
    return parser.parse_args()


def load_digits(synthetic, seed):
    """Images as float arrays (N, 1, 8, 8) in [0, 1] and int64 labels, split like
    torchvision-style `Digits`: sample i is a test sample when i % 5 == 4."""
    if synthetic or not os.path.exists(DIGITS):
        if not synthetic:
            print(f"note: {DIGITS} not found, using synthetic data")
        rng = np.random.default_rng(seed)
        images = rng.integers(0, 17, size=(500, 8, 8))
        labels = rng.integers(0, 10, size=500)
    else:
        with np.load(DIGITS) as archive:
            images, labels = archive["images"], archive["labels"]
    images = images.astype(np.float64)[:, None] / 16.0
    labels = labels.astype(np.int64)
    test = np.arange(len(labels)) % 5 == 4
    return (images[~test], labels[~test]), (images[test], labels[test])


class Net(nn.Module):
    def __init__(self, c1, c2, hidden, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, c1, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(c1, c2, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(c2)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(c2 * 4 * 4, hidden)
        self.fc2 = nn.Linear(hidden, num_classes)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.bn(self.conv2(x)))
        x = F.max_pool2d(x, 2)                      # 8x8 -> 4x4
        x = self.dropout(torch.flatten(x, 1))
        x = F.relu(self.fc1(x))
        return self.fc2(x)


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (model(x).argmax(dim=1) == y).sum().item()
        total += y.numel()
    model.train()
    return correct / total


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    dtype = getattr(torch, args.dtype)
    torch.set_default_dtype(dtype)  # parameters are created in this dtype
    device = torch.device(args.device)

    (x_train, y_train), (x_test, y_test) = load_digits(args.synthetic, args.seed)
    if args.tiny:
        x_train, y_train = x_train[:256], y_train[:256]
        x_test, y_test = x_test[:64], y_test[:64]
    train = TensorDataset(torch.tensor(x_train, dtype=dtype), torch.from_numpy(y_train))
    test = TensorDataset(torch.tensor(x_test, dtype=dtype), torch.from_numpy(y_test))
    batch_size = args.batch_size or (32 if args.tiny else 64)
    train_loader = DataLoader(train, batch_size=batch_size, shuffle=True, drop_last=True)
    test_loader = DataLoader(test, batch_size=256)

    model = Net(*((4, 8, 16) if args.tiny else (16, 32, 64))).to(device)
    model = torch.compile(model) if args.compile else model
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9,
                                weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)
    print(f"{sum(p.numel() for p in model.parameters())} parameters, "
          f"{len(train)} training images")

    step, loss = 0, None
    while step < args.steps:
        for x, y in train_loader:  # one pass is an epoch; DataLoader reshuffles each time
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            if step % args.log_every == 0 or step == 1 or step == args.steps:
                print(f"step {step:5d}  loss {loss.item():.10f}")
            if step == args.steps:
                break

    print(f"test accuracy: {accuracy(model, test_loader, device):.4f}")
    print(f"final loss: {loss.item():.10f}")


if __name__ == "__main__":
    main()
