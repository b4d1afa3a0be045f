"""The tree figures draw the exact quantities their titles claim (read back from the drawn artists).

Every drawn number is float() of an exact Fraction, which rounds correctly, so it is compared with ==
to float() of the Fraction computed here.
"""

from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from specmath.bugzoo.typical_acceptance import typical_tv_grid  # noqa: E402
from specmath.plots import tree_plots  # noqa: E402
from specmath.speculative.tree import CHILDREN, TreeShape, accepted_per_round  # noqa: E402
from specmath.speculative.tree_examples import EQUAL_NODE_SHAPES, TREE_DRAFT, TREE_TARGET  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_tree_accepted_bars_are_the_exact_expected_accepted_tokens_per_series():
    ax = tree_plots.plot_tree_accepted().axes[0]
    heights = [patch.get_height() for patch in ax.patches]
    expected = []
    for _, children, verifier in tree_plots.ACCEPTED_SERIES:
        shapes = [replace(s, children=children) for s in EQUAL_NODE_SHAPES]
        accepted = accepted_per_round(TREE_TARGET, TREE_DRAFT, (), shapes, verifier)
        expected += [float(accepted[s]) for s in shapes]
    assert heights == expected
    assert all(s.nodes == 6 for s in EQUAL_NODE_SHAPES)


def test_tree_rule_tv_cells_are_the_exact_tv_table():
    ax = tree_plots.plot_tree_rule_tv().axes[0]
    rows, table = tree_plots.rule_tv_table()
    drawn = ax.get_images()[0].get_array()
    for i, r in enumerate(rows):
        for j, c in enumerate(CHILDREN):
            assert drawn[i, j] == (0.0 if table[r, c] is None else float(table[r, c]))
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("0 exactly") == sum(1 for v in table.values() if v == 0)
    assert any("refuses" in t for t in texts)


def test_typical_acceptance_heatmaps_are_the_exact_tv_grids():
    fig = tree_plots.plot_typical_acceptance_tv()
    for ax, (shape, greedy) in zip(fig.axes, ((TreeShape((1, 1)), False), (TreeShape((2, 2), "top-k"), True)), strict=True):
        grid = typical_tv_grid(TREE_TARGET, TREE_DRAFT, (), shape, 3, tree_plots.TYPICAL_EPSILONS, tree_plots.TYPICAL_DELTAS,
                               greedy_first=greedy)
        drawn = ax.get_images()[0].get_array()
        for i, e in enumerate(tree_plots.TYPICAL_EPSILONS):
            for j, d in enumerate(tree_plots.TYPICAL_DELTAS):
                assert drawn[i, j] == float(grid[e, d])
