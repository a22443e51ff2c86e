"""Train a word-level LSTM language model with truncated backpropagation through time.

Plain PyTorch: runs with `python lstm_lm.py` (real PyTorch) and with
`ember run lstm_lm.py` (ember). The text is examples/data/tiny_corpus.txt: so little that
the model learns it by heart, and the validation perplexity (on the last tenth of the text,
never trained on) rises while the training perplexity falls towards 1: overfitting, shown.
"""
import argparse
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tiny_corpus.txt")


def parse_args():
    parser = argparse.ArgumentParser(description="word-level LSTM language model")
    parser.add_argument("--steps", type=int, default=500, help="optimizer steps")
    parser.add_argument("--tiny", action="store_true", help="tiny model (for tests)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--bptt", type=int, default=None, help="sequence length per step")
    parser.add_argument("--clip", type=float, default=0.5, help="gradient norm clipping")
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--compile", action="store_true",
                        help="run the model through torch.compile")
    return parser.parse_args()


def tokenize(text):
    """Words and punctuation, with <eos> at the end of each line."""
    words = []
    for line in text.splitlines():
        for punct in ".,":
            line = line.replace(punct, " " + punct)
        words += line.lower().split() + ["<eos>"]
    return words


def batchify(ids, batch_size):
    """(N,) -> (N // batch_size, batch_size): each column is a contiguous run of text."""
    n = ids.size(0) // batch_size
    return ids[:n * batch_size].view(batch_size, n).t().contiguous()


class LanguageModel(nn.Module):
    def __init__(self, vocab, emb, hidden, layers, dropout):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, layers, dropout=dropout)
        self.decoder = nn.Linear(hidden, vocab)
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, x, state):
        out, state = self.rnn(self.drop(self.encoder(x)), state)
        return self.decoder(self.drop(out)), state


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.set_default_dtype(getattr(torch, args.dtype))
    device = torch.device(args.device)

    with open(CORPUS, encoding="utf-8") as f:
        words = tokenize(f.read())
    vocab = sorted(set(words))
    index = {w: i for i, w in enumerate(vocab)}
    ids = torch.tensor([index[w] for w in words], dtype=torch.long)

    if args.tiny:
        batch_size, bptt, emb, hidden, layers = 4, 8, 16, 16, 2
    else:
        batch_size, bptt, emb, hidden, layers = 8, 20, 64, 128, 2
    bptt = args.bptt or bptt
    split = int(0.9 * len(ids))
    train = batchify(ids[:split], batch_size).to(device)
    val = batchify(ids[split:], 1).to(device)

    model = LanguageModel(len(vocab), emb, hidden, layers, dropout=0.2).to(device)
    model = torch.compile(model) if args.compile else model
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    print(f"{len(words)} words, vocabulary {len(vocab)}, "
          f"{sum(p.numel() for p in model.parameters())} parameters")

    state, pos, loss = None, 0, None
    for step in range(1, args.steps + 1):
        if pos + 1 >= train.size(0) - 1:  # end of the text: start over with a fresh state
            state, pos = None, 0
        seq = min(bptt, train.size(0) - 1 - pos)
        x, y = train[pos:pos + seq], train[pos + 1:pos + 1 + seq]
        pos += seq
        if state is not None:
            # NOTE: truncated BPTT: keep the state's values but cut the graph, or backward
            # would reach through every earlier chunk (and fail on freed buffers).
            state = tuple(s.detach() for s in state)
        logits, state = model(x, state)
        loss = F.cross_entropy(logits.view(-1, len(vocab)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        if step % args.log_every == 0 or step == 1 or step == args.steps:
            value = loss.item()
            print(f"step {step:5d}  loss {value:.10f}  perplexity {math.exp(value):.3f}")

    model.eval()
    with torch.no_grad():
        logits, _ = model(val[:-1], None)
        val_loss = F.cross_entropy(logits.view(-1, len(vocab)), val[1:].reshape(-1)).item()
    print(f"validation loss: {val_loss:.4f}  perplexity {math.exp(val_loss):.1f}")
    print(f"final loss: {loss.item():.10f}")


if __name__ == "__main__":
    main()
