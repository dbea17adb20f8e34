"""save/load in minitorch's, PyTorch's and safetensors' formats, both ways.

PyTorch is an oracle where it is installed; the files under tests/fixtures/
(written by real PyTorch and safetensors, see tools/make_torch_fixtures.py)
prove the reading side on machines without it.  Every fixture tensor holds
``arange`` values of its shape, so NumPy computes what to expect.
"""

import io
import os
import stat
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import minitorch as torch
from minitorch.serialization import SerializationError, format_for_path
from minitorch.serialization import safetensors as st

pytestmark = pytest.mark.data

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
DTYPES = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]


def arange(shape, dtype="float32"):
    """What tools/make_torch_fixtures.py puts in a tensor of ``shape``, as NumPy."""
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    if dtype == "bool":
        return (values % 2).astype(bool)
    return values.astype(np.float32 if dtype == "bfloat16" else dtype)


def sample_object():
    base = torch.arange(12).float().reshape(3, 4)
    return {
        "base": base, "view": base[1:, ::2], "t": base.t(), "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3), "param": torch.nn.Parameter(torch.ones(2)),
        "grad": torch.ones(3).requires_grad_(), "bf16": torch.ones(2, dtype=torch.bfloat16) / 3,
        "dtypes": {d: torch.arange(6).reshape(2, 3).to(getattr(torch, d)) for d in DTYPES},
        "meta": [1, "x", (2.5, None, True), -7, 2 ** 40, float("inf")],
        "ordered": OrderedDict([("b", 1), ("a", 2)]), "dtype": torch.float16,
        "device": torch.device("cpu"), 7: torch.tensor(True),
    }


def check_sample(out, shares_views=True):
    assert out["base"].tolist() == np.arange(12, dtype=np.float32).reshape(3, 4).tolist()
    assert out["view"].tolist() == [[4.0, 6.0], [8.0, 10.0]]
    assert out["t"].shape == (4, 3) and out["t"][1, 2].item() == 9.0
    assert out["scalar"].dim() == 0 and out["scalar"].item() == 2.5
    assert out["empty"].shape == (0, 3)
    assert isinstance(out["param"], torch.nn.Parameter) and out["param"].requires_grad
    assert out["grad"].requires_grad and not isinstance(out["grad"], torch.nn.Parameter)
    assert out["bf16"].dtype is torch.bfloat16
    assert out["bf16"].tolist() == (torch.ones(2, dtype=torch.bfloat16) / 3).tolist()
    for d in DTYPES:
        t = out["dtypes"][d]
        assert t.dtype is getattr(torch, d)
        expect = np.arange(6).reshape(2, 3).astype(bool if d == "bool" else np.float64)
        assert np.array_equal(t.float().numpy() if d != "bool" else t.numpy(), expect)
    assert out["meta"] == [1, "x", (2.5, None, True), -7, 2 ** 40, float("inf")]
    assert isinstance(out["ordered"], OrderedDict) and list(out["ordered"]) == ["b", "a"]
    assert out["dtype"] is torch.float16 and str(out["device"]) == "cpu"
    assert bool(out[7])
    if shares_views:
        assert out["view"].untyped_storage() is out["base"].untyped_storage()
        out["base"][1, 0] = -1
        assert out["view"][0, 0].item() == -1


# ---------------------------------------------------------------------------
# Round trips through minitorch alone
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["minitorch", "torch"])
def test_round_trip_keeps_everything(tmp_path, fmt):
    path = tmp_path / "obj.bin"
    torch.save(sample_object(), path, format=fmt)
    check_sample(torch.load(path))
    buf = io.BytesIO()
    torch.save(sample_object(), buf, format=fmt)
    check_sample(torch.load(io.BytesIO(buf.getvalue())))


def test_safetensors_round_trip_of_a_nested_object(tmp_path):
    obj = sample_object()
    del obj["view"], obj["t"]                     # views share memory: safetensors refuses them
    path = tmp_path / "obj.safetensors"
    torch.save(obj, path)
    out = torch.load(path)
    obj["view"], obj["t"] = obj["base"][1:, ::2], obj["base"].t()
    out["view"], out["t"] = out["base"][1:, ::2], out["base"].t()
    check_sample(out)


