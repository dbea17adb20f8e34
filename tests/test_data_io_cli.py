"""utils.data, save/load, MNIST loading and the command line."""

import gzip
import io
import json
import struct
import zipfile

import numpy as np
import pytest
from click.testing import CliRunner

import minitorch as torch
from minitorch.cli import main
from minitorch.utils.data import (ConcatDataset, DataLoader, Dataset, Subset, TensorDataset,
                                  random_split)

pytestmark = pytest.mark.data


def test_dataloader_batches_shuffle_drop_last():
    ds = TensorDataset(torch.arange(10).float(), torch.arange(10))
    batches = list(DataLoader(ds, batch_size=4))
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    g = torch.Generator().manual_seed(1)
    seen = sorted(i for _, y in DataLoader(ds, batch_size=3, shuffle=True, generator=g)
                  for i in y.tolist())
    assert seen == list(range(10))


def test_default_collate_structures():
    class D(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return {"x": np.full(2, i, dtype=np.float32), "y": i, "z": (float(i), "s")}

    batch = next(iter(DataLoader(D(), batch_size=3)))
    assert batch["x"].shape == (3, 2) and batch["y"].tolist() == [0, 1, 2]
    # Strings are left as they are: a tuple, as PyTorch's default_collate gives.
    assert batch["z"][0].dtype == torch.float64 and batch["z"][1] == ("s", "s", "s")


def test_random_split_subset_concat():
    ds = TensorDataset(torch.arange(10))
    a, b = random_split(ds, [7, 3], generator=torch.Generator().manual_seed(0))
    assert len(a) == 7 and len(b) == 3
    assert sorted([int(a[i][0]) for i in range(7)] + [int(b[i][0]) for i in range(3)]) == \
        list(range(10))
    c, d = random_split(ds, [0.5, 0.5])
    assert len(c) == len(d) == 5
    assert len(ConcatDataset([Subset(ds, [0, 1]), ds])) == 12


def test_save_load_sharing_and_map_location(tmp_path):
    a = torch.arange(12).float().reshape(3, 4)
    obj = {"a": a, "v": a[1:, ::2], "meta": [1, "x", (2.5, None)], 7: torch.tensor(True)}
    path = tmp_path / "obj.mt"
    torch.save(obj, path)
    out = torch.load(path, map_location="cpu")
    assert out["meta"] == [1, "x", (2.5, None)] and bool(out[7])
    out["a"][1, 0] = -1
    assert out["v"][0, 0].item() == -1             # still a view of "a"
    assert out["a"].untyped_storage() is out["v"].untyped_storage()


def test_load_rejects_bad_files():
    buf = io.BytesIO()
    torch.save(torch.arange(4), buf)
    raw = buf.getvalue()
    for bad in (raw[: len(raw) // 2], b"not a zip", b""):
        with pytest.raises(RuntimeError):
            torch.load(io.BytesIO(bad))
    z = zipfile.ZipFile(io.BytesIO(raw))
    files = {n: z.read(n) for n in z.namelist()}
    tree = json.loads(files["data.json"])
    tree["__tensor__"]["offset"] = 3
    tree["__tensor__"]["shape"] = [4]
    files["data.json"] = json.dumps(tree).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zw:
        for n, b in files.items():
            zw.writestr(n, b)
    with pytest.raises(RuntimeError, match="does not fit"):
        torch.load(io.BytesIO(out.getvalue()))
    with pytest.raises(TypeError):
        torch.save(object(), io.BytesIO())


def test_module_and_optimizer_checkpoint_round_trip(tmp_path):
    m = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(m.parameters())
    m(torch.ones(1, 3)).sum().backward()
    opt.step()
    torch.save({"m": m.state_dict(), "o": opt.state_dict()}, tmp_path / "c.mt")
    state = torch.load(tmp_path / "c.mt")
    m2 = torch.nn.Linear(3, 2)
    m2.load_state_dict(state["m"])
    opt2 = torch.optim.Adam(m2.parameters())
    opt2.load_state_dict(state["o"])
    assert np.array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())


def _write_idx(path, arr):
    code = {np.uint8: 0x08}[arr.dtype.type]
    header = struct.pack(">HBB", 0, code, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(header + arr.tobytes())


def test_mnist_reads_idx_files_and_torchvision_layout(tmp_path):
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    imgs = np.arange(3 * 28 * 28, dtype=np.uint8).reshape(3, 28, 28)
    _write_idx(raw / "train-images-idx3-ubyte.gz", imgs)
    _write_idx(raw / "train-labels-idx1-ubyte", np.array([1, 2, 3], np.uint8))
    ds = torch.datasets.MNIST(tmp_path, train=True)
    img, label = ds[1]
    assert len(ds) == 3 and label == 2 and img.shape == (1, 28, 28)
    assert img.max().item() <= 1.0
    with pytest.raises(FileNotFoundError, match="never downloads"):
        torch.datasets.MNIST(tmp_path, train=False)
    (tmp_path / "bad").write_bytes(b"\x00\x00\x08\x03" + b"\x00" * 5)
    with pytest.raises(ValueError):
        torch.datasets.read_idx(tmp_path / "bad")


def test_shipped_mnist_subset_is_stratified():
    tr = torch.datasets.MNIST(train=True)
    te = torch.datasets.MNIST(train=False)
    assert len(tr) == 4000 and len(te) == 1000
    assert np.bincount(tr.targets.numpy()).tolist() == [400] * 10
    assert np.bincount(te.targets.numpy()).tolist() == [100] * 10


def test_cli_info_and_toy_training_is_deterministic(tmp_path):
    runner = CliRunner()
    res = runner.invoke(main, ["info"])
    assert res.exit_code == 0 and "numba threads" in res.output
    args = ["train", "xor", "--epochs", "5", "--json", "--no-progress"]
    a = runner.invoke(main, args)
    b = runner.invoke(main, args)
    assert a.exit_code == 0, a.output
    ha = json.loads(a.stdout)["history"]
    hb = json.loads(b.stdout)["history"]
    assert [h["loss"] for h in ha] == [h["loss"] for h in hb]
    assert len(ha) == 5


def test_ctrl_c_then_resume_reaches_same_weights(tmp_path):
    """A KeyboardInterrupt mid-epoch saves a checkpoint; --resume ends where a full run does."""
    from minitorch.demos.train import Interrupted, TrainConfig, train

    def cfg(path, resume=False):
        return TrainConfig(task="mnist", model="mlp", epochs=2, batch_size=64, limit=256,
                           checkpoint=str(path), resume=resume)

    full = tmp_path / "full.mt"
    train(cfg(full), echo=lambda s: None)

    class Interrupt:
        """A progress wrapper that presses Ctrl-C at batch 2 of epoch 2."""
        epoch = 0

        def __call__(self, iterable, length, label):
            Interrupt.epoch += 1
            return _InterruptAt(iterable, 2 if Interrupt.epoch == 2 else None)

    part = tmp_path / "part.mt"
    with pytest.raises(Interrupted):
        train(cfg(part), echo=lambda s: None, progress=Interrupt())
    assert torch.load(part)["batch"] == 2
    train(cfg(part, resume=True), echo=lambda s: None)
    wa, wb = torch.load(full)["model"], torch.load(part)["model"]
    for k in wa:
        assert np.array_equal(wa[k].numpy(), wb[k].numpy()), k


class _InterruptAt:
    def __init__(self, iterable, at):
        self.iterable, self.at = iterable, at

    def __enter__(self):
        def gen():
            for i, item in enumerate(self.iterable):
                if i == self.at:
                    raise KeyboardInterrupt
                yield item
        return gen()

    def __exit__(self, *exc):
        return False


def test_cli_checkpoint_and_resume_flags(tmp_path):
    runner = CliRunner()
    ckpt = tmp_path / "c.mt"
    common = ["train", "mnist", "--model", "mlp", "--limit", "128", "--no-progress",
              "--checkpoint", str(ckpt)]
    assert runner.invoke(main, common + ["--epochs", "1"]).exit_code == 0
    res = runner.invoke(main, common + ["--epochs", "2", "--resume"])
    assert res.exit_code == 0, res.output
    assert "resumed" in res.output and "epoch   2/2" in res.output
    assert len(torch.load(ckpt)["history"]) == 2


def test_cli_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is in the test extra; installed by CI")
    out = tmp_path / "curves.png"
    res = CliRunner().invoke(main, ["train", "xor", "--epochs", "3", "--no-progress",
                                    "--plot", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_plot_without_matplotlib_says_how_to_install(tmp_path, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib here")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    res = CliRunner().invoke(main, ["train", "xor", "--epochs", "1", "--no-progress",
                                    "--plot", str(tmp_path / "c.png")])
    assert res.exit_code != 0 and "pip install" in res.output


def test_cli_errors():
    runner = CliRunner()
    res = runner.invoke(main, ["train", "mnist", "--resume"])
    assert res.exit_code != 0 and "--checkpoint" in res.output
    # No such CUDA device (with or without a GPU or the CUDA simulator).
    res = runner.invoke(main, ["train", "mnist", "--device", "cuda:99"])
    assert res.exit_code != 0 and "CUDA" in res.output
