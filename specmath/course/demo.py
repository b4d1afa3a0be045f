"""``make demo``: run the whole course headless, a line per step as it goes, then one summary block.

The job, in order; everything it writes goes to ``_build/``, so ``git status`` stays clean:

1. execute every notebook (``notebooks/[0-9]*.ipynb``) in a fresh kernel, two at a time, into
   ``_build/executed/`` with every output (``specmath.course.execute``; ``make notebooks`` is the
   command that rewrites the committed notebooks);
2. regenerate the figures into ``_build/figures/``, except ``SLOW_FIGURES`` (minutes of sampling or
   timing real models; ``specmath figures`` makes them);
3. check every number the seed article states (``specmath.article``: the Chinese blog post
   ``ARTICLE_TITLE``, "From speculative decoding to simulating Rand7 with Rand5") against its exact value;
   a *contradicted* number is one of the article's own that the exact computation shows wrong, and the
   summary names each with the article's figure and the exact one;
4. prove every registered sampler lossless (``specmath.proofs``) and the speculative step for all p, q
   on 2-4 tokens (``specmath.speculative.symbolic_step``);
5. export the HTML pages and reveal.js slides into ``_build/html`` and ``_build/slides`` from the
   executed notebooks.

What the steps themselves print goes to ``_build/demo.log``; seconds per notebook to
``_build/timings.json``. Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p, q).
"""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

__all__ = ["SLOW_FIGURES", "run_demo", "DemoSummary", "Contradiction", "contradictions", "exact_text"]

#: figures that take minutes (a histogram of 6000 samples of a real model; timings, which also need a
#: quiet machine): ``specmath figures --only NAME`` makes them, the demo does not
SLOW_FIGURES = ("lm_first_token_histogram.png", "lm_timing.png")


@dataclass(frozen=True)
class Contradiction:
    """One of the article's numbers that its exact value contradicts."""

    statement: str  # what the article claims, in our words
    stated: str  # the figure as the article prints it
    exact: str  # the exact value, as ``exact_text`` writes it


def exact_text(value: Fraction, stated: str) -> str:
    """An exact value beside the number it is compared with (``stated``, as ``Claim.value`` holds it: "2.21",
    "0.3%"): ``2/625 = 0.32%`` for a percentage, ``5816/2625 = 2.216`` otherwise, one digit more than the
    article printed, so the difference shows."""
    value = Fraction(value)
    text = stated.strip()
    places = (len(text.rstrip("%").split(".")[1]) if "." in text else 0) + 1
    if text.endswith("%"):
        return f"{value} = {float(value * 100):.{places}f}%"
    return f"{value} = {float(value):.{places}f}"


def contradictions(rows: list[dict]) -> list[Contradiction]:
    """The rows of ``specmath.article.claims_table()`` that do not agree, each with its exact value written out."""
    from specmath.article import CLAIMS

    value = {c.key: c.value for c in CLAIMS}  # the stated number alone ("0.3%"), to write the exact one alike
    return [Contradiction(r["statement"], r["stated"], exact_text(r["exact_value"], value[r["key"]])) for r in rows if not r["agrees"]]


@dataclass
class DemoSummary:
    """What ``make demo`` did, for the one summary block."""

    notebooks: list[tuple[str, float]] = field(default_factory=list)  # (stem, seconds)
    figures: int = 0
    slow_figures: tuple[str, ...] = SLOW_FIGURES
    claims: int = 0
    claims_agree: int = 0
    contradicted: list[Contradiction] = field(default_factory=list)
    samplers: int = 0
    samplers_lossless: int = 0
    symbolic_cases: dict = field(default_factory=dict)  # tokens -> regions proved
    symbolic_lossless: bool = False
    pages: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.samplers_lossless == self.samplers and self.symbolic_lossless

    def block(self) -> str:
        from specmath.article import ARTICLE_TITLE, ARTICLE_TITLE_EN

        slow = ", ".join(f"{stem[:2]} {s:.0f}s" for stem, s in self.notebooks)
        cases = ", ".join(f"{n} tokens: {c}" for n, c in self.symbolic_cases.items())
        wrong = len(self.contradicted)
        lines = [
            "== specmath demo " + "=" * 43,
            f"notebooks run      {len(self.notebooks)} ({slow}), executed copies in _build/executed",
            f"figures written    {self.figures} in _build/figures ({len(self.slow_figures)} slow ones left to `specmath figures`)",
            f"the article        {ARTICLE_TITLE}, a blog post in Chinese",
            f"                   (\"{ARTICLE_TITLE_EN}\")",
            f"article numbers    {self.claims} checked against their exact values: {self.claims_agree} agree, {wrong} contradicted"
            + (f" (the article's own {'number is' if wrong == 1 else 'numbers are'} wrong):" if wrong else ""),
            *(f"                     {c.statement}: the article says {c.stated}, exact {c.exact}" for c in self.contradicted),
            f"samplers proved    {self.samplers_lossless} of {self.samplers} lossless (exact)",
            f"symbolic step      output == p for every p, q: {'proved' if self.symbolic_lossless else 'NOT proved'} ({cases} regions)",
            f"exports            {self.pages} pages: _build/html/index.html, _build/slides/index.html",
            f"details            _build/demo.log, timings in _build/timings.json; {self.seconds:.0f} s in all",
            "=" * 60,
        ]
        return "\n".join(lines)


