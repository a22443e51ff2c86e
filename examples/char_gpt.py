"""Train a character-level GPT (a small decoder-only transformer) on a short story.

Plain PyTorch: runs with `python char_gpt.py` (real PyTorch) and with
`ember run char_gpt.py` (ember). The text is examples/data/tiny_corpus.txt.
"""
import argparse
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tiny_corpus.txt")


def parse_args():
    parser = argparse.ArgumentParser(description="character-level GPT")
    parser.add_argument("--steps", type=int, default=1000, help="optimizer steps")
    parser.add_argument("--tiny", action="store_true", help="tiny model (for tests)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--log-every", type=int, default=100)
    parser.add_argument("--compile", action="store_true",
                        help="run the model through torch.compile")
    parser.add_argument("--sample-chars", type=int, default=200,
                        help="characters to generate after training")
    return parser.parse_args()


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        # (B, T, C) -> (B, heads, T, C / heads)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))  # a position sees only the past
        weights = self.dropout(F.softmax(scores, dim=-1))
        y = (weights @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.dropout(self.proj(y))


class Block(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, dropout)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim),
                                 nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))  # pre-norm residual blocks
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block_size, dim, heads, layers, dropout):
        super().__init__()
        self.block_size = block_size
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block_size, dim)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(dim, heads, dropout) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.apply(self._init)
        self.head.weight = self.tok.weight  # weight tying: one matrix in and out

    @staticmethod
    def _init(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        t = idx.size(1)
        pos = torch.arange(t, device=idx.device)
        x = self.drop(self.tok(idx) + self.pos(pos))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    @torch.no_grad()
    def generate(self, idx, n):
        for _ in range(n):
            logits, _ = self(idx[:, -self.block_size:])
            probs = F.softmax(logits[:, -1], dim=-1)
            idx = torch.cat([idx, torch.multinomial(probs, num_samples=1)], dim=1)
        return idx


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.set_default_dtype(getattr(torch, args.dtype))
    device = torch.device(args.device)

    with open(CORPUS, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long, device=device)
    split = int(0.9 * len(data))
    train, val = data[:split], data[split:]

    if args.tiny:
        block_size, batch_size, dim, heads, layers = 16, 8, 16, 2, 1
    else:
        block_size, batch_size, dim, heads, layers = 64, 32, 64, 4, 3
    model = GPT(len(chars), block_size, dim, heads, layers, dropout=0.1).to(device)
    model = torch.compile(model) if args.compile else model
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    print(f"{len(text)} characters, vocabulary {len(chars)}, "
          f"{sum(p.numel() for p in model.parameters())} parameters")

    def get_batch(source):
        start = torch.randint(len(source) - block_size - 1, (batch_size,), device=device)
        offsets = start[:, None] + torch.arange(block_size, device=device)
        return source[offsets], source[offsets + 1]  # targets: the next character

    loss = None
    for step in range(1, args.steps + 1):
        x, y = get_batch(train)
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % args.log_every == 0 or step == 1 or step == args.steps:
            print(f"step {step:5d}  loss {loss.item():.10f}")

    model.eval()
    with torch.no_grad():
        x, y = get_batch(val)
        print(f"validation loss: {model(x, y)[1].item():.4f}")
    if args.sample_chars > 0:
        start = torch.tensor([[stoi["T"]]], device=device)
        out = model.generate(start, args.sample_chars)[0].tolist()
        print("sample:", repr("".join(chars[i] for i in out)))
    print(f"final loss: {loss.item():.10f}")


if __name__ == "__main__":
    main()
