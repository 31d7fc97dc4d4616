"""bench/verdicts.py - the verdict line of a target measured against an A/A
control, and the cost ratios of CPU per request, shared by bench/paired.sh
and bench/latency.sh.

A service's verdict: met at or under the limit; over it, "not resolved" while
the median stays inside the range its A/A control spread over in the same
run (the method cannot tell it from noise), else missed."""


import statistics


def verdict_line(what, rows, limit, aa_max, vfmt):
    """rows: (service, median value); aa_max: service -> the A/A control's
    highest value; vfmt: how a value is printed. Prints one Markdown line."""
    groups = {"met": [], "not resolved": [], "missed": []}
    for svc, v in rows:
        top = aa_max.get(svc)
        k = "met" if v <= limit else "not resolved" if top is not None and v <= top else "missed"
        groups[k].append("%s %s" % (svc, vfmt % v) + (" (A/A up to %s)" % (vfmt % top) if k == "not resolved" else ""))
    overall = "missed" if groups["missed"] else "not resolved" if groups["not resolved"] else "met"
    print("- %s: **%s** (%s)" % (what, overall, "; ".join("%s: %s" % (k, ", ".join(g)) for k, g in groups.items() if g)))


class CostRatios:
    """The B/A ratios of CPU per request, one per round, of each service's
    pairs: off:off2 gives the noise floor, off:dial9 the verdict."""

    def __init__(self):
        self.verdict, self.floor = [], []

    def cells(self, svc, pair, ratio):
        """ratio: the pair's per-round B/A. Returns the table's two cells,
        "**median** (min-max) | rounds B < A"."""
        m, lo, hi = statistics.median(ratio), min(ratio), max(ratio)
        if pair == "off:dial9":
            self.verdict.append((svc, m))
        elif pair == "off:off2":
            self.floor.append((svc, m, lo, hi))
        return "**%.4f** (%.4f-%.4f) | %d of %d" % (m, lo, hi, sum(1 for x in ratio if x < 1), len(ratio))

    def summary(self, what):
        """Prints the noise floor and the verdict of what (a cost ratio <= 1.01)."""
        if self.floor:
            print("- noise floor (off:off2, the same server twice): " +
                  ", ".join("%s %.4f (%.4f-%.4f)" % v for v in self.floor))
        if self.verdict:
            verdict_line(what, self.verdict, 1.01, {v[0]: v[3] for v in self.floor}, "%.4f")
