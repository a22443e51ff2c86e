"""ember.utils.tensorboard: event files read back (TFRecord framing parsed and CRC-checked
here, payloads decoded with tensorboardX's protobuf classes) and checked against NumPy."""
import datetime
import glob
import io
import os
import socket
import struct
import subprocess
import sys
import wave

import numpy as np
import pytest

import ember
import ember.nn as nn

tbx = pytest.importorskip("tensorboardX")
from ember.utils.tensorboard import SummaryWriter  # noqa: E402
from tensorboardX.proto import event_pb2, layout_pb2, plugin_hparams_pb2  # noqa: E402


# ---------------------------------------------------------------- reading event files
def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1   # CRC-32C (Castagnoli)
        table.append(c)
    return table


_TABLE = _crc_table()


def _masked_crc(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_events(logdir):
    """Every Event in logdir's event files: 8-byte length, its CRC, payload, payload CRC."""
    files = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    assert files, f"no event file in {logdir}"
    per_file = []
    for path in files:
        data = open(path, "rb").read()
        pos, events = 0, []
        while pos < len(data):
            header = data[pos:pos + 8]
            (length,) = struct.unpack("<Q", header)
            assert struct.unpack("<I", data[pos + 8:pos + 12])[0] == _masked_crc(header)
            payload = data[pos + 12:pos + 12 + length]
            crc = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])[0]
            assert crc == _masked_crc(payload)
            events.append(event_pb2.Event.FromString(payload))
            pos += 16 + length
        assert events[0].file_version == "brain.Event:2"
        per_file.append(events)
    per_file.sort(key=lambda events: events[0].wall_time)   # the order they were opened
    events = [e for f in per_file for e in f]
    return events


def summaries(logdir):
    """(tag, step, Summary.Value) of every summary value, in order."""
    return [(v.tag, e.step, v) for e in read_events(logdir) if e.HasField("summary")
            for v in e.summary.value]


def by_tag(logdir, tag):
    return [(step, v) for t, step, v in summaries(logdir) if t == tag]


@pytest.fixture
def logdir(tmp_path):
    return str(tmp_path / "run")


# ---------------------------------------------------------------- the writer
def test_default_log_dir_is_pytorchs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = datetime.datetime.now().replace(microsecond=0)
    w = SummaryWriter(comment="_lr0.1")
    w.close()
    after = datetime.datetime.now()
    head, name = os.path.split(w.log_dir)
    assert head == "runs" and w.get_logdir() == w.log_dir
    suffix = "_" + socket.gethostname() + "_lr0.1"
    assert name.endswith(suffix)
    stamp = name[:-len(suffix)]
    parsed = datetime.datetime.strptime(stamp, "%b%d_%H-%M-%S").replace(year=before.year)
    assert before - datetime.timedelta(seconds=1) <= parsed <= after
    assert stamp == parsed.strftime("%b%d_%H-%M-%S")
    assert os.path.isdir(w.log_dir) and read_events(w.log_dir)


def test_scalars_all_input_kinds(logdir):
    values = [ember.tensor(1.5), ember.tensor([2.25], dtype=ember.float64),
              np.float32(-3.0), np.array(4.5), 7, 0.1,
              ember.tensor(2.0, requires_grad=True) * 3, ember.tensor(1.25, dtype=ember.bfloat16)]
    with SummaryWriter(logdir) as w:
        for step, v in enumerate(values):
            w.add_scalar("loss/train", v, step * 10)
        w.add_scalar("new", ember.tensor(0.3), 1, new_style=True)
        w.add_scalar("newd", 0.3, 2, new_style=True, double_precision=True)
    got = by_tag(logdir, "loss/train")
    expected = [1.5, 2.25, -3.0, 4.5, 7.0, 0.1, 6.0, 1.25]
    assert [s for s, _ in got] == [10 * i for i in range(len(values))]
    np.testing.assert_array_equal([v.simple_value for _, v in got],
                                  np.float32(expected))
    (step, v), = by_tag(logdir, "new")
    assert step == 1 and v.metadata.plugin_data.plugin_name == "scalars"
    assert v.tensor.dtype == 1 and v.tensor.float_val[0] == np.float32(0.3)  # DT_FLOAT
    (_, v), = by_tag(logdir, "newd")
    assert v.tensor.double_val[0] == 0.3
    with pytest.raises(AssertionError):
        SummaryWriter(logdir + "2").add_scalar("bad", np.ones(3))


def test_add_scalars_writes_one_run_per_key(logdir):
    with SummaryWriter(logdir) as w:
        for step in range(3):
            w.add_scalars("run/14h", {"sin": np.sin(step), "cos": ember.tensor(np.cos(step))},
                          step)
    for key, fn in (("sin", np.sin), ("cos", np.cos)):
        got = by_tag(os.path.join(logdir, "run_14h_" + key), "run/14h")
        assert [s for s, _ in got] == [0, 1, 2]
        np.testing.assert_array_equal([v.simple_value for _, v in got],
                                      np.float32(fn(np.arange(3))))


