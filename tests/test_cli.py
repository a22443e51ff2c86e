"""`ember run`: unchanged PyTorch programs resolve `torch` to ember, in children too."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(args, tmp_path, env_extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "ember"] + args, capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=120)


def _script(tmp_path, body, name="prog.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_run_maps_torch_and_sets_argv(tmp_path):
    script = _script(tmp_path, """
        import sys
        import torch
        import torch.nn.modules.linear as lin
        from torch.nn import functional as F
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        print(torch.__name__, x.grad.tolist(), sys.argv[1:], __name__)
        print(lin.Linear is torch.nn.Linear, F.relu.__module__.startswith("ember"))
        print(sys.path[0] == __file__.rsplit("/", 1)[0])
    """)
    out = _run(["run", script, "a", "--b"], tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "ember [2.0, 4.0] ['a', '--b'] __main__"
    assert lines[1] == "True True"
    assert lines[2] == "True"


def test_missing_file_matches_python(tmp_path):
    ours = _run(["run", "nope.py"], tmp_path)
    theirs = subprocess.run([sys.executable, "nope.py"], capture_output=True, text=True,
                            cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 2
    assert ours.stderr.strip() == theirs.stderr.strip()


def test_syntax_error_matches_python(tmp_path):
    script = _script(tmp_path, "x = (1,\n")
    ours = _run(["run", script], tmp_path)
    theirs = subprocess.run([sys.executable, script], capture_output=True, text=True,
                            cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 1
    assert ours.stderr.strip().splitlines()[-1] == theirs.stderr.strip().splitlines()[-1]


def test_missing_api_names_torch_attribute(tmp_path):
    script = _script(tmp_path, "import torch\ntorch.no_such_function_xyz(1)\n")
    out = _run(["run", script], tmp_path)
    assert out.returncode == 1
    assert "torch.no_such_function_xyz" in out.stderr
    assert "AttributeError" in out.stderr


def test_spawned_children_see_the_mapping(tmp_path):
    script = _script(tmp_path, """
        import multiprocessing as mp
        import torch

        def child(q):
            import torch
            q.put(torch.__name__)

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            print(q.get(timeout=60))
            p.join()
    """)
    out = _run(["run", script], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ember"


def test_run_module(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text("import torch, sys\nprint(torch.__name__, sys.argv[1:])\n")
    out = _run(["run", "-m", "pkg.main", "x"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ember ['x']"


@pytest.mark.parametrize("missing", ["torch.nonexistent_module"])
def test_missing_module_error(tmp_path, missing):
    script = _script(tmp_path, f"import {missing}\n")
    out = _run(["run", script], tmp_path)
    assert out.returncode == 1
    assert f"No module named '{missing}'" in out.stderr