@contextlib.contextmanager
def _into(log_path: Path):
    """What a step prints (its report lines, warnings) goes to the log, not the terminal."""
    with open(log_path, "a", encoding="utf-8") as log, contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        yield


def run_demo(root: str | Path = ".", build: str | Path = "_build", say=print) -> DemoSummary:
    """The whole job (see the module docstring); ``say`` gets a line per step as it goes; returns the summary."""
    from specmath.course.execute import run_notebooks

    root, start = Path(root), time.perf_counter()
    build = root / build
    build.mkdir(parents=True, exist_ok=True)
    summary = DemoSummary()
    log_path = build / "demo.log"
    log_path.write_text("", encoding="utf-8")

    def step(text: str) -> None:
        say(f"[{time.perf_counter() - start:5.0f} s] {text}")

    paths = sorted((root / "notebooks").glob("[0-9]*.ipynb"))
    step(f"executing {len(paths)} notebooks, two at a time, into {build / 'executed'}")
    executed = run_notebooks(paths, out_dir=build / "executed", workers=2, timings=build / "timings.json", kernel_log=log_path,
                             report=lambda e: step(f"  {e.stem} in {e.seconds:.1f} s"))
    summary.notebooks = [(e.stem, e.seconds) for e in executed]

    from specmath.article import claims_table
    from specmath.course.export import export_html, export_slides
    from specmath.figures import load_all, regenerate
    from specmath.proofs import VERIFIERS, verify
    from specmath.speculative.symbolic_step import prove_step_for_sizes

    quick = [n for n in load_all() if n not in SLOW_FIGURES]
    step(f"writing {len(quick)} figures into {build / 'figures'}")
    with _into(log_path):
        summary.figures = len(regenerate(build / "figures", quick))
    step("checking the article's numbers")
    with _into(log_path):
        rows = claims_table()
        summary.claims = len(rows)
        summary.claims_agree = sum(bool(r["agrees"]) for r in rows)
        summary.contradicted = contradictions(rows)
        for r in rows:
            print(f"claim {r['key']}: article {r['stated']}, exact {r['exact']}, {'ok' if r['agrees'] else 'WRONG'}")
    step(f"proving {len(VERIFIERS)} samplers, and the speculative step on 2-4 tokens symbolically")
    with _into(log_path):
        results = [verify(n) for n in VERIFIERS]
        summary.samplers = len(results)
        summary.samplers_lossless = sum(r.lossless for r in results)
        for r in results:
            print(r.report())
        proofs = prove_step_for_sizes((2, 3, 4))
        summary.symbolic_cases = {len(p.tokens): p.cases for p in proofs}
        summary.symbolic_lossless = all(p.lossless for p in proofs)
        for p in proofs:
            print(f"symbolic step, {len(p.tokens)} tokens: {p.cases} regions, lossless {p.lossless}, {p.seconds:.2f} s")
    step("exporting the HTML pages and the slides")
    with _into(log_path):
        written = [e.written for e in executed]
        summary.pages = len(export_html(written, build / "html")) + len(export_slides(written, build / "slides"))
    summary.seconds = time.perf_counter() - start
    return summary


def main() -> int:
    """Run the demo, a line per step, then the summary block; exit 1 if a proof failed."""
    summary = run_demo(say=lambda line: print(line, flush=True))
    print(summary.block())
    return 0 if summary.ok else 1


if __name__ == "__main__":
    sys.exit(main())