def test_histogram_bins(logdir, rng):
    x = rng.standard_normal(1000).astype(np.float32)
    with SummaryWriter(logdir) as w:
        w.add_histogram("h", ember.tensor(x), 3, bins=10)
        w.add_histogram("tf", x, 4)                        # TensorFlow's default buckets
        w.add_histogram("bf16", ember.tensor(x).to(ember.bfloat16), 5, bins="auto")
        w.add_histogram_raw("raw", min=0.0, max=3.0, num=6, sum=9.0, sum_squares=17.0,
                            bucket_limits=[1.0, 2.0, 3.0], bucket_counts=ember.tensor([1, 2, 3]),
                            global_step=6)
    (step, v), = by_tag(logdir, "h")
    h = v.histo
    x64 = x.astype(np.float64)
    counts, edges = np.histogram(x64, bins=10)
    assert step == 3 and h.num == 1000
    np.testing.assert_allclose([h.min, h.max, h.sum, h.sum_squares],
                               [x64.min(), x64.max(), x64.sum(), x64 @ x64], rtol=1e-12)
    # TensorBoard keeps right edges only: an empty bucket stands in front for the left one.
    np.testing.assert_array_equal(h.bucket, [0] + counts.tolist())
    np.testing.assert_allclose(h.bucket_limit, edges)
    (_, v), = by_tag(logdir, "tf")
    assert sum(v.histo.bucket) == 1000 and len(v.histo.bucket) > 50
    (_, v), = by_tag(logdir, "bf16")
    assert v.histo.num == 1000
    (_, v), = by_tag(logdir, "raw")
    assert list(v.histo.bucket) == [1, 2, 3] and v.histo.sum_squares == 17.0
    with pytest.raises(ValueError, match="bucket_limits"):
        SummaryWriter(logdir).add_histogram_raw("r", 0, 1, 1, 1, 1, [1.0], [1, 2])


def _decode(v):
    from PIL import Image
    img = Image.open(io.BytesIO(v.image.encoded_image_string))
    return np.asarray(img)


def test_images_in_every_layout(logdir, rng):
    chw = rng.random((3, 5, 7)).astype(np.float32)
    expected = (chw.transpose(1, 2, 0) * 255).astype(np.uint8)
    hwc_u8 = rng.integers(0, 256, (4, 6, 3), dtype=np.uint8)
    hw = rng.random((4, 5))
    batch = rng.random((4, 3, 5, 6)).astype(np.float32)
    with SummaryWriter(logdir) as w:
        w.add_image("chw", ember.tensor(chw), 1)
        w.add_image("hwc", hwc_u8, 2, dataformats="HWC")
        w.add_image("hw", ember.tensor(hw), 3, dataformats="HW")
        w.add_image("clip", ember.tensor(chw) * 3 - 1, 4)          # out of [0, 1]: clipped
        w.add_images("batch", ember.tensor(batch), 5)
        w.add_images("nhwc", batch.transpose(0, 2, 3, 1), 6, dataformats="NHWC")
    (step, v), = by_tag(logdir, "chw")
    assert step == 1 and (v.image.height, v.image.width, v.image.colorspace) == (5, 7, 3)
    np.testing.assert_array_equal(_decode(v), expected)
    np.testing.assert_array_equal(_decode(by_tag(logdir, "hwc")[0][1]), hwc_u8)
    gray = (hw * 255).astype(np.uint8)
    np.testing.assert_array_equal(_decode(by_tag(logdir, "hw")[0][1]),
                                  np.stack([gray] * 3, -1))
    clipped = ((chw * 3 - 1).clip(0, 1) * 255).astype(np.uint8).transpose(1, 2, 0)
    np.testing.assert_allclose(_decode(by_tag(logdir, "clip")[0][1]), clipped, atol=1)
    # A batch is one grid, the images side by side (fewer than 8 fit on one row).
    row = (np.concatenate(list(batch), axis=2).transpose(1, 2, 0) * 255).astype(np.uint8)
    for tag in ("batch", "nhwc"):
        np.testing.assert_array_equal(_decode(by_tag(logdir, tag)[0][1]), row)


def test_add_figure(logdir):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [1, 0])
    with SummaryWriter(logdir) as w:
        w.add_figure("fig", fig, 7)
    (step, v), = by_tag(logdir, "fig")
    assert step == 7 and (v.image.height, v.image.width) == (50, 100)