def test_format_follows_the_extension(tmp_path):
    assert format_for_path("a/model.PT") == "torch" and format_for_path("m.pth") == "torch"
    assert format_for_path("w.safetensors") == "safetensors"
    assert format_for_path("run.mt") == "minitorch" and format_for_path("ckpt") == "minitorch"
    assert format_for_path(io.BytesIO()) == "minitorch"
    sd = {"w": torch.ones(2)}
    for name, member in (("m.pt", "archive/data.pkl"), ("m.mt", "minitorch.json")):
        torch.save(sd, tmp_path / name)
        assert member in zipfile.ZipFile(tmp_path / name).namelist()
    torch.save(sd, tmp_path / "m.safetensors")
    assert (tmp_path / "m.safetensors").read_bytes()[8:9] == b"{"
    with pytest.raises(ValueError, match="unknown format"):
        torch.save(sd, tmp_path / "x", format="onnx")


@pytest.mark.parametrize("name", ["ckpt.mt", "ckpt.pt", "ckpt.safetensors"])
def test_save_is_atomic_and_gets_ordinary_permissions(tmp_path, monkeypatch, name):
    path = tmp_path / name
    torch.save({"w": torch.ones(3)}, path)
    good = path.read_bytes()
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        torch.save({"w": torch.zeros(3)}, path)
    assert path.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == [name]


@pytest.mark.parametrize("fmt", ["minitorch", "torch", "safetensors"])
def test_map_location(tmp_path, fmt):
    path = tmp_path / "w"
    torch.save({"w": torch.ones(2)}, path, format=fmt)
    for loc in ("cpu", {"cpu": "cpu"}, lambda storage, where: None, torch.device("cpu")):
        assert torch.load(path, map_location=loc)["w"].device.type == "cpu"


def test_unsupported_objects_are_refused_when_saving():
    for fmt in ("minitorch", "torch", "safetensors"):
        with pytest.raises(TypeError, match="cannot store objects of type object"):
            torch.save({"x": object()}, io.BytesIO(), format=fmt)


def test_training_checkpoint_survives_every_format(tmp_path):
    m = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(m.parameters())
    m(torch.ones(1, 3)).sum().backward()
    opt.step()
    state = {"model": m.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
             "rng": torch.get_rng_state(), "history": [{"loss": 0.5}]}
    for ext in ("mt", "pt", "safetensors"):
        torch.save(state, tmp_path / f"c.{ext}")
        back = torch.load(tmp_path / f"c.{ext}")
        m2 = torch.nn.Linear(3, 2)
        m2.load_state_dict(back["model"])
        opt2 = torch.optim.Adam(m2.parameters())
        opt2.load_state_dict(back["optimizer"])
        assert torch.equal(m2.weight, m.weight) and back["epoch"] == 3
        assert torch.equal(back["rng"], state["rng"]) and back["history"] == [{"loss": 0.5}]


# ---------------------------------------------------------------------------
# safetensors' API, mirrored
# ---------------------------------------------------------------------------
def test_safetensors_api(tmp_path):
    tensors = {"a": torch.arange(6).reshape(2, 3).float(), "b": torch.ones(2, dtype=torch.int8),
               "c": torch.ones(3, dtype=torch.bfloat16)}
    st.save_file(tensors, tmp_path / "x.safetensors", metadata={"who": "me"})
    back = st.load_file(tmp_path / "x.safetensors")
    assert set(back) == {"a", "b", "c"} and all(torch.equal(back[k], tensors[k]) for k in back)
    assert back["b"].dtype is torch.int8 and back["c"].dtype is torch.bfloat16
    again = st.load(st.save(tensors))
    assert all(torch.equal(again[k], tensors[k]) for k in tensors)
    assert torch.load(tmp_path / "x.safetensors")["a"].tolist() == tensors["a"].tolist()


def test_safetensors_refuses_what_safetensors_torch_refuses():
    base = torch.ones(4, 4)
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        st.save({"a": base, "b": base[1]})
    # Slices of one storage that do not overlap are independent (as in safetensors).
    st.save({"a": base.view(-1)[:8], "b": base.view(-1)[8:]})
    with pytest.raises(ValueError, match="non contiguous tensor: `t`"):
        st.save({"t": base.t()})
    with pytest.raises(ValueError, match="expected torch.Tensor"):
        st.save({"a": 1})
    with pytest.raises(ValueError, match="Expected a dict"):
        st.save([base])
    with pytest.raises(ValueError, match="metadata"):
        st.save({"a": base}, metadata={"n": 1})


