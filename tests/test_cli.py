"""The installed `ember` command: `ember run` maps torch imports onto ember (in children too)
and exits as `python script.py` would; bad usage exits 2 with argparse's message; every
subcommand has --help. Everything goes through the console script pip installed."""
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The console script pip installs beside this interpreter (`pip install -e .`).
EMBER = shutil.which("ember", path=os.path.dirname(sys.executable))


def _run(args, tmp_path, env_extra=None):
    if EMBER is None:
        pytest.fail(f"no `ember` command beside {sys.executable}: install the package as the "
                    "README says (pip install -e .)")
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    return subprocess.run([EMBER] + args, capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=120)


def _python(args, tmp_path):
    """The same program under plain Python: the reference for exit statuses and messages."""
    return subprocess.run([sys.executable] + args, capture_output=True, text=True,
                          cwd=tmp_path)


def _script(tmp_path, body, name="prog.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_console_script_runs_this_checkout(tmp_path):
    script = _script(tmp_path, "import ember, torch\nprint(ember.__file__, torch is ember)\n")
    out = _run(["run", script], tmp_path)
    assert out.returncode == 0, out.stderr
    path, same = out.stdout.split()
    assert path == os.path.join(ROOT, "ember", "__init__.py") and same == "True"


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
    out = _run(["run", script, "a", "--b", "-h", "--guard"], tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # The program's arguments are its own, -h and --guard included.
    assert lines[0] == "ember [2.0, 4.0] ['a', '--b', '-h', '--guard'] __main__"
    assert lines[1] == "True True"
    assert lines[2] == "True"


def test_missing_file_matches_python(tmp_path):
    ours = _run(["run", "nope.py"], tmp_path)
    theirs = _python(["nope.py"], tmp_path)
    assert ours.returncode == theirs.returncode == 2
    # "<interpreter>: can't open file ...": the console script's interpreter is python3 (its
    # shebang), the reference's is sys.executable.
    assert ours.stderr.partition(": ")[2] == theirs.stderr.partition(": ")[2]
    assert ours.stderr.startswith(sys.exec_prefix)


def test_syntax_error_matches_python(tmp_path):
    script = _script(tmp_path, "x = (1,\n")
    ours = _run(["run", script], tmp_path)
    theirs = _python([script], tmp_path)
    assert ours.returncode == theirs.returncode == 1
    assert ours.stderr.strip() == theirs.stderr.strip()


def test_failing_program_exits_1_with_pythons_traceback(tmp_path):
    """A program that raises: status 1 and the traceback Python prints, frame for frame (no
    launcher or runpy frames of ember's above the program's own)."""
    _script(tmp_path, "def helper(n):\n    return 1 / n\n", name="helper.py")
    script = _script(tmp_path, """
        import helper

        def main():
            print("before", flush=True)
            helper.helper(0)

        main()
    """)
    ours = _run(["run", script], tmp_path)
    theirs = _python([script], tmp_path)
    assert ours.returncode == theirs.returncode == 1
    assert ours.stdout == theirs.stdout == "before\n"
    assert ours.stderr == theirs.stderr
    assert ours.stderr.startswith("Traceback (most recent call last):\n")
    assert ours.stderr.endswith("ZeroDivisionError: division by zero\n")


@pytest.mark.parametrize("body, status", [("import sys\nsys.exit(3)\n", 3),
                                          ("import sys\nsys.exit('stopped')\n", 1),
                                          ("raise SystemExit(0)\n", 0)])
def test_program_exit_status_passes_through(tmp_path, body, status):
    script = _script(tmp_path, body)
    ours = _run(["run", script], tmp_path)
    theirs = _python([script], tmp_path)
    assert ours.returncode == theirs.returncode == status
    assert ours.stderr == theirs.stderr


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
    out = _run(["run", "-m", "pkg.main", "x", "-h"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ember ['x', '-h']"


@pytest.mark.parametrize("missing", ["torch.nonexistent_module"])
def test_missing_module_error(tmp_path, missing):
    script = _script(tmp_path, f"import {missing}\n")
    out = _run(["run", script], tmp_path)
    assert out.returncode == 1
    assert f"No module named '{missing}'" in out.stderr


def test_guard_forms(tmp_path):
    script = _script(tmp_path, "import os\nprint(os.environ.get('EMBER_GUARD'))\n")
    for args, mode in ((["--guard"], "warn"), (["--guard=raise"], "raise"),
                       (["--guard", "raise"], "raise"), ([], "None")):
        out = _run(["run", *args, script], tmp_path)
        assert (out.returncode, out.stdout.strip()) == (0, mode), (args, out.stderr)


# ------------------------------------------------------------------ usage: --help and errors
@pytest.mark.parametrize("args, usage", [([], "ember"), (["run"], "ember run"),
                                         (["demo"], "ember demo")])
def test_every_subcommand_has_help(tmp_path, args, usage):
    for flag in ("--help", "-h"):
        out = _run(args + [flag], tmp_path)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith(f"usage: {usage} "), out.stdout
        assert out.stderr == ""
    top = _run(["--help"], tmp_path).stdout
    assert re.search(r"^\s+run\s+run a PyTorch program", top, re.M)
    assert re.search(r"^\s+demo\s+train a small CNN", top, re.M)


def test_version(tmp_path):
    out = _run(["--version"], tmp_path)
    pyproject = open(os.path.join(ROOT, "pyproject.toml")).read()
    version = re.search(r'^version = "(.+)"$', pyproject, re.M).group(1)
    assert (out.returncode, out.stdout) == (0, f"ember {version}\n")


@pytest.mark.parametrize("args, message", [
    ([], "ember: error: the following arguments are required: command"),
    (["bogus"], "ember: error: argument command: invalid choice: 'bogus' "
                "(choose from 'run', 'demo')"),
    (["run"], "ember run: error: a script or -m module is required"),
    (["run", "--guard=loud", "x.py"],
     "ember run: error: argument --guard: invalid choice: 'loud' (choose from 'warn', "
     "'raise')"),
    (["run", "--bogus", "x.py"], "ember run: error: unrecognized arguments: --bogus"),
    (["run", "-m"], "ember run: error: argument -m: expected one argument"),
    (["run", "--nproc-per-node", "x", "s.py"],
     "ember run: error: argument --nproc-per-node/--nproc_per_node: invalid int value: 'x'"),
    (["run", "--nproc-per-node=0", "s.py"],
     "ember run: error: argument --nproc-per-node/--nproc_per_node: expected a positive "
     "number, got 0"),
    (["demo", "--epochs", "0"],
     "ember demo: error: argument --epochs: expected a positive number, got 0"),
    (["demo", "--epochs", "two"],
     "ember demo: error: argument --epochs: invalid int value: 'two'"),
    (["demo", "--bogus"], "ember: error: unrecognized arguments: --bogus"),
])
def test_bad_usage_exits_2_with_the_usage(tmp_path, args, message):
    out = _run(args, tmp_path)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.startswith("usage: ember")
    assert out.stderr.rstrip().splitlines()[-1] == message


def test_main_returns_the_status_instead_of_exiting():
    """`main()` (also used by the distributed launcher) returns 2 on bad usage."""
    from ember.__main__ import main
    assert main(["run", "--nproc-per-node", "x", "s.py"]) == 2
    assert main(["demo", "--epochs", "0"]) == 2
    assert main(["--help"]) == 0
