"""How strong a statistical audit is, as one record with named profiles (Hypothesis' settings profiles).

Notation: N = samples per G-test (rounds per case, generate calls), T = the tests of an audit, L = its
looks; the *significance level* of one test is written ``level`` so as not to clash with alpha.

Every audit that samples (the round and tree audits of ``specmath.audit``, ``specmath.testing``,
``specmath audit``, the pytest plugin, the engine audit's G-tests, ``specmath.lm.histogram``) reads
its strength from an ``AuditSettings``:

* ``family_level``: a lossless sampler fails the whole audit with probability <= family_level; each of
  its T L tests runs at level = family_level / (T L) (Bonferroni);
* ``power``: each test states its detectable TV, the smallest TV(sampler's law, exact law) it rejects
  with probability >= power at that N (``specmath.stats.detectable_tv``; it shrinks like 1 / sqrt(N));
* ``n``, ``generate_calls``: the sample sizes, which buy power and cost time; ``seed``; ``sequential``.

Three profiles; only the power changes between them, never the false-failure bound:

=========  ========  ==============  =========================================================
profile    n         generate calls  what for
=========  ========  ==============  =========================================================
dev        2000      300             while editing: ten times faster; detects TV 0.09-0.15 per
                                     round case; sequential, so a clear failure stops at N/16
ci         20000     2000            the default everywhere: TV 0.03-0.06 per round case
thorough   100000    10000           before a release: TV 0.013-0.029 per round case
=========  ========  ==============  =========================================================

(The TV ranges are the battery's joint tests, ``specmath audit reference --profile NAME``.)

>>> settings_named("dev").n
2000
>>> settings_named("ci").replace(n=300, seed=7)
AuditSettings(n=300, generate_calls=2000, family_level=1e-06, power=0.99, seed=7, sequential=False)
>>> settings_named("CI")
Traceback (most recent call last):
...
specmath.validation.UnknownName: unknown audit profile 'CI' (did you mean 'ci'?); choose from: dev, ci, thorough
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any

from specmath.validation import (
    InvalidArgument,
    check_bool,
    check_choice,
    check_integer,
    check_real,
    check_seed,
)

__all__ = ["AuditSettings", "PROFILES", "DEFAULT_PROFILE", "CI", "settings_named", "as_settings", "SETTING_NAMES"]


@dataclass(frozen=True)
class AuditSettings:
    """The strength of an audit; a profile of ``PROFILES`` or one changed with ``replace``. Hashable (frozen)."""

    n: int = 20_000  # rounds per case of a round or tree audit; samples per check of a histogram
    generate_calls: int = 2_000  # generate calls per sampler (engine and control) of an engine audit
    family_level: float = 1e-6  # P(a lossless sampler fails the audit) <= this; each test at family_level / (T L)
    power: float = 0.99  # a test's detectable TV is the smallest it rejects with probability >= power
    seed: int = 0  # seed of the auditor's drafts and the sampler's generator (case i of a battery: seed + i)
    sequential: bool = False  # look at N/16, N/8, N/4, N/2, N; stop a case, and the audit, at the first rejection

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "n", check_integer(self.n, "n (rounds per case)", min_value=1))
        set_(self, "generate_calls", check_integer(self.generate_calls, "generate_calls", min_value=1))
        for name in ("family_level", "power"):
            set_(self, name, check_real(getattr(self, name), name, min_value=0, max_value=1, open_min=True, open_max=True))
        set_(self, "seed", check_seed(self.seed))
        set_(self, "sequential", check_bool(self.sequential, "sequential"))

    def replace(self, **changes: Any) -> AuditSettings:
        """These settings with ``changes`` (setting name -> value); an unknown name is an error naming the known ones."""
        for name in changes:
            check_choice(name, "audit setting", SETTING_NAMES)
        return dataclasses.replace(self, **changes)

    def label(self) -> str:
        """One line for a report header: ``n = 20000 rounds per case, seed 0, family level 1e-06, power 0.99``."""
        looks = ", sequential" if self.sequential else ""
        return (f"n = {self.n} rounds per case, seed {self.seed}{looks}; family level {self.family_level:g}, "
                f"detectable TV at power {self.power:g}")


#: every setting's name, as ``replace``, the CLI and ``@pytest.mark.specmath(...)`` spell it
SETTING_NAMES = tuple(f.name for f in fields(AuditSettings))

#: the named profiles (see the module docstring); ``ci`` is every default
PROFILES: dict[str, AuditSettings] = {
    "dev": AuditSettings(n=2_000, generate_calls=300, sequential=True),
    "ci": AuditSettings(),
    "thorough": AuditSettings(n=100_000, generate_calls=10_000),
}
#: the profile an audit runs under when none is named
DEFAULT_PROFILE = "ci"
CI = PROFILES[DEFAULT_PROFILE]


def settings_named(name: str) -> AuditSettings:
    """The profile called ``name`` (``dev``, ``ci``, ``thorough``); a near miss is named in the error."""
    return PROFILES[check_choice(name, "audit profile", PROFILES)]


def as_settings(settings: AuditSettings | str | None, what: str = "settings") -> AuditSettings:
    """``settings`` as a record: an ``AuditSettings`` as it is, a profile name, or None for the default profile."""
    if settings is None:
        return CI
    if isinstance(settings, str):
        return settings_named(settings)
    if not isinstance(settings, AuditSettings):
        raise InvalidArgument(f"{what} must be an AuditSettings or a profile name ({', '.join(PROFILES)}), "
                              f"got {type(settings).__name__} {settings!r}")
    return settings
