"""The build backend of specmath-models (PEP 517): its sdist and wheel, from files kept elsewhere in the repository.

The weights live where specmath's code in a clone finds them and its training scripts write them (under
``specmath/lm/``); ``[tool.specmath-models.files]`` in ``pyproject.toml`` maps each path of the package
``specmath_models/`` to the repository file or folder it is copied from. A build from the repository reads them
there (this folder's parent); the sdist stores them under ``specmath_models/``, so a build from an unpacked sdist
(what ``python -m build`` does) reads them there. No editable install: ``pip install ./models`` copies the files,
and specmath prefers a clone's own files anyway.

Both archives are reproducible: sorted entries, fixed timestamps (``SOURCE_DATE_EPOCH``, else 1980-01-01), the
same bytes for the same files. Standard library only (and tomli on Python 3.10).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import sys
import tarfile
import time
import zipfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["build_wheel", "build_sdist", "get_requires_for_build_wheel", "get_requires_for_build_sdist"]

PROJECT = Path(__file__).resolve().parent
PACKAGE = "specmath_models"
#: 1980-01-01, the earliest time a zip entry can carry
EARLIEST = 315532800


def _config() -> dict:
    return tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))


def _timestamp() -> int:
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", EARLIEST)), EARLIEST)


def _source(relative: str, repo_path: str) -> Path:
    """``relative`` under ``specmath_models/`` in an unpacked sdist, else ``repo_path`` in the repository."""
    packed = PROJECT / PACKAGE / relative
    path = packed if packed.exists() else PROJECT.parent / repo_path
    if not path.exists():
        raise FileNotFoundError(f"specmath-models: {repo_path} is missing (train it first; see {PACKAGE}/README.md)")
    return path


def _package_files() -> list[tuple[str, Path]]:
    """(path inside the wheel, file on disk) for the package: its ``__init__.py`` and every mapped weight file."""
    files = [(f"{PACKAGE}/__init__.py", PROJECT / PACKAGE / "__init__.py")]
    for relative, repo_path in _config()["tool"]["specmath-models"]["files"].items():
        source = _source(relative, repo_path)
        if source.is_dir():
            for path in sorted(p for p in source.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
                files.append((f"{PACKAGE}/{relative}/{path.relative_to(source).as_posix()}", path))
        else:
            files.append((f"{PACKAGE}/{relative}", source))
    return sorted(files)


def _license() -> Path:
    packed = PROJECT / "LICENSE"
    return packed if packed.exists() else PROJECT.parent / "LICENSE"


def _metadata() -> str:
    """Core metadata 2.4 (PEP 639's License-Expression) from ``[project]``, the README as the description."""
    project = _config()["project"]
    lines = [
        "Metadata-Version: 2.4",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
        f"License-Expression: {project['license']}",
        "License-File: LICENSE",
        f"Requires-Python: {project['requires-python']}",
        "Description-Content-Type: text/markdown",
    ]
    readme = (PROJECT / project["readme"]).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + readme


def _names() -> tuple[str, str]:
    """(distribution name as file names spell it, version)."""
    project = _config()["project"]
    return project["name"].replace("-", "_"), project["version"]


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings=None) -> list[str]:
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    """``specmath_models-VERSION-py3-none-any.whl``: the package, its metadata, the licence, RECORD last."""
    name, version = _names()
    dist_info = f"{name}-{version}.dist-info"
    entries = [(arcname, path.read_bytes()) for arcname, path in _package_files()]
    entries += [
        (f"{dist_info}/METADATA", _metadata().encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: build_models\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (f"{dist_info}/licenses/LICENSE", _license().read_bytes()),
    ]
    record = "\n".join(_record_line(arcname, data) for arcname, data in entries) + f"\n{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode()))
    filename = f"{name}-{version}-py3-none-any.whl"
    stamp = _zip_time(_timestamp())
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for arcname, data in entries:
            info = zipfile.ZipInfo(arcname, date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return filename


def _zip_time(epoch: int) -> tuple[int, int, int, int, int, int]:
    return time.gmtime(epoch)[:6]


def build_sdist(sdist_directory, config_settings=None) -> str:
    """``specmath_models-VERSION.tar.gz``: this folder's build files, PKG-INFO, the licence, the weights packed."""
    name, version = _names()
    top = f"{name}-{version}"
    entries = [(f"{top}/{path}", (PROJECT / path).read_bytes()) for path in ("pyproject.toml", "build_models.py", "README.md")]
    entries += [(f"{top}/LICENSE", _license().read_bytes()), (f"{top}/PKG-INFO", _metadata().encode())]
    entries += [(f"{top}/{arcname}", path.read_bytes()) for arcname, path in _package_files()]
    filename = f"{top}.tar.gz"
    stamp = _timestamp()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for arcname, data in sorted(entries):
            info = tarfile.TarInfo(arcname)
            info.size, info.mtime, info.mode = len(data), stamp, 0o644
            tar.addfile(info, io.BytesIO(data))
    with open(Path(sdist_directory) / filename, "wb") as out, gzip.GzipFile(
            filename="", mode="wb", fileobj=out, mtime=stamp, compresslevel=6) as gz:
        gz.write(buffer.getvalue())
    return filename
