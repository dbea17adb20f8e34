"""An MNIST CNN in the style of PyTorch's examples/mnist: two convolutions, max pooling, NLL loss.

``python mnist_cnn.py digits.npz`` (or ``minitorch run mnist_cnn.py digits.npz``).
The digits come from a ``.npz`` file holding ``x_train``, ``y_train``,
``x_test``, ``y_test`` (uint8 images of 28x28 and their labels) rather than
torchvision, so that the program needs nothing but the library it runs on.
The initial weights are drawn by NumPy and the batches are taken in order,
so the run is the same computation under PyTorch and minitorch.
"""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(16 * 12 * 12, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def init_from_numpy(model, seed):
    """Kaiming-uniform-like weights drawn by NumPy, so every library starts alike."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            fan_in = p.shape[1] * int(np.prod(p.shape[2:])) if p.dim() > 1 else p.shape[0]
            bound = 1 / np.sqrt(fan_in)
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, p.shape).astype(np.float32)))


def to_dataset(images, labels):
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
    x = (x - 0.1307) / 0.3081                        # MNIST's mean and std
    return TensorDataset(x, torch.from_numpy(labels.astype(np.int64)))


def train(model, loader, optimizer, epoch):
    model.train()
    total, n = 0.0, 0
    for batch_idx, (data, target) in enumerate(loader):
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if epoch == 1 and batch_idx == 0:
            print(f"first batch loss: {loss.item():.6f}")
        total += loss.item() * len(data)
        n += len(data)
    print(f"epoch {epoch}: train loss {total / n:.6f}")
    return total / n


def test(model, loader):
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    n = len(loader.dataset)
    return test_loss / n, correct / n


def main():
    parser = argparse.ArgumentParser(description="MNIST CNN")
    parser.add_argument("data", help=".npz file with x_train, y_train, x_test, y_test")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    arrays = np.load(args.data)
    train_loader = DataLoader(to_dataset(arrays["x_train"], arrays["y_train"]),
                              batch_size=args.batch_size)
    test_loader = DataLoader(to_dataset(arrays["x_test"], arrays["y_test"]), batch_size=250)

    model = Net()
    init_from_numpy(model, seed=0)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        train_loss = train(model, train_loader, optimizer, epoch)
    test_loss, accuracy = test(model, test_loader)
    print(f"final train loss: {train_loss:.6f}")
    print(f"test loss: {test_loss:.6f}")
    print(f"test accuracy: {accuracy:.4f}")


if __name__ == "__main__":
    main()