# ---------------------------------------------------------------------------
# Files written by PyTorch (committed fixtures: no torch needed)
# ---------------------------------------------------------------------------
def test_reads_torch_fixture():
    out = torch.load(os.path.join(FIXTURES, "torch_state.pt"))
    sd = out["state_dict"]
    assert isinstance(sd, OrderedDict) and list(sd) == ["weight", "bias"]
    assert np.array_equal(sd["weight"].numpy(), arange((2, 3)))
    assert np.array_equal(sd["bias"].numpy(), arange((2,)))
    views = out["views"]
    assert np.array_equal(views["row"].numpy(), arange((3, 4))[1])
    assert np.array_equal(views["col"].numpy(), arange((3, 4))[:, 2])
    assert np.array_equal(views["t"].numpy(), arange((3, 4)).T)
    assert np.array_equal(views["tail"].numpy(), arange((12,))[5:])
    storage = views["base"].untyped_storage()
    assert all(v.untyped_storage() is storage for v in views.values())
    assert views["col"].stride() == (4,) and views["col"].storage_offset() == 2
    for d in DTYPES:
        t = out["dtypes"][d]
        assert t.dtype is getattr(torch, d)
        assert np.array_equal(np.array(t.tolist()), arange((2, 3), d))
    assert out["scalar"].dim() == 0 and out["scalar"].item() == 3.5
    assert out["empty"].shape == (0, 3)
    assert isinstance(out["param"], torch.nn.Parameter) and out["param"].requires_grad
    assert isinstance(out["frozen"], torch.nn.Parameter) and not out["frozen"].requires_grad
    assert out["grad"].requires_grad and out["grad"].is_leaf
    assert out["nested"][0] == (1, 2.5, "x", None, True)
    assert out["nested"][1]["k"][0].dtype is torch.int64
    assert list(out["ordered"].items()) == [("b", 1), ("a", 2)]
    assert out["size"] == torch.Size([2, 3]) and isinstance(out["size"], torch.Size)
    assert out["dtype"] is torch.float16 and str(out["device"]) == "cpu"
    assert out["big_int"] == 2 ** 40
    top = torch.load(os.path.join(FIXTURES, "torch_tensor.pt"))
    assert np.array_equal(top.numpy(), arange((2, 2)))


def test_reads_safetensors_fixture():
    for out in (torch.load(os.path.join(FIXTURES, "weights.safetensors")),
                st.load_file(os.path.join(FIXTURES, "weights.safetensors"))):
        for d in DTYPES:
            assert out[d].dtype is getattr(torch, d)
            assert np.array_equal(np.array(out[d].tolist()), arange((2, 3), d))
        assert out["scalar"].dim() == 0 and out["scalar"].item() == 3.5
        assert out["empty"].shape == (0, 3)


def test_legacy_torch_file_gets_a_clear_error():
    with pytest.raises(SerializationError, match="legacy format of PyTorch < 1.6"):
        torch.load(os.path.join(FIXTURES, "torch_legacy.pt"))


def test_fixtures_are_small():
    assert sum(os.path.getsize(os.path.join(FIXTURES, n)) for n in os.listdir(FIXTURES)) < 20000


# ---------------------------------------------------------------------------
# Against real PyTorch, where installed
# ---------------------------------------------------------------------------
def test_torch_reads_what_minitorch_writes(tmp_path):
    real = pytest.importorskip("torch")
    path = tmp_path / "obj.pt"
    torch.save(sample_object(), path)
    out = real.load(path, weights_only=True)
    assert out["base"].dtype == real.float32 and out["base"].tolist() == \
        np.arange(12).reshape(3, 4).tolist()
    assert out["view"].untyped_storage().data_ptr() == out["base"].untyped_storage().data_ptr()
    assert out["view"].stride() == (4, 2) and out["view"].storage_offset() == 4
    assert out["t"].stride() == (1, 4)
    assert isinstance(out["param"], real.nn.Parameter) and out["grad"].requires_grad
    for d in DTYPES:
        assert out["dtypes"][d].dtype == getattr(real, d)
        assert out["dtypes"][d].tolist() == sample_object()["dtypes"][d].tolist()
    assert out["bf16"].tolist() == sample_object()["bf16"].tolist()
    assert out["scalar"].dim() == 0 and out["empty"].shape == (0, 3)
    assert out["meta"] == [1, "x", (2.5, None, True), -7, 2 ** 40, float("inf")]
    assert isinstance(out["ordered"], OrderedDict) and out["dtype"] == real.float16
    assert out["device"] == real.device("cpu") and bool(out[7])
    # A model's state_dict loads into the same PyTorch model.
    m = torch.nn.Linear(3, 2)
    torch.save(m.state_dict(), tmp_path / "lin.pt")
    rm = real.nn.Linear(3, 2)
    rm.load_state_dict(real.load(tmp_path / "lin.pt", weights_only=True))
    assert np.allclose(rm.weight.detach().numpy(), m.weight.detach().numpy())


