# paired.py: the ratio of two modes' times that bench/report and
# bench/io-floor-report give, imported by both.
#
# The modes of one round run next to each other; rounds a few minutes
# apart may not run alike (this VM has run whole rounds a third slower
# than the ones before).  Such a drift cancels in a ratio of neighbours
# but not in a ratio of two medians, so a ratio of two modes is the
# median over the rounds of the one's time over the other's in the same
# round.  Times themselves stay medians.
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
