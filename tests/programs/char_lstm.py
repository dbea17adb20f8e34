"""A character-level LSTM language model, trained on a short text and sampled greedily.

``python char_lstm.py`` on PyTorch, ``minitorch run char_lstm.py`` on minitorch.
Embedding -> LSTM -> Linear, cross-entropy on the next character, gradient
clipping, Adam.  The training windows and the initial weights come from a
NumPy generator, so the run is the same computation under both libraries.
"""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = (
    "the quick brown fox jumps over the lazy dog. "
    "a stitch in time saves nine. "
    "all that glitters is not gold. "
    "the early bird catches the worm. "
) * 4


class CharLSTM(nn.Module):
    def __init__(self, vocab_size, embed_dim=16, hidden_size=48):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embed(x), state)
        return self.head(out), state


def init_from_numpy(model, rng):
    with torch.no_grad():
        for name, p in model.named_parameters():
            scale = 1.0 if name.startswith("embed") else 1 / np.sqrt(p.shape[-1])
            p.copy_(torch.from_numpy(rng.uniform(-scale, scale, p.shape).astype(np.float32)))


@torch.no_grad()
def generate(model, stoi, itos, prompt, length):
    model.eval()
    x = torch.tensor([[stoi[c] for c in prompt]])
    logits, state = model(x)
    out = prompt
    for _ in range(length):
        nxt = logits[0, -1].argmax().item()
        out += itos[nxt]
        logits, state = model(torch.tensor([[nxt]]), state)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seq-len", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    itos = {i: c for c, i in stoi.items()}
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)

    rng = np.random.default_rng(0)
    model = CharLSTM(len(chars))
    init_from_numpy(model, rng)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    model.train()
    for step in range(args.steps):
        starts = rng.integers(0, len(data) - args.seq_len - 1, size=args.batch_size)
        x = torch.stack([data[s:s + args.seq_len] for s in starts])
        y = torch.stack([data[s + 1:s + args.seq_len + 1] for s in starts])
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        if step == 0:
            print(f"first loss: {loss.item():.6f}")
        if (step + 1) % 20 == 0:
            print(f"step {step + 1}: loss {loss.item():.6f}")
    print(f"final loss: {loss.item():.6f}")
    print(f"uniform loss: {np.log(len(chars)):.6f}")
    print("sample:", repr(generate(model, stoi, itos, "the ", 30)))


if __name__ == "__main__":
    main()
