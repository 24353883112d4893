"""dev.py, the quick start's bootstrap, writes the package's bytecode even where Python is told not
to."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_package_is_compiled_where_python_writes_no_bytecode(tmp_path: Path) -> None:
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("VALUE = 1\n")
    code = (
        f"import pathlib, sys; sys.path.insert(0, {str(ROOT)!r}); import dev; "
        f"print(dev.compile_package(pathlib.Path({str(tmp_path / 'src')!r})))"
    )
    run = subprocess.run(
        [sys.executable, "-B", "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert run.stdout.split() == ["True"]
    assert Path(importlib.util.cache_from_source(str(package / "mod.py"))).is_file()


def test_rules_doc_writes_docs_rules_md_from_the_pages_beside_the_checkout(monkeypatch) -> None:
    sys.path.insert(0, str(ROOT))
    try:
        import dev
    finally:
        sys.path.remove(str(ROOT))
    calls: list[list[str]] = []
    monkeypatch.setattr(dev, "ensure_environment", lambda: None)
    monkeypatch.setattr(dev.os, "execv", lambda path, args: calls.append(args))
    dev.main(["rules-doc"])
    [args] = calls
    assert args[0] == str(dev.BIN / "python") and "write_rules_document" in args[2]
    assert args[3:] == [str(dev.PAGES_DIR), str(ROOT / "docs" / "rules.md")]
    assert dev.main(["rules-doc", "extra"]) == 2


def _dev_module():
    sys.path.insert(0, str(ROOT))
    try:
        import dev
    finally:
        sys.path.remove(str(ROOT))
    return dev


PIP_SAYS = [
    "Obtaining file:///clone\n",
    "Collecting aiohttp==3.12.15 (from evalmock==0.1.0)\n",
    "  Using cached aiohttp-3.12.15-cp311-cp311-manylinux_2_17_x86_64.whl (1.7 MB)\n",
    "Requirement already satisfied: idna>=2.0 in ./.venv/lib/python3.11/site-packages\n",
    "Building wheels for collected packages: evalmock\n",
    "Installing collected packages: aiohttp, evalmock\n",
    "Successfully installed aiohttp-3.12.15 evalmock-0.1.0\n",
]


def fake_pip(monkeypatch, dev, failing: str = "") -> list[list[str]]:
    """subprocess.Popen, as dev.py runs pip, replaced: each run says PIP_SAYS, then exits with 1 for
    the extras `failing`, else 0. The commands run are listed in the list returned."""
    commands: list[list[str]] = []

    class Pip:
        def __init__(self, command: list[str], **_: object) -> None:
            commands.append(command)
            self.stdout = iter(PIP_SAYS)
            self.returncode = 1 if failing and command[-1].endswith(f"[{failing}]") else 0

        def __enter__(self) -> Pip:
            return self

        def __exit__(self, *_: object) -> None:
            pass

    monkeypatch.setattr(dev.subprocess, "Popen", Pip)
    return commands


def test_the_install_takes_the_sdk_extra_and_does_without_it_where_it_fails(
    monkeypatch, tmp_path: Path, capsys
) -> None:
    dev = _dev_module()
    monkeypatch.setattr(dev, "STAMP", tmp_path / "stamp")
    commands = fake_pip(monkeypatch, dev)
    dev._install("fingerprint")
    assert [command[-1] for command in commands] == [f"{ROOT}[dev,sdk]"]
    assert (tmp_path / "stamp").read_text() == "fingerprint"

    commands = fake_pip(monkeypatch, dev, failing="dev,sdk")
    dev._install("fingerprint")
    assert [command[-1] for command in commands] == [f"{ROOT}[dev,sdk]", f"{ROOT}[dev]"]
    assert "sdk extra" in capsys.readouterr().err


def test_the_first_install_prints_a_line_for_each_of_pip_s_steps(
    monkeypatch, tmp_path: Path, capsys
) -> None:
    dev = _dev_module()
    monkeypatch.setattr(dev, "STAMP", tmp_path / "stamp")
    commands = fake_pip(monkeypatch, dev)
    dev._install("fingerprint")
    assert "--quiet" not in commands[0]
    assert capsys.readouterr().out.splitlines()[1:] == [
        "  Collecting aiohttp==3.12.15",
        "  Building wheels for collected packages: evalmock",
        "  Installing collected packages: aiohttp, evalmock",
        "  Successfully installed aiohttp-3.12.15 evalmock-0.1.0",
        "installed",
    ]


def test_a_step_longer_than_a_line_is_cut() -> None:
    dev = _dev_module()
    step = dev.pip_step("Installing collected packages: " + "a, " * 60)
    assert step is not None and len(step) == 102 and step.endswith("...")


def test_the_suite_runs_in_two_processes_a_core_unless_the_caller_chose(monkeypatch) -> None:
    dev = _dev_module()
    monkeypatch.setattr(dev.os, "sched_getaffinity", lambda _: {0, 1}, raising=False)
    assert dev.parallel_options([]) == ["-n", "4", "--dist", "loadgroup"]
    assert dev.parallel_options(["tests/world", "-x"]) == ["-n", "4", "--dist", "loadgroup"]
    for chosen in (["-n", "1"], ["-n0"], ["--numprocesses=2"], ["--dist", "load"]):
        assert dev.parallel_options(["tests/world", *chosen]) == [], chosen
    for one_process in (["-p", "no:xdist"], ["-pno:xdist"], ["--pdb"], ["--trace"]):
        assert dev.parallel_options(["tests/world", *one_process]) == [], one_process
    monkeypatch.setattr(dev.os, "sched_getaffinity", lambda _: set(range(64)), raising=False)
    assert dev.parallel_options([])[:2] == ["-n", str(dev.MAX_PROCESSES)]


def test_dev_py_test_runs_ruff_then_pytest_spread_over_processes(monkeypatch) -> None:
    dev = _dev_module()
    calls: list[list[str]] = []
    monkeypatch.setattr(dev, "ensure_environment", lambda: None)
    monkeypatch.setattr(dev.os, "chdir", lambda path: None)
    monkeypatch.setattr(dev, "parallel_options", lambda rest: ["-n", "4", "--dist", "loadgroup"])
    monkeypatch.setattr(
        dev.subprocess, "run", lambda command, **_: subprocess.CompletedProcess(command, 0)
    )
    monkeypatch.setattr(dev.os, "execv", lambda path, args: calls.append(args))
    dev.main(["test", "tests/world", "-x"])
    [args] = calls
    assert args == [
        str(dev.BIN / "python"),
        *("-m", "pytest", "-n", "4", "--dist", "loadgroup", "tests/world", "-x"),
    ]