def test_text_audio_tensor(logdir):
    snd = np.sin(np.linspace(0, 20, 800)) * 0.5
    with SummaryWriter(logdir) as w:
        w.add_text("notes", "lr **0.1**", 2)
        w.add_audio("snd", ember.tensor(snd), 3, sample_rate=8000)
        w.add_tensor("t", ember.tensor([[1.5, 2.0]]), 4)
        w.add_tensor("i", np.arange(3, dtype=np.int64), 5)
    (step, v), = by_tag(logdir, "notes/text_summary")
    assert step == 2 and v.metadata.plugin_data.plugin_name == "text"
    assert v.tensor.string_val[0].decode() == "lr **0.1**"
    (_, v), = by_tag(logdir, "snd")
    with wave.open(io.BytesIO(v.audio.encoded_audio_string)) as f:
        assert f.getframerate() == 8000 and f.getnframes() == 800
        pcm = np.frombuffer(f.readframes(800), "<i2")
    np.testing.assert_array_equal(pcm, (snd * 32767).astype(np.int16))
    (_, v), = by_tag(logdir, "t")
    assert [d.size for d in v.tensor.tensor_shape.dim] == [1, 2]
    assert list(v.tensor.float_val) == [1.5, 2.0]
    (_, v), = by_tag(logdir, "i")
    assert list(v.tensor.int64_val) == [0, 1, 2]


def test_pr_curve(logdir, rng):
    labels = rng.integers(0, 2, 50)
    preds = rng.random(50)
    with SummaryWriter(logdir) as w:
        w.add_pr_curve("pr", ember.tensor(labels), ember.tensor(preds), 1, num_thresholds=11)
    (step, v), = by_tag(logdir, "pr")
    assert step == 1 and v.metadata.plugin_data.plugin_name == "pr_curves"
    data = np.array(v.tensor.float_val).reshape(6, 11)
    tp, fp, tn, fn, precision, recall = data
    # Threshold i/10: a prediction counts as positive when floor(p * 10) >= i.
    bucket = np.floor(preds * 10)
    for i in range(11):
        pos = bucket >= i
        assert tp[i] == np.sum(pos & (labels == 1)) and fp[i] == np.sum(pos & (labels == 0))
        assert tn[i] == np.sum(~pos & (labels == 0)) and fn[i] == np.sum(~pos & (labels == 1))
    np.testing.assert_allclose(precision, np.float32(tp / np.maximum(tp + fp, 1e-7)),
                               rtol=1e-6)
    np.testing.assert_allclose(recall, np.float32(tp / np.maximum(tp + fn, 1e-7)), rtol=1e-6)


def test_hparams(logdir):
    with SummaryWriter(logdir) as w:
        w.add_hparams({"lr": 0.1, "bsize": 4, "opt": "adam", "w": ember.tensor(0.5),
                       "skip": None}, {"hparam/acc": ember.tensor(0.75)},
                      hparam_domain_discrete={"opt": ["adam", "sgd"]}, run_name="trial")
    sub = os.path.join(logdir, "trial")
    tags = [t for t, _, _ in summaries(sub)]
    assert tags == ["_hparams_/experiment", "_hparams_/session_start_info",
                    "_hparams_/session_end_info", "hparam/acc"]
    content = {t: plugin_hparams_pb2.HParamsPluginData.FromString(
        v.metadata.plugin_data.content) for t, _, v in summaries(sub)[:3]}
    hp = content["_hparams_/session_start_info"].session_start_info.hparams
    assert hp["lr"].number_value == 0.1 and hp["bsize"].number_value == 4
    assert hp["opt"].string_value == "adam" and hp["w"].number_value == 0.5
    assert "skip" not in hp
    exp = content["_hparams_/experiment"].experiment
    assert [i.name for i in exp.hparam_infos] == ["lr", "bsize", "opt", "w"]
    opt = exp.hparam_infos[2]
    assert [x.string_value for x in opt.domain_discrete.values] == ["adam", "sgd"]
    assert [m.name.tag for m in exp.metric_infos] == ["hparam/acc"]
    assert by_tag(sub, "hparam/acc")[0][1].simple_value == 0.75
    with pytest.raises(TypeError, match="should be dictionary"):
        SummaryWriter(logdir).add_hparams([("lr", 1)], {})


