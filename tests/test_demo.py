"""The main job: a small CNN trained on the bundled digits reaches >= 97% test accuracy, and
its checkpoint loads in real PyTorch; `ember demo` says so in its last line and exits 0."""
import io
import os
import pty
import re
import select
import shutil
import subprocess
import sys

import numpy as np
import pytest

import ember
from ember._demo import _bar, build_model, demo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EMBER = shutil.which("ember", path=os.path.dirname(sys.executable))
LAST_LINE = re.compile(r"final test accuracy (\d+\.\d\d)% after (\d+) epochs? in [\d.]+s; "
                       r"weights saved to (\S+) \(ember\.load and torch\.load read it\)")


def _digits_test_set():
    test = ember.vision.datasets.Digits(train=False)
    x = np.stack([test[i][0].numpy() for i in range(len(test))])
    return x, test.targets.numpy()


def test_demo_reaches_97_percent_and_saves_a_torch_checkpoint(tmp_path, torch_mod):
    out = tmp_path / "digits.pt"
    accuracy = demo(out=str(out), verbose=False)
    assert accuracy >= 0.97
    state = torch_mod.load(out, weights_only=True)
    model = build_model(torch_mod.nn)
    model.load_state_dict(state)
    x, targets = _digits_test_set()
    with torch_mod.no_grad():
        predicted = model(torch_mod.tensor(x)).argmax(1).numpy()
    torch_accuracy = (predicted == targets).mean()
    assert abs(torch_accuracy - accuracy) < 1e-9  # the same weights give the same answers


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _console(tmp_path, *args):
    if EMBER is None:
        pytest.fail(f"no `ember` command beside {sys.executable}: pip install -e .")
    return subprocess.run([EMBER, "demo", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=_env(), timeout=300)


def test_console_demo_exits_0_and_ends_with_accuracy_time_and_checkpoint(tmp_path):
    out = _console(tmp_path, "--epochs", "2", "--out", "w.pt")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""            # not a terminal: no progress bar
    lines = out.stdout.splitlines()
    assert len(lines) == 3 and "\r" not in out.stdout
    assert [line.split()[:2] for line in lines[:2]] == [["epoch", "1"], ["epoch", "2"]]
    found = LAST_LINE.fullmatch(lines[-1])
    assert found, lines[-1]
    assert found.group(2) == "2" and found.group(3) == str(tmp_path / "w.pt")
    # The checkpoint reads back and gives, recomputed here, the accuracy the demo printed
    # (and the one its last epoch line printed).
    model = build_model(ember.nn)
    model.load_state_dict(ember.load(found.group(3)))
    model.eval()
    x, targets = _digits_test_set()
    with ember.no_grad():
        accuracy = (model(ember.tensor(x)).argmax(1).numpy() == targets).mean() * 100
    assert f"{accuracy:.2f}" == found.group(1)
    assert f"test accuracy {accuracy:.2f}%" in lines[1]


def test_console_demo_draws_a_progress_bar_in_a_terminal(tmp_path):
    """Run in a pseudo-terminal: a bar (tqdm's, or ember's own without tqdm) redrawn with
    carriage returns, then the per-epoch line."""
    if EMBER is None:
        pytest.fail(f"no `ember` command beside {sys.executable}: pip install -e .")
    leader, follower = pty.openpty()
    proc = subprocess.Popen([EMBER, "demo", "--epochs", "1", "--out", "w.pt"], stdin=follower,
                            stdout=follower, stderr=follower, cwd=tmp_path, env=_env())
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            proc.kill()
            pytest.fail("ember demo printed nothing for 120 s")
        try:
            data = os.read(leader, 4096)
        except OSError:                # EIO: the terminal's other end closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=60) == 0
    text = b"".join(chunks).decode()
    assert re.search(r"\repoch 1/1: +\d+%\|", text), text   # the bar, redrawn in place
    assert re.search(r"\| ?\d+/45 \[", text)     # 45 batches: 1,438 samples, 32 per batch
    assert LAST_LINE.fullmatch(text.strip().splitlines()[-1].strip())


def test_builtin_bar_draws_to_the_end_and_erases_itself():
    stream = io.StringIO()
    items = list(_bar(range(7), "epoch 3/9", stream, width=7, every=0))
    assert items == list(range(7))
    frames = stream.getvalue().split("\r")
    assert frames[0] == ""
    assert frames[1].startswith("epoch 3/9:  14%|#      | 1/7 [")
    assert frames[7].startswith("epoch 3/9: 100%|#######| 7/7 [")
    assert frames[8] == " " * len(frames[7]) and frames[9] == ""   # erased, cursor home
