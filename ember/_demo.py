"""`ember demo`: train a small CNN on the digits that ship with ember, save a checkpoint."""
import time


def build_model(nn):
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))


def _progress(iterable, desc):
    try:
        from tqdm import tqdm
        return tqdm(iterable, desc=desc, leave=False)
    except ImportError:
        return iterable


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
    """Train, print loss and accuracy per epoch, save the weights; returns test accuracy."""
    import ember
    from ember import nn
    from ember.utils.data import DataLoader
    from ember.vision.datasets import Digits

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
        for x, y in _progress(train_loader, f"epoch {epoch}"):
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
        if hasattr(ember, "save"):
            ember.save(model.state_dict(), out)
            if verbose:
                print(f"saved the weights to {out} (torch.load reads it)")
    return accuracy
