"""The pytest plugin: audit your samplers quickly while developing and at full power in CI.

Installed with specmath as the ``pytest11`` entry point ``specmath`` (pyproject.toml), so any suite
that has specmath installed gets, without a conftest line:

* ``--specmath-n N``: rounds per audit case for the ``specmath_audit`` fixture (default 20000, the
  audit's full power: detectable TV 0.03-0.06 per case; 2000 runs ten times faster and detects
  0.10-0.17). The ini option ``specmath_n`` sets a project's own default (``pytest.ini``,
  ``[tool.pytest.ini_options]``); the command line wins.
* ``--specmath-seed S``: the seed of the drafts and of the sampler's generator (default 0, or the
  ini option ``specmath_seed``);
* the fixture ``specmath_audit``: ``specmath_audit(sampler, **options)`` is
  ``specmath.testing.assert_sampler_lossless(sampler, n=<--specmath-n>, seed=<--specmath-seed>,
  **options)`` (an ``n`` or ``seed`` passed in the call wins); its ``n`` and ``seed`` say what it runs;
* the marker ``specmath``: every test that uses the fixture carries it, so ``-m "not specmath"``
  leaves the audits out and ``-m specmath`` runs only them;
* a header line naming n and seed, so a CI log says how strong its audits were.

A whole suite then runs ``pytest --specmath-n 2000`` while developing and ``pytest`` in CI. The
false-failure probability stays <= 1e-6 per audit at any n; only the power changes.

Importing this module needs pytest, not hypothesis or torch.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import pytest

from specmath.validation import InvalidArgument, check_integer, check_seed

__all__ = ["SamplerAudit", "specmath_audit", "DEFAULT_N"]

#: rounds per case when neither --specmath-n nor the ini option specmath_n is given
DEFAULT_N = 20_000


def _rounds(text: str) -> int:
    try:
        return check_integer(int(text), "--specmath-n (rounds per audit case)", min_value=1)
    except (ValueError, InvalidArgument) as exc:
        raise argparse.ArgumentTypeError(f"must be an int >= 1 (rounds per audit case), got {text!r}") from exc


def _seed(text: str) -> int:
    try:
        return check_seed(int(text), "--specmath-seed")
    except (ValueError, InvalidArgument) as exc:
        raise argparse.ArgumentTypeError(f"must be an int >= 0, got {text!r}") from exc


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("specmath", "specmath sampler audits")
    group.addoption("--specmath-n", type=_rounds, default=None, metavar="N",
                    help=f"rounds per case of the specmath_audit fixture (default: ini specmath_n, else {DEFAULT_N})")
    group.addoption("--specmath-seed", type=_seed, default=None, metavar="S",
                    help="seed of the drafts and of the sampler's generator (default: ini specmath_seed, else 0)")
    parser.addini("specmath_n", f"rounds per case of the specmath_audit fixture (default {DEFAULT_N})", default=str(DEFAULT_N))
    parser.addini("specmath_seed", "seed of the specmath_audit fixture (default 0)", default="0")


def _settings(config: pytest.Config) -> tuple[int, int]:
    """(n, seed): the command line, else the ini options, else the defaults; a bad ini value is a usage error."""
    n, seed = config.getoption("specmath_n"), config.getoption("specmath_seed")
    try:
        n = _rounds(config.getini("specmath_n")) if n is None else n
        seed = _seed(config.getini("specmath_seed")) if seed is None else seed
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(f"specmath ini option: {exc}") from None
    return n, seed


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "specmath: audits a sampler with specmath (the specmath_audit fixture); "
                                       "-m 'not specmath' leaves them out")
    _settings(config)  # a bad ini value stops the run before any test


def pytest_report_header(config: pytest.Config) -> str:
    n, seed = _settings(config)
    return f"specmath: audits run n = {n} rounds per case (--specmath-n), seed {seed} (--specmath-seed)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "specmath_audit" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.specmath)


@dataclass(frozen=True)
class SamplerAudit:
    """``assert_sampler_lossless`` with this run's n and seed (``--specmath-n``, ``--specmath-seed``)."""

    n: int
    seed: int

    def __call__(self, sample_round: Any, **options: Any):
        from specmath.testing import assert_sampler_lossless

        options.setdefault("n", self.n)
        options.setdefault("seed", self.seed)
        return assert_sampler_lossless(sample_round, **options)


@pytest.fixture
def specmath_audit(request: pytest.FixtureRequest) -> SamplerAudit:
    """Audit a sampler at this run's strength: ``specmath_audit(my_round)``, ``specmath_audit(my_rounds, batched=True)``."""
    n, seed = _settings(request.config)
    return SamplerAudit(n, seed)
