"""`ember demo`: train a small CNN on the digits that ship with ember, save a checkpoint."""
import os
import sys
import time

import ember
from ember import nn
from ember.utils.data import DataLoader
from ember.vision.datasets import Digits


def build_model(nn):
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))


def _bar(iterable, desc, stream, width=30, every=0.1):
    """A one-line progress bar (tqdm's look, without tqdm), redrawn at most every `every`
    seconds and erased at the end, as tqdm(leave=False) does."""
    total = len(iterable)
    start = last = time.perf_counter()
    line = ""
    for i, item in enumerate(iterable, 1):
        yield item
        now = time.perf_counter()
        if now - last >= every or i == total:
            last = now
            filled = width * i // total
            line = (f"{desc}: {100 * i // total:3d}%|{'#' * filled}{' ' * (width - filled)}| "
                    f"{i}/{total} [{now - start:.1f}s, {i / (now - start):.1f}it/s]")
            stream.write("\r" + line)
            stream.flush()
    stream.write("\r" + " " * len(line) + "\r")
    stream.flush()


def _progress(iterable, desc, stream=None):
    """A progress bar over `iterable` when `stream` (stderr) is a terminal: tqdm's when tqdm is
    installed, else `_bar`. Not a terminal (a log file, a pipe, CI): no bar, since the
    per-epoch lines say all there is and carriage returns would litter the log."""
    stream = sys.stderr if stream is None else stream
    if not stream.isatty():
        return iterable
    try:
        from tqdm import tqdm   # (optional: tqdm)
    except ImportError:
        return _bar(iterable, desc, stream)
    return tqdm(iterable, desc=desc, leave=False, file=stream)


def evaluate(ember, model, loader):
    model.eval()
    correct = total = 0
    with ember.no_grad():
        for x, y in loader:
            correct += int((model(x).argmax(1) == y).sum())
            total += len(y)
    model.train()
    return correct / total


def demo(epochs=None, out="ember_demo.pt", seed=0, verbose=True):
    """Train, print loss and accuracy per epoch, save the weights; returns test accuracy.

    With `verbose`, the last line printed says the final test accuracy, the time taken and
    where the checkpoint went."""
    ember.manual_seed(seed)
    train, test = Digits(train=True), Digits(train=False)
    train_loader = DataLoader(train, batch_size=32, shuffle=True)
    test_loader = DataLoader(test, batch_size=256)
    model = build_model(nn)
    epochs = 10 if epochs is None else epochs
    opt = ember.optim.Adam(model.parameters(), lr=3e-3)
    # A cosine decay to zero steadies the last epochs (accuracy no longer jumps around).
    schedule = ember.optim.lr_scheduler.CosineAnnealingLR(opt, epochs * len(train_loader))
    loss_fn = nn.CrossEntropyLoss()
    start = time.time()
    accuracy = 0.0
    for epoch in range(1, epochs + 1):
        total, count = 0.0, 0
        batches = _progress(train_loader, f"epoch {epoch}/{epochs}") if verbose \
            else train_loader
        for x, y in batches:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            schedule.step()
            total += loss.item() * len(y)
            count += len(y)
        accuracy = evaluate(ember, model, test_loader)
        if verbose:
            print(f"epoch {epoch:2d}  loss {total / count:.4f}  test accuracy "
                  f"{accuracy * 100:.2f}%  ({time.time() - start:.1f}s)", flush=True)
    if out:
        ember.save(model.state_dict(), out)
    if verbose:
        saved = (f"weights saved to {os.path.abspath(out)} (ember.load and torch.load read it)"
                 if out else "weights not saved")
        print(f"final test accuracy {accuracy * 100:.2f}% after {epochs} epoch"
              f"{'s' * (epochs != 1)} in {time.time() - start:.1f}s; {saved}", flush=True)
    return accuracy
