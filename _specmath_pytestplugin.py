"""specmath's pytest plugin, as small as pytest needs it: the options, the marker, the fixture, one line.

Registered as the ``pytest11`` entry point ``specmath`` (pyproject.toml), so every suite that has
specmath installed gets it. When pytest starts it imports only pytest and the standard library:
a run that uses no specmath audit pays nothing for it. specmath itself (``specmath.pytest_plugin``)
is imported when an option below is given, or when a collected test uses the fixture or the marker
(the pattern of Hypothesis' ``_hypothesis_pytestplugin``, a module outside its package for the
same reason).

* ``--specmath-profile NAME`` (ini ``specmath_profile``): the audit profile of ``specmath.settings``,
  dev, ci (the default) or thorough;
* ``--specmath-n N``, ``--specmath-seed S`` (ini ``specmath_n``, ``specmath_seed``): the profile's
  rounds per case and seed, changed; the command line wins over the ini file, and a profile given on
  the command line drops the ini file's n and seed with its profile;
* ``@pytest.mark.specmath(n=..., seed=..., sequential=...)``: one test's settings changed
  (``AuditSettings`` names); the marker alone marks a test as an audit;
* the fixture ``specmath_audit``: ``specmath_audit(sampler, **options)`` is
  ``specmath.testing.assert_sampler_lossless(sampler, settings=<this test's>, **options)`` (an ``n``
  or ``settings`` passed in the call wins), ``specmath_audit.tree(...)`` the tree assertion; every
  test that uses it carries the marker, so ``-m "not specmath"`` leaves the audits out;
* one line, ``specmath: audits run profile ci, n = 20000 rounds per case, seed 0; ...``, printed after
  collection (under xdist, in the summary) only when a test of the run carries the marker.
"""

from __future__ import annotations

import pytest

#: the profiles ``--specmath-profile`` offers, in its help (``specmath.settings.PROFILES``, checked by a test)
PROFILE_NAMES = ("dev", "ci", "thorough")
#: the ini options, also the command line options' destinations
INI_OPTIONS = ("specmath_profile", "specmath_n", "specmath_seed")


def _specmath():
    """``specmath.pytest_plugin``, imported on first use."""
    import specmath.pytest_plugin

    return specmath.pytest_plugin


def _profile(text: str) -> str:
    return _specmath().profile_option(text)


def _rounds(text: str) -> int:
    return _specmath().rounds_option(text)


def _seed(text: str) -> int:
    return _specmath().seed_option(text)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("specmath", "specmath sampler audits")
    names = ", ".join(PROFILE_NAMES)
    group.addoption("--specmath-profile", type=_profile, default=None, metavar="NAME",
                    help=f"audit profile of the specmath_audit fixture: {names} (default: ini specmath_profile, else ci)")
    group.addoption("--specmath-n", type=_rounds, default=None, metavar="N",
                    help="rounds per case of the specmath_audit fixture (default: ini specmath_n, else the profile's)")
    group.addoption("--specmath-seed", type=_seed, default=None, metavar="S",
                    help="seed of the drafts and of the sampler's generator (default: ini specmath_seed, else the profile's)")
    parser.addini("specmath_profile", f"audit profile of the specmath_audit fixture ({names}; default ci)", default="")
    parser.addini("specmath_n", "rounds per case of the specmath_audit fixture (default: the profile's)", default="")
    parser.addini("specmath_seed", "seed of the specmath_audit fixture (default: the profile's)", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "specmath(**settings): audits a sampler with specmath (the specmath_audit "
                                       "fixture), with these AuditSettings changed; -m 'not specmath' leaves them out")
    if any(config.getini(name) for name in INI_OPTIONS):
        _specmath().run_settings(config)  # a bad ini value stops the run before any test
    config.pluginmanager.register(_Audits(config), "specmath-audits")


#: what an xdist worker adds to a marked test's reports, so that its controller knows the run holds audits
AUDIT_PROPERTY = ("specmath", "audit")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "specmath_audit" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.specmath)
    if hasattr(config, "workerinput"):  # an xdist worker: its reports carry the news (keywords hold parameter ids too)
        for item in items:
            if item.get_closest_marker("specmath") is not None:
                item.user_properties.append(AUDIT_PROPERTY)


class _Audits:
    """Whether this run holds audits, and the line that says how strong they are, written once when it does."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.marked = False  # a test of the run carries the marker (collected here, or reported by an xdist worker)
        self.shown = False

    @pytest.hookimpl(trylast=True)  # after every plugin's own collection_modifyitems has marked its tests
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.marked = any(item.get_closest_marker("specmath") is not None for item in items)

    def pytest_report_collectionfinish(self) -> str | None:
        if not self.marked:
            return None
        self.shown = True
        return _specmath().settings_line(self.config)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # under xdist the controller collects nothing: it learns of the audits from the workers' reports
        self.marked = self.marked or AUDIT_PROPERTY in [tuple(p) for p in report.user_properties]

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.marked and not self.shown:
            terminalreporter.write_line(_specmath().settings_line(self.config))


@pytest.fixture
def specmath_audit(request: pytest.FixtureRequest):
    """Audit a sampler at this test's strength: ``specmath_audit(my_round)``, ``specmath_audit(my_rounds, batched=True)``."""
    plugin = _specmath()
    return plugin.SamplerAudit(plugin.settings_of_test(request.config, request.node.get_closest_marker("specmath")))
