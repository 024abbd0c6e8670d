"""95 % intervals for pass rates: Wilson's score interval for one rate, Newcombe's hybrid score interval
(his method 10, 1998) for the difference of two rates measured on the same tasks.

Both stay inside [0, 1] (resp. [-1, 1]) and behave at 0 % and 100 %, where the textbook Wald interval
collapses to a point; that is why they are used for small suites. Pure, stdlib only.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson's score interval for `k` passes in `n`; None without data."""
    if n <= 0:
        return None
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low = 0.0 if k == 0 else max(0.0, centre - half)
    return low, 1.0 if k == n else min(1.0, centre + half)


def paired_diff_interval(
    both: int, only_a: int, only_b: int, neither: int, z: float = Z95
) -> tuple[float, float] | None:
    """Newcombe's interval for rate(A) − rate(B) on paired outcomes (counts of the 2×2 table)."""
    n = both + only_a + only_b + neither
    if n <= 0:
        return None
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    l1, u1 = wilson_interval(both + only_a, n, z) or (0.0, 1.0)
    l2, u2 = wilson_interval(both + only_b, n, z) or (0.0, 1.0)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    # Newcombe's phi, with his guard when concordance dominates (AD > BC: AD - BC - n/2, not below 0), so
    # a table without discordant pairs still gets an interval rather than a point.
    cross = float(both * neither - only_a * only_b)
    if cross > 0:
        cross = max(cross - n / 2, 0.0)
    phi = cross / math.sqrt(margins) if margins else 0.0
    theta = p1 - p2
    low = theta - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = theta + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return max(-1.0, low), min(1.0, high)
