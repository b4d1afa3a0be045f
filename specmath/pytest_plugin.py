"""The pytest plugin's specmath side: the run's audit settings, a test's, the fixture's object, the line.

pytest loads the small entry module ``_specmath_pytestplugin`` (the ``pytest11`` entry point), which
imports this module only when a run uses specmath: an option is given, or a test uses the
``specmath_audit`` fixture or the ``specmath`` marker. What the options mean is said there.

The settings of a test, from the weakest source to the strongest: the default profile (ci); the
ini file's ``specmath_profile``, then its ``specmath_n`` and ``specmath_seed``; the command line's
``--specmath-profile`` (which drops the ini file's n and seed with its profile), then its
``--specmath-n`` and ``--specmath-seed``; the test's ``@pytest.mark.specmath(**changes)``; and what
the test passes to the fixture (``n=``, ``settings=``). The false-failure probability stays <= the
family level (1e-6 in every profile) at any n; only the power changes.

Importing this module needs pytest, not hypothesis or torch.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import pytest

from specmath.settings import DEFAULT_PROFILE, AuditSettings, settings_named
from specmath.validation import InvalidArgument, check_integer, check_seed

__all__ = ["SamplerAudit", "run_settings", "settings_of_test", "settings_line", "profile_option", "rounds_option",
           "seed_option"]


def profile_option(text: str) -> str:
    """``--specmath-profile``: a profile name of ``specmath.settings.PROFILES``."""
    try:
        settings_named(text)
    except InvalidArgument as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def rounds_option(text: str) -> int:
    """``--specmath-n``: an int >= 1."""
    try:
        return check_integer(int(text), "--specmath-n (rounds per audit case)", min_value=1)
    except (ValueError, InvalidArgument) as exc:
        raise argparse.ArgumentTypeError(f"must be an int >= 1 (rounds per audit case), got {text!r}") from exc


def seed_option(text: str) -> int:
    """``--specmath-seed``: an int >= 0."""
    try:
        return check_seed(int(text), "--specmath-seed")
    except (ValueError, InvalidArgument) as exc:
        raise argparse.ArgumentTypeError(f"must be an int >= 0, got {text!r}") from exc


def run_settings(config: pytest.Config) -> tuple[str, AuditSettings]:
    """(the profile's name, the run's settings): the command line over the ini file over the default profile
    (see the module docstring); a bad ini value is a usage error naming it."""
    try:
        ini = {name: config.getini(f"specmath_{name}") for name in ("profile", "n", "seed")}
        profile = config.getoption("specmath_profile") or (profile_option(ini["profile"]) if ini["profile"] else None)
        changes: dict[str, int] = {}
        if config.getoption("specmath_profile") is None:  # the ini file's n and seed go with its profile
            if ini["n"]:
                changes["n"] = rounds_option(ini["n"])
            if ini["seed"]:
                changes["seed"] = seed_option(ini["seed"])
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(f"specmath ini option: {exc}") from None
    for name in ("n", "seed"):
        if config.getoption(f"specmath_{name}") is not None:
            changes[name] = config.getoption(f"specmath_{name}")
    profile = profile or DEFAULT_PROFILE
    return profile, settings_named(profile).replace(**changes)


def settings_of_test(config: pytest.Config, marker: pytest.Mark | None) -> AuditSettings:
    """The run's settings with the changes of the test's ``@pytest.mark.specmath(**changes)`` (setting names)."""
    _, settings = run_settings(config)
    if marker is None:
        return settings
    if marker.args:
        raise InvalidArgument(f"@pytest.mark.specmath takes settings by name (n=2000, seed=1), got {marker.args!r}")
    return settings.replace(**marker.kwargs)


def settings_line(config: pytest.Config) -> str:
    """The line that says how strong the run's audits are (printed when a test of the run is an audit)."""
    profile, settings = run_settings(config)
    return f"specmath: audits run profile {profile}, {settings.label()} (--specmath-profile, --specmath-n, --specmath-seed)"


@dataclass(frozen=True)
class SamplerAudit:
    """``assert_sampler_lossless`` (and, as ``.tree``, ``assert_tree_sampler_lossless``) with this test's settings."""

    settings: AuditSettings

    @property
    def n(self) -> int:
        """Rounds per case."""
        return self.settings.n

    @property
    def seed(self) -> int:
        return self.settings.seed

    def __call__(self, sample_round: Any, **options: Any):
        """``assert_sampler_lossless(sample_round, settings=<this test's>, **options)``; an ``n`` or ``settings`` given wins."""
        from specmath.testing import assert_sampler_lossless

        options.setdefault("settings", self.settings)
        return assert_sampler_lossless(sample_round, **options)

    def tree(self, sample_tree: Any, **options: Any):
        """``assert_tree_sampler_lossless`` with this test's settings: ``specmath_audit.tree(my_tree, children="top-k")``."""
        from specmath.testing import assert_tree_sampler_lossless

        options.setdefault("settings", self.settings)
        return assert_tree_sampler_lossless(sample_tree, **options)
