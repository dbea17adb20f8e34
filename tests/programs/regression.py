"""Regression with a DataLoader: a small MLP learns y = sin(x0) + x1 * x2 from noisy samples.

Plain PyTorch: ``python regression.py`` runs it on PyTorch, ``minitorch run
regression.py`` on minitorch.  The data and the initial weights come from a
NumPy generator and the loader does not shuffle, so the run is the same
computation under any library with PyTorch's API: their losses agree to
rounding.
"""

import argparse

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_data(n, rng):
    x = rng.uniform(-2, 2, size=(n, 3)).astype(np.float32)
    y = np.sin(x[:, 0]) + x[:, 1] * x[:, 2] + 0.05 * rng.standard_normal(n)
    return torch.from_numpy(x), torch.from_numpy(y.astype(np.float32)).unsqueeze(1)


def init_from_numpy(model, rng):
    """PyTorch's default uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn by NumPy."""
    with torch.no_grad():
        for layer in model.modules():
            if isinstance(layer, nn.Linear):
                bound = 1 / np.sqrt(layer.in_features)
                for p in (layer.weight, layer.bias):
                    p.copy_(torch.from_numpy(rng.uniform(-bound, bound, p.shape)
                                             .astype(np.float32)))


def evaluate(model, loader, loss_fn):
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for xb, yb in loader:
            total += loss_fn(model(xb), yb).item() * len(xb)
            n += len(xb)
    return total / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    train_ds = TensorDataset(*make_data(512, rng))
    test_ds = TensorDataset(*make_data(256, rng))
    train_loader = DataLoader(train_ds, batch_size=32)
    test_loader = DataLoader(test_ds, batch_size=128)

    model = nn.Sequential(nn.Linear(3, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                          nn.Linear(32, 1))
    init_from_numpy(model, rng)
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)

    print(f"initial test mse: {evaluate(model, test_loader, loss_fn):.6f}")
    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            running += loss.item() * len(xb)
        scheduler.step()
        print(f"epoch {epoch + 1}: train mse {running / len(train_ds):.6f}")
    print(f"final train mse: {running / len(train_ds):.6f}")
    print(f"final test mse: {evaluate(model, test_loader, loss_fn):.6f}")


if __name__ == "__main__":
    main()
