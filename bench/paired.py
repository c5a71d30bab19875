# paired.py: the ratio of two modes' times that bench/report and
# bench/io-floor-report give, imported by both.
#
# The modes of one round run next to each other; rounds a few minutes
# apart may not run alike (this VM has run whole rounds a third slower
# than the ones before).  Such a drift cancels in a ratio of neighbours
# but not in a ratio of two medians, so a ratio of two modes is the
# median over the rounds of the one's time over the other's in the same
# round.  Times themselves stay medians.
#
# Whether a difference is more than the rounds' noise is a sign test over
# those per-round ratios: of n rounds where one mode ran faster or slower
# (none tied), how unlikely so uneven a split would be if each round were
# a coin toss.  It assumes nothing about how the times spread, which on
# this VM is far from normal; the price is that it needs rounds: under 6
# no split is unlikely enough at 5% (5 of 5 has a chance of 2/32).
#
# How far from a bar a median of per-round ratios may be is the same
# test turned round: the interval between the k-th smallest and the k-th
# largest ratio holds the true median unless k or more rounds all fell
# on one side of it, a chance of 2 * P(Binomial(n, 1/2) < k).  The
# widest k with that chance at most 5% gives a 95% interval that assumes
# nothing about the spread either: for 9 rounds the 2nd to the 8th
# ratio (96.1%), for 15 the 4th to the 12th (96.5%), for 5 or fewer
# none.
import math
import statistics


def ratios(rows_a, rows_b, field):
    """A's FIELD over B's in the same round, for each round both ran (rows
    are dicts with a "round" key), in A's order."""
    b = {r["round"]: float(r[field]) for r in rows_b}
    return [float(r[field]) / b[r["round"]] for r in rows_a if r["round"] in b]


def ratio(rows_a, rows_b, field):
    """The median over the rounds of A's FIELD over B's in the same
    round."""
    return statistics.median(ratios(rows_a, rows_b, field))


def median_interval(values, level=0.95):
    """The distribution-free interval of the median of VALUES (above) at
    confidence LEVEL or more: (low, high), or None when there are too
    few values for it."""
    xs = sorted(values)
    n = len(xs)
    k, tail = 0, 0
    while k < n // 2:
        tail += math.comb(n, k)
        if 2 * tail / 2 ** n > 1 - level:
            break
        k += 1
    if k == 0:
        return None
    return xs[k - 1], xs[n - k]


def sign_test(values, threshold=1.0):
    """The two-sided sign test of VALUES against THRESHOLD: the chance of
    a split of the values above and below it at least as uneven as
    theirs, were each as likely above as below (values equal to it do
    not count).  1.0 when none is left."""
    above = sum(v > threshold for v in values)
    below = sum(v < threshold for v in values)
    n = above + below
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(above, below) + 1))
    return min(1.0, 2 * tail / 2 ** n)
