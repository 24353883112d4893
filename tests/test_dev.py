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


def test_the_install_takes_the_sdk_extra_and_does_without_it_where_it_fails(
    monkeypatch, tmp_path: Path, capsys
) -> None:
    dev = _dev_module()
    monkeypatch.setattr(dev, "STAMP", tmp_path / "stamp")
    installed: list[str] = []

    def pip(command: list[str], **_: object) -> subprocess.CompletedProcess[bytes]:
        installed.append(command[-1])
        failed = command[-1].endswith("[dev,sdk]") and sdk_fails
        return subprocess.CompletedProcess(command, 1 if failed else 0)

    monkeypatch.setattr(dev.subprocess, "run", pip)
    sdk_fails = False
    dev._install("fingerprint")
    assert installed == [f"{ROOT}[dev,sdk]"]
    assert (tmp_path / "stamp").read_text() == "fingerprint"

    installed.clear()
    sdk_fails = True
    dev._install("fingerprint")
    assert installed == [f"{ROOT}[dev,sdk]", f"{ROOT}[dev]"]
    assert "sdk extra" in capsys.readouterr().err
