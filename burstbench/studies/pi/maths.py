"""The exact partial sum of Leibniz's series that both backends' results must equal."""

from __future__ import annotations

import math


class ExactSums:
    """4 * sum of (-1)^k / (2k+1) for k < N, summed directly term by term (no closed form).

    Terms are added in blocks (numpy's pairwise sum of each block, then math.fsum of the
    block sums), so the result is exact to a few ulps; sums for growing N reuse the blocks
    already added, so a whole grid costs one pass over its largest N.
    """

    BLOCK = 1 << 20

    def __init__(self):
        self.n = 0
        self.blocks: list[float] = []
        self.cache: dict[int, float] = {}

    def __call__(self, terms: int) -> float:
        if terms in self.cache:
            return self.cache[terms]
        if terms < self.n:
            self.n, self.blocks = 0, []
        while self.n < terms:
            end = min(terms, self.n + self.BLOCK)
            self.blocks.append(_block_sum(self.n, end))
            self.n = end
        value = 4.0 * math.fsum(self.blocks)
        self.cache[terms] = value
        return value


def _block_sum(start: int, end: int) -> float:
    try:
        import numpy as np  # matplotlib's dependency: always installed with the harness
    except ImportError:
        return math.fsum((-1.0 if k & 1 else 1.0) / (2.0 * k + 1.0) for k in range(start, end))
    k = np.arange(start, end, dtype=np.float64)
    terms = 1.0 / (2.0 * k + 1.0)
    if start & 1:
        terms[::2] *= -1.0
    else:
        terms[1::2] *= -1.0
    return float(terms.sum())