def test_minitorch_reads_what_torch_writes(tmp_path):
    real = pytest.importorskip("torch")
    rm = real.nn.Sequential(real.nn.Linear(3, 4), real.nn.ReLU(), real.nn.Linear(4, 2))
    opt = real.optim.Adam(rm.parameters())
    rm(real.ones(1, 3)).sum().backward()
    opt.step()
    base = real.arange(20.0).reshape(4, 5)
    real.save({"model": rm.state_dict(), "opt": opt.state_dict(), "v": base[1:, 2:],
               "base": base, "bf": real.ones(3, dtype=real.bfloat16) / 3}, tmp_path / "r.pt")
    out = torch.load(tmp_path / "r.pt")
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    m.load_state_dict(out["model"])
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    assert np.allclose(m(torch.tensor(x)).detach().numpy(),
                       rm(real.tensor(x)).detach().numpy(), atol=1e-6)
    assert out["opt"]["state"][0]["exp_avg"].shape == (4, 3)
    assert out["v"].untyped_storage() is out["base"].untyped_storage()
    assert out["v"].tolist() == base[1:, 2:].tolist()
    assert out["bf"].tolist() == (real.ones(3, dtype=real.bfloat16) / 3).float().tolist()


def test_safetensors_interop_with_torch(tmp_path):
    real = pytest.importorskip("torch")
    stt = pytest.importorskip("safetensors.torch")
    tensors = {"w": torch.arange(6).reshape(2, 3).float(), "b": torch.ones(3, dtype=torch.bfloat16)}
    st.save_file(tensors, tmp_path / "m.safetensors")
    back = stt.load_file(str(tmp_path / "m.safetensors"))
    assert back["w"].tolist() == tensors["w"].tolist() and back["b"].dtype == real.bfloat16
    stt.save_file({"x": real.arange(4.0)}, str(tmp_path / "t.safetensors"))
    assert st.load_file(tmp_path / "t.safetensors")["x"].tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("fmt", ["minitorch", "torch", "safetensors"])
def test_devices_and_map_location(tmp_path, device, fmt):
    """Saved from ``device``; loaded where it was (safetensors: on the CPU), or where asked."""
    x = torch.arange(6).float().reshape(2, 3).to(device)
    obj = {"x": x} if fmt == "safetensors" else {"x": x, "row": x[1]}
    path = tmp_path / "d"
    torch.save(obj, path, format=fmt)
    saved = "cpu" if fmt == "safetensors" else device
    assert torch.load(path)["x"].device.type == saved
    for target in ("cpu", device):
        out = torch.load(path, map_location=target)
        assert out["x"].device.type == target and out["x"].tolist() == [[0, 1, 2], [3, 4, 5]]
        if fmt != "safetensors":
            assert out["row"].untyped_storage() is out["x"].untyped_storage()


def test_torch_files_of_every_pickle_protocol_and_the_ones_refused(tmp_path):
    real = pytest.importorskip("torch")
    sd = real.nn.Linear(2, 3).state_dict()
    for protocol in (2, 3, 4, 5):
        real.save(sd, tmp_path / "p.pt", pickle_protocol=protocol)
        out = torch.load(tmp_path / "p.pt")
        assert out["weight"].tolist() == sd["weight"].tolist(), protocol
    for obj, match in ((real.nn.Linear(2, 3), "save its state_dict"),
                       ({"c": real.ones(2, dtype=real.complex64)}, "ComplexFloatStorage"),
                       ({"s": real.ones(3).untyped_storage()}, "bare storage")):
        real.save(obj, tmp_path / "x.pt")
        with pytest.raises(SerializationError, match=match):
            torch.load(tmp_path / "x.pt")
