"""A small transformer language model: token and position embeddings, two encoder layers
with a causal mask, a linear head; trained on characters, then sampled greedily.

``python transformer_lm.py`` on PyTorch, ``minitorch run transformer_lm.py`` on
minitorch.  Dropout is off and the weights and the training windows come from
a NumPy generator, so the run is the same computation under both libraries.
"""

import argparse
import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

TEXT = (
    "to be or not to be that is the question. "
    "whether tis nobler in the mind to suffer "
    "the slings and arrows of outrageous fortune. "
) * 4


class TinyTransformerLM(nn.Module):
    def __init__(self, vocab_size, block_size, d_model=32, nhead=4, num_layers=2):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(block_size, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=4 * d_model,
                                           dropout=0.0, batch_first=True, norm_first=True,
                                           activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, num_layers, norm=nn.LayerNorm(d_model),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, idx):
        T = idx.shape[1]
        pos = torch.arange(T)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        x = self.encoder(x, mask=mask, is_causal=True)
        return self.head(x)


def init_from_numpy(model, rng):
    """Matrices uniform(+-1/sqrt(fan_in)) from NumPy, biases zero, LayerNorms as built."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                continue
            if p.dim() > 1:
                bound = 1 / math.sqrt(p.shape[1])
                p.copy_(torch.from_numpy(rng.uniform(-bound, bound, p.shape).astype(np.float32)))
            else:
                p.zero_()


@torch.no_grad()
def generate(model, idx, new_tokens, block_size):
    model.eval()
    for _ in range(new_tokens):
        logits = model(idx[:, -block_size:])
        nxt = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)

    rng = np.random.default_rng(0)
    model = TinyTransformerLM(len(chars), args.block_size)
    init_from_numpy(model, rng)
    print(f"parameters: {sum(p.numel() for p in model.parameters())}")
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)

    model.train()
    for step in range(args.steps):
        starts = rng.integers(0, len(data) - args.block_size - 1, size=args.batch_size)
        x = torch.stack([data[s:s + args.block_size] for s in starts])
        y = torch.stack([data[s + 1:s + args.block_size + 1] for s in starts])
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step == 0:
            print(f"first loss: {loss.item():.6f}")
        if (step + 1) % 10 == 0:
            print(f"step {step + 1}: loss {loss.item():.6f}")
    print(f"final loss: {loss.item():.6f}")
    print(f"uniform loss: {math.log(len(chars)):.6f}")
    prompt = torch.tensor([[stoi[c] for c in "to be "]])
    out = generate(model, prompt, 24, args.block_size)[0].tolist()
    print("sample:", repr("".join(chars[i] for i in out)))


if __name__ == "__main__":
    main()