def test_custom_scalars(logdir):
    layout = {"Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
              "USA": {"dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]]}}
    with SummaryWriter(logdir) as w:
        w.add_custom_scalars(layout)
    (_, v), = by_tag(logdir, "custom_scalars__config__")
    got = layout_pb2.Layout.FromString(v.tensor.string_val[0])
    assert [c.title for c in got.category] == ["Taiwan", "USA"]
    assert list(got.category[0].chart[0].multiline.tag) == ["twse/0050", "twse/2330"]
    series = got.category[1].chart[0].margin.series[0]
    assert (series.value, series.lower, series.upper) == ("dow/aaa", "dow/bbb", "dow/ccc")


def test_embedding(logdir, rng):
    mat = rng.standard_normal((6, 3)).astype(np.float32)
    with SummaryWriter(logdir) as w:
        w.add_embedding(ember.tensor(mat), metadata=list("abcdef"),
                        label_img=ember.rand(6, 3, 4, 4), global_step=2, tag="emb")
    sub = os.path.join(logdir, "00002", "emb")
    np.testing.assert_allclose(np.loadtxt(os.path.join(sub, "tensors.tsv")), mat, rtol=1e-6)
    assert open(os.path.join(sub, "metadata.tsv")).read().split() == list("abcdef")
    assert os.path.exists(os.path.join(sub, "sprite.png"))
    config = open(os.path.join(logdir, "projector_config.pbtxt")).read()
    assert 'tensor_name: "emb:00002"' in config and "00002/emb/tensors.tsv" in config
    with pytest.raises(AssertionError):
        SummaryWriter(logdir).add_embedding(mat, metadata=["x"])


def test_purge_step_close_reopen(logdir):
    w = SummaryWriter(logdir, purge_step=5, filename_suffix=".x")
    w.add_scalar("a", 1.0, 5)
    w.flush()
    w.close()
    w.close()                        # twice is fine
    w.add_scalar("a", 2.0, 6)        # writing after close opens a new event file
    w.close()
    assert all(f.endswith(".x") for f in glob.glob(os.path.join(logdir, "events*")))
    events = read_events(logdir)
    assert events[1].step == 5 and events[1].file_version == "brain.Event:2"
    assert events[2].session_log.status == event_pb2.SessionLog.START
    assert [s for s, _ in by_tag(logdir, "a")] == [5, 6]


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4),
                                      nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.head = nn.Linear(4 * 3 * 3, 5)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def test_add_graph_cnn(logdir):
    net = _Net()
    with SummaryWriter(logdir) as w:
        w.add_graph(net, ember.randn(2, 1, 6, 6))
    assert net.training and net.features[1].training      # put back as it was
    events = read_events(logdir)
    graphs = [e for e in events if e.graph_def]
    assert len(graphs) == 1
    assert any(e.tagged_run_metadata.tag == "profiler" for e in events)
    from tensorboardX.proto.graph_pb2 import GraphDef
    nodes = {n.name: n for n in GraphDef.FromString(graphs[0].graph_def).node}
    ops = {}
    for n in nodes.values():
        ops.setdefault(n.name.rpartition("/")[0], []).append(n.op)
    scopes = ["_Net/Sequential[features]/Conv2d[0]", "_Net/Sequential[features]/BatchNorm2d[1]",
              "_Net/Sequential[features]/ReLU[2]", "_Net/Sequential[features]/MaxPool2d[3]",
              "_Net/Linear[head]"]
    for scope in scopes:
        assert any(op.startswith("aten::") for op in ops[scope]), scope
    shape = [d.size for d in nodes["_Net/Linear[head]/weight"].attr["_output_shapes"].list
             .shape[0].dim]
    assert shape == [5, 36] and nodes["_Net/Linear[head]/weight"].op == "prim::GetAttr"
    assert "_Net/Sequential[features]/BatchNorm2d[1]/running_mean" in nodes
    # Wiring: the input feeds the convolution, the ReLU (in place) reads its BatchNorm,
    # the output node reads the head's last op.
    conv = [n for n in nodes.values() if n.name.startswith(scopes[0] + "/")
            and n.op.startswith("aten::")]
    assert any("input/input.1" in n.input for n in conv)
    relu = [n for n in nodes.values() if n.name.startswith(scopes[2] + "/")
            and n.op.startswith("aten::")]
    assert all(i.startswith(scopes[1]) for i in relu[0].input)
    out = nodes["output/output.1"]
    assert out.input[0].startswith("_Net/Linear[head]/")
    assert [d.size for d in out.attr["_output_shapes"].list.shape[0].dim] == [2, 5]
    for n in nodes.values():          # every input names a node of the graph
        assert all(i in nodes for i in n.input), n.name


def test_import_needs_no_torch_and_names_the_package():
    code = ("import sys, ember\n"
            "import ember.utils.tensorboard\n"
            "assert 'tensorboardX' not in sys.modules, 'imported before a writer is asked for'\n"
            "from ember.utils.tensorboard import SummaryWriter\n"
            "assert 'torch' not in sys.modules, 'tensorboardX pulled in torch'\n"
            "sys.modules['tensorboardX'] = None\n"
            "for name in list(sys.modules):\n"
            "    if name.startswith('ember.utils.tensorboard'):\n"
            "        del sys.modules[name]\n"
            "import ember.utils.tensorboard\n"
            "try:\n"
            "    ember.utils.tensorboard.SummaryWriter\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, check=True).stdout
    assert out == ("TensorBoard logging (SummaryWriter) requires tensorboardX, which is not "
                   "installed: pip install tensorboardX\n")
